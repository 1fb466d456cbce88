package magpie

import (
	"sync/atomic"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/refuse"
	"github.com/magpie-go/magpie/task"
)

// The range-splitting engine shared by For, ForRange, Map, Reduce, Filter
// and the numeric helpers. Every helper is a reduction over the index range
// [0, n): a leaf folds a subrange [lo, hi) sequentially into an accumulator,
// and combine joins the accumulators of adjacent subranges left to right.
// For and Map use an empty accumulator (struct{}) and no combine.
//
// How a call is run, cheapest first:
//
//  1. Inline on the caller's goroutine, with no pool round trip, when the
//     pool has one worker or is closed (parallelism), when a fixed Grain
//     covers n, or, without a Grain, when n <= SequentialThreshold and the
//     caller is a task's *Worker with slack queued (Surplus() >= 1,
//     slackQueued): every worker is busy, or has the caller's queued tasks
//     to steal. The helper decides this before it calls runRange
//     (smallInline) and re-checks the slack between batches
//     (slackgate.go); runRange itself never inlines by slack
//     (TestRunRangeDoesNotInlineBySlack).
//  1b. Without a Grain, n <= SequentialThreshold, from inside a task
//     otherwise (a *Worker whose deque is empty or with a worker idle, or
//     a *Pool from a worker's goroutine): the task probe (probetask.go).
//     The caller runs the loop in batches, registered with the watcher;
//     a loop still running after a tick is shared with helper tasks that
//     idle workers run, claiming chunks with the caller.
//  2. By default, called from outside the pool (a *Pool or nil), the probe
//     (probe.go): the caller runs the iterations itself, in batches it
//     claims from a cursor, and the parallel decision is made by time, not
//     by count. A short loop (n <= SequentialThreshold) reads no clock:
//     it is registered with the watcher (watcher.go), a goroutine that
//     hands whatever the caller has not claimed yet to the pool once the
//     loop has run for a tick (probeBudget), even while the caller is
//     inside an index. A longer loop reads the clock between batches and
//     hands the rest to the pool itself once it has run probeBudget, about
//     the cost of the hand-over. A loop that finishes within the budget
//     never touches the pool; a long one loses about the budget.
//  3. On the pool, lazy binary splitting (Tzannes, Barua, Vishkin, "Lazy
//     Binary Splitting", PPoPP 2010): a range task runs a chunk of
//     iterations, then checks Worker.Surplus; if idle thieves outnumber the
//     tasks queued on its deque it splits the remaining range in half and
//     forks the upper half (task.InvokeBoth with a typed task: no closure
//     and no allocation per split unless the half is stolen); otherwise it
//     runs the next chunk. Splits therefore happen where and when a worker is
//     idle, including at the end of the loop, which keeps the workers
//     balanced without tuning. Chunks grow geometrically while no thief is
//     idle, but never beyond 1/8 of the remaining range, so the end of a
//     loop is still checked often.
//
// With Grain(g) the engine instead halves the range eagerly down to pieces
// of at most g iterations (no probe, no surplus test): the classic fixed
// cutoff, for iterations of known cost.
//
// Early exit. A spec may carry a rangeLimit, a bound shared by every piece
// of one call that only goes down: the iterations at or above it are no
// longer needed (ForErr lowers it to 0 at the first error, IndexFunc to the
// index of a match). Before each leaf, each split and each probe batch the
// engine compares the piece's start with it, and a piece that starts at or
// above it returns its accumulator without running anything: no new leaf,
// no new split, no hand-over to the pool. A leaf that may run long checks
// the bound itself between iterations. Helpers without a limit pay one nil
// test per chunk.

