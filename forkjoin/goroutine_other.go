//go:build !gc || !(amd64 || arm64) || magpie_stackkey

package forkjoin

// goroutineKey identifies the calling goroutine among the live ones. On
// ports without goroutine_asm.go's getg it is the goroutine id parsed from
// runtime.Stack (stackGoid): exact as well, but it costs a stack trace, so
// callingWorker's gate (no worker is running a task) matters more here.
// The key is the whole 64-bit id, on 32-bit ports too: ids are never
// reused, but cut to 32 bits one would name a worker again after 2^32
// goroutines (TestGoroutineKeyHoldsEveryGoroutineID).
//
// The build tag magpie_stackkey selects this file on amd64 and arm64 too,
// so that CI can run the fallback's tests on a machine that cannot execute
// binaries of another port (.ci/run).
func goroutineKey() uint64 { return stackGoid() }
