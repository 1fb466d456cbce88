// Package magpie runs loops, maps, reductions and sorts over slices in
// parallel, on top of a fork-join pool with work stealing.
//
// The common use is one line that replaces a sequential loop:
//
//	out := magpie.Map(nil, in, parse)                    // out[i] = parse(in[i])
//	magpie.For(nil, len(xs), func(i int) { xs[i] *= 2 }) // each i once
//	total := magpie.Sum(nil, xs)
//	magpie.Sort(nil, xs)                                 // like slices.Sort
//
// Every helper takes a forkjoin.Runner first: nil (or a nil
// *forkjoin.Pool) for the shared forkjoin.Default() pool, a *forkjoin.Pool
// of your own, or, from inside a task, its *forkjoin.Worker, so that the
// helper runs as part of that task's computation instead of submitting new
// work to the pool. A nil *forkjoin.Worker is a mistake, never read as
// Default(): every helper panics with "magpie: <helper> called with a nil
// *Worker", whatever its input (TestNilPoolMeansDefault,
// TestNilWorkerOneMessage). A helper never fails because its pool is
// closed: given a pool closed before the call, or closing during it, it
// runs what the pool refuses on the calling goroutine, sequentially, every
// index once, and returns the sequential result, the one an open pool
// gives wherever that does not depend on how the work is cut (sums of
// floats may differ in the last bits, and the unstable sorts may order
// equal elements otherwise, as their docs allow); a helper is a
// computation, not a submission (TestClosedPoolRunsEveryHelperOnCaller,
// TestHelpersRacingClose, TestRev29HelpersRacingCloseRunEachIndexOnce,
// TestRev26ForWBodyGetsClosedPool, TestRev29ClosedPoolUnstableSortsPermute).
// A runtime.Goexit in a function run there unwinds the caller, as on a
// one-worker pool, where on a worker it would arrive as a
// *forkjoin.PanicError holding forkjoin.ErrGoexit
// (TestRev29GoexitOnCallerUnwindsCaller). Only the runtime's entry points
// refuse a closed pool, with forkjoin.ErrClosed: forkjoin's Invoke, Run,
// Submit and Execute and their variants, Broadcast, ScopeOn and Then,
// package task's, and pipeline.Run (TestAfterClose,
// TestBroadcastClosedPool, TestScopeOnClosedPool,
// TestThenAcrossPoolsOneClosed, TestSubmitPanicAndClosedPool,
// TestExecuteClosedPool, TestClosedPoolFailsTheRun).
// Results equal those of the sequential code: Map and Filter keep the order, Reduce with
// an associative combine equals the left fold, the sorts order like
// package slices (TestMap, TestFilterCount, TestReduceKeepsOrder,
// TestSortRunners, TestOrderSensitiveHelpersMatchSequential). A panic in a
// function passed to a helper reaches the caller as a *forkjoin.PanicError,
// and the pool survives it (TestForPanics, TestNewHelpersPanics,
// TestMapReducePanics).
//
// # Granularity
//
// By default the helpers split work adaptively, with no tuning: lazy binary
// splitting, where a worker forks half of its remaining range only when
// another worker is idle. Grain(n) sets a fixed cutoff instead. Whether a
// loop goes parallel at all is decided by time, not by its length: called
// from outside the pool, a loop starts on the caller's goroutine and is
// handed to the pool only once it has run longer than the hand-over costs
// (about 50 µs), even while the caller is inside an iteration
// (TestShortLoopGoesParallel), so 100 iterations of a millisecond run on
// every worker and 100 of a nanosecond stay on the caller (timing, so
// measured, not tested: BenchmarkShortLoopSlow, BenchmarkShortLoopCheap).
// Inside a task the rule is the same: a loop of at most
// SequentialThreshold iterations starts on the worker and idle workers
// join it once it has run about 50 µs (unless the worker has tasks queued
// for them, when it runs on the worker: TestShortLoopInsideTaskGoesParallel,
// TestShortLoopInsideTaskSlackInline); Grain(1) or Do splits it from the
// start.
//
// # Related packages
//
// Package forkjoin is the runtime: pools, workers, Fork/Join with helping,
// Submit and Invoke. Package task offers typed recursive tasks
// (RecursiveTask, RecursiveAction) and the cutoff policies for writing your
// own divide-and-conquer algorithms.
package magpie