// SequentialThreshold is the number of iterations (elements) at or below
// which a helper without a Grain option treats a loop as short. A short
// loop starts on the caller, without reading the clock, and goes parallel
// only if it is still running after about 50 µs (the probe's budget, one
// to two ticks of the watcher): 100 iterations of a millisecond run on
// every worker, 100 of a nanosecond on the caller. That holds from outside
// the pool (the rest goes to the pool: TestShortLoopGoesParallel) and from
// inside a task, with the *Worker or with a *Pool from a worker's
// goroutine (idle workers join the loop: TestShortLoopInsideTaskGoesParallel).
// One exception inside a task: a *Worker that has tasks queued on its
// deque for the idle workers (Worker.Surplus() >= 1, the engine's own test
// for having enough parallel slack) runs a short loop on itself, with no
// probe, so that fine-grained loops nested in a busy computation cost
// nothing extra; past 16 indices it re-checks the slack between batches
// and hands the rest to the probe once the slack is gone (slackgate.go;
// TestShortLoopSlackGoneGoesParallel). A longer loop measures its iterations with the clock as it
// goes (outside) or goes to the engine (inside). To split a short loop of
// expensive iterations from the start, pass a Grain smaller than n, such
// as Grain(1), or use Do.
const SequentialThreshold = 1024

// lbsChunkDiv bounds a chunk to 1/lbsChunkDiv of the remaining range.
// Chunks start at two iterations and double after every check that finds
// no idle thief, so a loop of cheap iterations soon calls its leaf (and, for
// ForRange, the user's body) on large pieces, while a loop of expensive
// iterations is checked after its first few. The bound keeps at most an
// eighth of a worker's remaining range out of reach when a thief turns up,
// which bounds the imbalance at the end of the loop.
const lbsChunkDiv = 8

// lbsSurplus is the surplus below which a range task splits: Surplus() < 1
// means the worker's deque is empty or some worker is idle with nothing to
// steal, the condition of lazy binary splitting ("split when the local
// queue is empty").
const lbsSurplus = 1

// probeFirst is the size of the probe's first batch; probeGrowth multiplies
// the number of iterations done between two clock reads; probeBudget is the
// time the caller spends on a loop by itself before it hands the rest to
// the pool, about what the hand-over costs.
const (
	probeFirst  = 16
	probeGrowth = 8
	probeBudget = 50 * time.Microsecond
)

// epoch is the origin of the monotonic clock read by the probe:
// time.Since(epoch) is a single monotonic clock read.
var epoch = time.Now()

// rangeSpec describes one helper call to the engine: the leaf that folds a
// subrange, the combine of adjacent results (nil when A carries nothing),
// the zero accumulator a new subrange starts from, and the fixed grain
// (0: adaptive).
type rangeSpec[A any] struct {
	leaf    func(acc A, lo, hi int) A
	leafOn  func(r forkjoin.Runner, acc A, lo, hi int) A // replaces leaf if set: ForW, ForRangeW (nested.go)
	combine func(a, b A) A
	zero    A
	newZero func() A // if set, each piece starts from a value of its own (ReduceWith)
	grain   int
	limit   *rangeLimit   // if set, pieces at or above it are skipped (early exit)
	probe   probeState[A] // the caller's probe from outside the pool (probe.go)
	tprobe  taskProbe[A]  // the caller's probe from inside a task (probetask.go)
}

// rangeLimit is the early-exit bound of one call: no iteration at index
// limit or above is needed any more. It starts at n (everything needed) and
// only goes down, so a piece or an iteration skipped because it was at or
// above the bound would also be at or above every later value.
type rangeLimit struct{ v atomic.Int64 }

// newRangeLimit returns a limit that skips nothing of [0, n).
func newRangeLimit(n int) *rangeLimit {
	l := new(rangeLimit)
	l.v.Store(int64(n))
	return l
}

// reached reports whether iteration i, and with it everything above, is no
// longer needed. A nil limit is never reached.
func (l *rangeLimit) reached(i int) bool {
	return l != nil && int64(i) >= l.v.Load()
}

// lower moves the bound down to i, unless it already is at or below i.
func (l *rangeLimit) lower(i int) {
	for {
		cur := l.v.Load()
		if int64(i) >= cur || l.v.CompareAndSwap(cur, int64(i)) {
			return
		}
	}
}

