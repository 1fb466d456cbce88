//go:build gc && !magpie_stackkey

// The calling goroutine's identity on arm64: see goroutine_asm.go.
// gc only: gccgo has its own assembler syntax, and goroutine_other.go
// (its build constraint the opposite of goroutine_asm.go's) serves it.

#include "textflag.h"

// func getg() uintptr
TEXT ·getg(SB), NOSPLIT, $0-8
	// The runtime keeps the current g in register g (R28) at all times.
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET
