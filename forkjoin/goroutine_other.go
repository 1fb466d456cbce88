//go:build !gc || !(amd64 || arm64)

package forkjoin

// goroutineKey identifies the calling goroutine among the live ones. On
// ports without goroutine_asm.go's getg it is the goroutine id parsed from
// runtime.Stack (stackGoid): exact as well, but it costs a stack trace, so
// callingWorker's gate (no worker is running a task) matters more here.
func goroutineKey() uintptr { return uintptr(stackGoid()) }