// load returns the current bound.
func (l *rangeLimit) load() int { return int(l.v.Load()) }

// runLeaf runs the leaf on [lo, hi) from acc. r is the Runner for the
// parallel work nested in it: the worker running the piece, or the caller's
// Runner when the caller runs it itself.
func (s *rangeSpec[A]) runLeaf(r forkjoin.Runner, acc A, lo, hi int) A {
	if s.leafOn != nil {
		return s.leafOn(r, acc, lo, hi)
	}
	return s.leaf(acc, lo, hi)
}

// start returns the accumulator a piece starts from.
func (s *rangeSpec[A]) start() A {
	if s.newZero != nil {
		return s.newZero()
	}
	return s.zero
}

// rangeTask is the typed task of the engine: the subrange [lo, hi), whose
// first leaf starts from acc. It is small and copied by value into the
// recycled join node, so splitting allocates nothing.
type rangeTask[A any] struct {
	spec   *rangeSpec[A]
	lo, hi int
	acc    A
}

// Compute runs the subrange on w: eager halving with a fixed grain, lazy
// binary splitting otherwise. The result is the left fold of the subrange
// grouped by leaf: leaves fold left to right, results combine in order.
func (t rangeTask[A]) Compute(w *forkjoin.Worker) A {
	s := t.spec
	lo, hi, acc := t.lo, t.hi, t.acc
	if s.grain > 0 {
		if s.limit.reached(lo) {
			return acc
		}
		if hi-lo <= s.grain {
			return s.runLeaf(w, acc, lo, hi)
		}
		return t.split(w, lo+(hi-lo)/2)
	}
	chunk := 1
	for {
		if s.limit.reached(lo) {
			return acc
		}
		chunk = min(chunk*2, max((hi-lo)/lbsChunkDiv, 1))
		if hi-lo <= chunk {
			return s.runLeaf(w, acc, lo, hi)
		}
		if w.Surplus() < lbsSurplus {
			return rangeTask[A]{s, lo, hi, acc}.split(w, lo+(hi-lo)/2)
		}
		acc = s.runLeaf(w, acc, lo, lo+chunk)
		lo += chunk
	}
}

// split runs [t.lo, mid) here, starting from t.acc, and [mid, t.hi) as a
// forked task starting from zero, then combines the two in order.
func (t rangeTask[A]) split(w *forkjoin.Worker, mid int) A {
	s := t.spec
	a, b := task.InvokeBoth[A, A](w,
		rangeTask[A]{s, t.lo, mid, t.acc},
		freshRangeTask[A]{s, mid, t.hi})
	if s.combine == nil {
		return a
	}
	return s.combine(a, b)
}

// freshRangeTask is the forked half of a split: rangeTask's subrange, whose
// first accumulator is made (s.start(): ForInit's and MapInit's init,
// ReduceWith's newAcc) by the worker that runs the half, not by the one
// that forked it. A state made by the forking worker comes from that
// worker's allocation cache, next to the states it keeps for itself: small
// states of two workers then shared cache lines, and every write to one
// invalidated the other's (ForInit formatting into a 32-byte buffer per
// piece did 1.5 times the seq loop's work on 2 workers; docs/design.md,
// "Per-piece state"). TestPieceStateMadeWhereItRuns.
type freshRangeTask[A any] struct {
	spec   *rangeSpec[A]
	lo, hi int
}

// Compute makes the half's first accumulator here and runs the half.
func (t freshRangeTask[A]) Compute(w *forkjoin.Worker) A {
	return rangeTask[A]{t.spec, t.lo, t.hi, t.spec.start()}.Compute(w)
}

