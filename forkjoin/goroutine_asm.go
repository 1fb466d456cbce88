//go:build gc && (amd64 || arm64) && !magpie_stackkey

package forkjoin

// getg returns the address of the calling goroutine's runtime g, the
// structure the runtime keeps for each goroutine (in assembly: Go code has
// no access to it). It costs a register or thread-local load.
//
// The address identifies the goroutine among the live ones: a g is never
// moved (the collector does not move heap objects) and is reused only for
// a goroutine started after this one has exited. Workers register their
// key for exactly their own lifetime (worker.go: registered first thing in
// loop, unregistered on every way out of it, Goexit included), so a key
// found in the registry is the caller's own worker, never a dead
// goroutine's (TestGoroutineKeyIdentifiesLiveGoroutines).
//
// The address is only compared, never dereferenced, so its type is uintptr:
// nothing keeps the g alive through it, and nothing needs to.
func getg() uintptr

// goroutineKey identifies the calling goroutine among the live ones.
func goroutineKey() uint64 { return uint64(getg()) }
