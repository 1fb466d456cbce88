package magpie

import (
	"strconv"

	"github.com/magpie-go/magpie/forkjoin"
)

// Do calls every function of fns, in parallel on r, and returns when all
// have returned. Unlike For it applies no sequential threshold: each
// function is taken to be worth a task of its own (the functions are
// split in halves down to single ones, as with Grain(1)), so Do(r, f, g)
// runs f and g on two workers when both are free (TestDoRunsInParallel). A
// single function runs on the caller's goroutine (TestDoSingleRunsOnCaller).
//
// r is a *forkjoin.Pool, a *forkjoin.Worker or nil (forkjoin.Default()).
// A panic in a function reaches the caller as a *forkjoin.PanicError once
// the other functions have stopped; the pool survives (TestDoPanics,
// TestHelpersStopWritingBeforeReturn). Do panics if a function is nil.
func Do(r forkjoin.Runner, fns ...func()) {
	checkRunner("Do", r)
	for i, f := range fns {
		if f == nil {
			panic("magpie: Do called with a nil function at index " + strconv.Itoa(i))
		}
	}
	s := &rangeSpec[struct{}]{
		leaf: func(_ struct{}, lo, hi int) struct{} {
			for _, f := range fns[lo:hi] {
				f()
			}
			return struct{}{}
		},
		grain: 1,
	}
	runRange(r, len(fns), s)
}