// runRange runs a helper over [0, n), choosing between the inline, probing
// and pool paths described at the top of this file. n must be >= 0.
func runRange[A any](r forkjoin.Runner, n int, s *rangeSpec[A]) A {
	if n == 0 {
		return s.start()
	}
	if w, ok := r.(*forkjoin.Worker); ok && w != nil {
		// Inside a task: a short loop goes to the task probe, a longer
		// one to the engine on w, which splits when a worker is idle.
		// A short loop is not run inline here because w has slack: every
		// caller with no grain has asked that already (smallInline) and
		// runs the loop inline while the slack lasts (slackgate.go), so
		// a loop that gets here found none, or lost it at k and hands
		// [k, n) over. Slack seen again now (an idle worker woke: the
		// surplus counts idle workers) would run the rest inline to its
		// end, unchecked (TestShortLoopSlackGoneGoesParallel/runRange).
		if runInline(parallelism(w), n, s.grain) {
			return inlineLeaf(s, w, s.start(), 0, n)
		}
		if s.grain == 0 && n <= SequentialThreshold {
			return taskProbeRun(s, w, w, w.Pool(), n)
		}
		return computeOn(w, s, n)
	}
	p := runnerPool(r)
	if runInline(parallelism(r), n, s.grain) {
		return inlineLeaf(s, r, s.start(), 0, n)
	}
	if s.grain == 0 {
		return probeRun(s, r, p, n)
	}
	res, refused := refuse.Run(p, func(w *forkjoin.Worker) A {
		return rangeTask[A]{s, 0, n, s.start()}.Compute(w)
	})
	if !refused {
		return res
	}
	// p was closed after parallelism looked, and ran nothing: the caller
	// runs the loop (TestHelpersRacingClose).
	return inlineLeaf(s, r, s.start(), 0, n)
}

// computeOn runs the whole range as a task on w, the caller's worker. A
// panic in a leaf run before any split (lazy splitting runs a first chunk
// when the worker has a surplus) would reach the caller raw, where one
// passed through a join arrives as a *forkjoin.PanicError: rethrow makes it
// one on every path (TestPanicInsideTaskIsPanicError).
func computeOn[A any](w *forkjoin.Worker, s *rangeSpec[A], n int) A {
	defer rethrow()
	return rangeTask[A]{s, 0, n, s.start()}.Compute(w)
}

// smallInline reports whether a helper runs a loop of n iterations on r
// sequentially on the caller, before it builds anything for the engine,
// so that this path is a plain loop with no allocation and no clock read:
// n <= 1; a fixed grain that covers n; or, without a grain, n at most
// SequentialThreshold when the probe is not wanted: on a pool of one
// worker or a closed one (parallelism), or inside a task whose *Worker
// has slack queued (slackQueued).
// Any other short loop goes to the engine, whose probe runs it on the
// caller unless it lasts (probe.go from outside, probetask.go inside).
func smallInline(r forkjoin.Runner, n, grain int) bool {
	switch {
	case grain > 0:
		return n <= grain
	case n <= 1:
		return true
	case n > SequentialThreshold:
		return false
	}
	if parallelism(r) <= 1 {
		return true
	}
	w, ok := r.(*forkjoin.Worker)
	return ok && slackQueued(w)
}

// slackQueued reports whether w, inside a task, has parallel slack queued:
// Surplus() >= lbsSurplus, more tasks on its deque than idle workers to
// steal them, the test by which the engine stops splitting. A short loop
// then runs inline on w, with no probe: every worker is busy or has w's
// queued tasks to take, so a helper could not start, and nested
// fine-grained loops pay nothing (probetask.go). Otherwise (w's deque
// empty, or a worker idle) the loop goes to the task probe.
func slackQueued(w *forkjoin.Worker) bool {
	return w.Surplus() >= lbsSurplus
}

// shortByCount reports whether a loop of n iterations is short by its
// count alone: a grain that covers n, or no grain and n at most
// SequentialThreshold. Scan, which does not probe, runs such a loop on the
// caller.
func shortByCount(n, grain int) bool {
	if grain > 0 {
		return n <= grain
	}
	return n <= SequentialThreshold
}

