//go:build gc && !magpie_stackkey

// The calling goroutine's identity on amd64: see goroutine_asm.go.
// gc only: gccgo has its own assembler syntax, and goroutine_other.go
// (its build constraint the opposite of goroutine_asm.go's) serves it.

#include "textflag.h"

// func getg() uintptr
TEXT ·getg(SB), NOSPLIT, $0-8
	// An ABI0 function (as every assembly function outside the runtime is)
	// finds the current g in thread-local storage, where the runtime keeps
	// it on every OS this port supports.
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
