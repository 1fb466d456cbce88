package magpie

import "github.com/magpie-go/magpie/forkjoin"

// Nested parallelism: ForW and ForRangeW hand their body the Runner for the
// parallel work nested in it.
//
// A body that calls a helper with the outer Runner (a *Pool, or nil) runs
// on one of that pool's workers, and the helper must find out which:
// forkjoin looks the calling goroutine up in its registry of workers (a few
// nanoseconds on amd64 and arm64, a stack trace on other ports; see
// docs/design.md, "Invoke and Close from inside the pool"). The Runner
// handed to the body is the *forkjoin.Worker already running it, so a
// nested call skips the lookup (TestForWRunnerIsTheRunningWorker).
// BenchmarkNestedFor (bench/nested_test.go) compares the two.

// ForW is For whose body also receives a Runner for nested parallel work:
// the *forkjoin.Worker running the index, or r itself when the caller runs
// it (a short loop, the probe's batches from outside or inside a task, a
// one-worker or closed pool: TestForWRunnerIsTheRunningWorker,
// TestRev26ForWBodyGetsClosedPool). Pass it to the
// helpers, forkjoin and task called from body instead
// of the outer Runner: the result is the same, without a lookup of the
// calling goroutine's worker per call. It is the sequential
//
//	for i := range n { body(r, i) }
//
// r, the options, the sequential threshold and panics are as for For.
// ForW panics if body is nil or n is negative.
//
// On a pool closed while the loop runs, the indices the caller runs itself
// get the closed pool, and the helpers body calls with it run on body's
// goroutine, as every helper does on a closed pool: the loop finishes
// (TestRev26ForWBodyGetsClosedPool; review rev26 found it stopped part way
// when such a call panicked with forkjoin.ErrClosed).
func ForW(r forkjoin.Runner, n int, body func(r forkjoin.Runner, i int), opts ...Option) {
	if body == nil {
		checkRunner("ForW", r)
		panic("magpie: ForW called with a nil body")
	}
	forRangeW("ForW", r, n, func(r forkjoin.Runner, lo, hi int) {
		for i := lo; i < hi; i++ {
			body(r, i)
		}
	}, opts)
}

// ForRangeW is ForRange whose body also receives a Runner for nested
// parallel work, as for ForW. It is the sequential body(r, 0, n), split
// into subranges.
//
// r, the options, the sequential threshold and panics are as for ForRange.
// ForRangeW panics if body is nil or n is negative.
func ForRangeW(r forkjoin.Runner, n int, body func(r forkjoin.Runner, lo, hi int), opts ...Option) {
	if body == nil {
		checkRunner("ForRangeW", r)
		panic("magpie: ForRangeW called with a nil body")
	}
	forRangeW("ForRangeW", r, n, body, opts)
}

// forRangeW runs ForW and ForRangeW once their body is known not to be
// nil; api names the caller in messages.
func forRangeW(api string, r forkjoin.Runner, n int, body func(r forkjoin.Runner, lo, hi int), opts []Option) {
	checkRunner(api, r)
	checkN(api, n)
	grain := collectOptions(opts).grain
	k := 0
	if smallInline(r, n, grain) {
		if n == 0 {
			return
		}
		// Inline while the slack lasts (slackgate.go), handing body the
		// caller's Runner; the rest, if any, below.
		if k = inlineWhileSlack(r, n, grain, func(lo, hi int) { body(r, lo, hi) }); k == n {
			return
		}
	}
	forRangeWFrom(r, k, n, body, grain)
}

// forRangeWFrom is forRangeW's loop over [k, n) through the engine.
func forRangeWFrom(r forkjoin.Runner, k, n int, body func(r forkjoin.Runner, lo, hi int), grain int) {
	runRange(r, n-k, &rangeSpec[struct{}]{
		leafOn: func(r forkjoin.Runner, _ struct{}, lo, hi int) struct{} {
			body(r, k+lo, k+hi)
			return struct{}{}
		},
		grain: grain,
	})
}