// rethrow, deferred around code that runs user functions on the caller's
// goroutine (a loop run inline, the sorts that take a comparator), turns a
// panic into a *forkjoin.PanicError, as a stolen task's panic reaches the
// joiner, so that what a caller recovers does not depend on where the
// function ran.
func rethrow() {
	if v := recover(); v != nil {
		panic(forkjoin.CapturePanic(v))
	}
}

// runInline reports whether the engine runs a loop of n iterations
// sequentially on the caller whoever calls: n <= 1, a pool of a single
// worker or a closed one (par is parallelism(r)), or a grain that covers n.
func runInline(par, n, grain int) bool {
	return n <= 1 || par <= 1 || (grain > 0 && n <= grain)
}

// inlineLeaf runs a leaf on the caller's goroutine (r is the caller's
// Runner) and turns a panic into a *forkjoin.PanicError, the type a panic
// has when the same loop runs on the pool, so that what a caller recovers
// does not depend on n.
func inlineLeaf[A any](s *rangeSpec[A], r forkjoin.Runner, acc A, lo, hi int) A {
	defer func() {
		if v := recover(); v != nil {
			panic(forkjoin.CapturePanic(v))
		}
	}()
	return s.runLeaf(r, acc, lo, hi)
}

// runnerPool returns the pool a non-worker Runner designates: the *Pool
// itself, or Default() for nil (a nil *Pool included).
func runnerPool(r forkjoin.Runner) *forkjoin.Pool {
	if p, ok := r.(*forkjoin.Pool); ok && p != nil {
		return p
	}
	return forkjoin.Default()
}

// parallelism is the number of workers a helper called with r may use:
// the Parallelism of r's pool, or 1 if r is a closed *Pool. It is the one
// test by which a helper runs on the caller because its pool is closed:
// every inline decision (runRange, smallInline, scanInline, the window of
// ForSeq and MapSeq) asks parallelism(r) <= 1, so a closed pool runs the
// helper on the calling goroutine, sequentially, with the sequential
// result, the open pool's wherever that does not depend on the cut
// (TestClosedPoolRunsEveryHelperOnCaller; docs/design.md, "Messages"). A *Worker
// counts its pool's workers even while the pool closes: a closing pool
// still runs its tasks' forks. A pool closed after this test refuses the
// helper's first task instead, and the caller runs the work then
// (refuse.Run in runRange, runOnPool, runRest and scanOn, Execute in
// ForSeq and the task probe, runSort in internal/sorts;
// TestHelpersRacingClose).
func parallelism(r forkjoin.Runner) int {
	if w, ok := r.(*forkjoin.Worker); ok {
		return w.Pool().Parallelism()
	}
	p := runnerPool(r)
	if p.Closed() {
		return 1
	}
	return p.Parallelism()
}

// checkRunner panics if r holds a nil *forkjoin.Worker, with the message
// every function of packages forkjoin, task and magpie gives for one (api
// names the helper). Every helper calls it first, before its small-input
// path, so that a typed nil is never read as Default() on one path and
// rejected on another (TestNilWorkerOneMessage).
//
// A closed pool is not refused here: a helper is a computation, not a
// submission, and runs on its caller what the pool refuses (parallelism).
// Until review rev26 a closed pool made every helper panic with
// forkjoin.ErrClosed before it ran anything, which failed a loop whose
// pool closed while it ran as soon as its body called a helper with that
// pool (TestRev26ForWBodyGetsClosedPool; docs/design.md, "Messages").
func checkRunner(api string, r forkjoin.Runner) {
	if w, ok := r.(*forkjoin.Worker); ok && w == nil {
		panic("magpie: " + api + " called with a nil *Worker")
	}
}

// checkN panics with a message naming api if n is negative.
func checkN(api string, n int) {
	if n < 0 {
		panic("magpie: " + api + " called with a negative n")
	}
}
