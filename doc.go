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
// TestNilWorkerOneMessage). Results equal
// those of the sequential code: Map and Filter keep the order, Reduce with
// an associative combine equals the left fold, the sorts order like
// package slices. A panic in a function passed to a helper reaches the
// caller as a *forkjoin.PanicError, and the pool survives it.
//
// # Granularity
//
// By default the helpers split work adaptively, with no tuning: lazy binary
// splitting, where a worker forks half of its remaining range only when
// another worker is idle. Grain(n) sets a fixed cutoff instead. A loop of at
// most SequentialThreshold iterations runs sequentially on the caller's
// goroutine (a pool round trip costs more than such a loop when the
// iterations are cheap): pass Grain(1) to parallelize a short loop of
// expensive iterations, or use Do. Longer loops called from outside the
// pool are started on the caller too, and handed to the pool only if they
// run longer than the hand-over costs (tens of microseconds).
//
// # Related packages
//
// Package forkjoin is the runtime: pools, workers, Fork/Join with helping,
// Submit and Invoke. Package task offers typed recursive tasks
// (RecursiveTask, RecursiveAction) and the cutoff policies for writing your
// own divide-and-conquer algorithms.
package magpie
