// The calling goroutine's identity on arm64: see goroutine_asm.go.

#include "textflag.h"

// func getg() uintptr
TEXT ·getg(SB), NOSPLIT, $0-8
	// The runtime keeps the current g in register g (R28) at all times.
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET
