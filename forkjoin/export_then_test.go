package forkjoin

import (
	"runtime"
	"sync/atomic"
)

// Hooks for the external tests of then.go: a bare latch with its callback
// registration, and the stack depth at which a Future's callbacks run.

// TestLatch is a latch alone, for the exactly-once stress test of onSet.
type TestLatch struct{ l latch }

// Set sets the latch (once).
func (t *TestLatch) Set() { t.l.set() }

// OnSet registers fn to run once the latch is set, or runs it now if it is
// set already, as the continuations do.
func (t *TestLatch) OnSet(fn func()) {
	cb := func(*firing) { fn() }
	if !t.l.onSet(cb, nil) {
		fireNow(cb)
	}
}

// StackDepthWhenDone registers a callback on f's latch that stores into
// depth the number of frames on the stack it runs on (up to 4096).
func StackDepthWhenDone[T any](f *Future[T], depth *atomic.Int64) {
	checkChainable(f, "StackDepthWhenDone")
	cb := func(*firing) {
		pcs := make([]uintptr, 4096)
		depth.Store(int64(runtime.Callers(0, pcs)))
	}
	if !f.c.latch.onSet(cb, nil) {
		fireNow(cb)
	}
}
