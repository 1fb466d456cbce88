// The calling goroutine's identity on amd64: see goroutine_asm.go.

#include "textflag.h"

// func getg() uintptr
TEXT ·getg(SB), NOSPLIT, $0-8
	// An ABI0 function (as every assembly function outside the runtime is)
	// finds the current g in thread-local storage, where the runtime keeps
	// it on every OS this port supports.
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
