package magpie

import (
	"sync"

	"github.com/magpie-go/magpie/forkjoin"
)

// For calls body(i) for every i in [0, n), in parallel on r, and returns
// when all calls have returned. The calls run in no particular order and
// concurrently, so body must be safe for that (typically each i writes its
// own element).
//
// r is a *forkjoin.Pool, a *forkjoin.Worker (from inside a task: the loop
// runs as part of that task's computation) or nil for forkjoin.Default().
// Without options the range is split adaptively (lazy binary splitting).
// Called from outside the pool, the loop starts on the caller's goroutine
// and goes to the pool once it has run longer than handing it over costs
// (about 50 µs), whatever n: 100 iterations of a millisecond run on every
// worker, 100 of a nanosecond on the caller. Inside a task, a loop of at
// most SequentialThreshold iterations is decided by time too: it starts on
// the worker, and once it has run a tick of the probe (50 to 100 µs) idle
// workers join it, even while the worker is inside an iteration; it runs
// on the worker without the probe when the worker has tasks queued for
// the idle workers to steal (see SequentialThreshold). Grain(g) splits the range into pieces of at most g iterations from the
// start; Grain(1) makes every iteration a task.
//
// To nest helpers, call them inside body with the pool, not with an outer
// *Worker: body may run on any worker, and a call with a *Pool from one of
// that pool's own workers runs in the worker's computation (ForW hands
// body the Runner directly).
//
// A panic in body reaches the caller as a *forkjoin.PanicError once the
// other iterations in flight have stopped; the pool survives (TestForPanics,
// TestHelpersStopWritingBeforeReturn). For panics if body is nil or n is
// negative (TestForNilBody, TestNegativeN).
//
// For calls body through a function value once per index, which the
// compiler cannot inline: for a body of a few nanoseconds (out[i] = in[i]*k)
// that call costs as much as the work, and ForRange, whose loop is the
// caller's own code, runs the same loop faster (how much faster, measured:
// docs/benchmarks.md, "Reduce and For against ForRange").
func For(r forkjoin.Runner, n int, body func(i int), opts ...Option) {
	checkRunner("For", r)
	if body == nil {
		panic("magpie: For called with a nil body")
	}
	checkN("For", n)
	grain := collectOptions(opts).grain
	lo := 0
	if smallInline(r, n, grain) {
		// Inline while the slack lasts (slackgate.go).
		if lo = inlineWhileSlack(r, n, grain, func(lo, hi int) { forBody(body, lo, hi) }); lo == n {
			return
		}
		whole := body
		body = func(i int) { whole(lo + i) }
	}
	s := forSpecs.Get().(*forSpec)
	s.body, s.grain = body, grain
	runRange(r, n-lo, &s.rangeSpec)
	s.body = nil
	forSpecs.Put(s) // not after a panic: a spec is reused only once its loop has returned
}

// forSpec is For's engine spec, recycled through forSpecs so that a short
// loop from outside the pool, which goes to the probe, allocates nothing
// in the steady state: the leaf is a method value made once per spec, and
// body is set per call. A spec is put back only once runRange has
// returned, when no task of its loop runs any more; a watcher that still
// holds its probe record finds the cursor closed or claims from the next
// loop (the invariant of probe.go).
type forSpec struct {
	rangeSpec[struct{}]
	body func(i int)
}

var forSpecs = sync.Pool{New: func() any {
	s := new(forSpec)
	s.leaf = s.runBody
	return s
}}

// runBody is forSpec's leaf: body on every index of [lo, hi).
func (s *forSpec) runBody(_ struct{}, lo, hi int) struct{} {
	forBody(s.body, lo, hi)
	return struct{}{}
}

// forBody calls body on every index of [lo, hi).
func forBody(body func(i int), lo, hi int) {
	for i := lo; i < hi; i++ {
		body(i)
	}
}

// ForRange calls body on disjoint subranges [lo, hi) that together cover
// [0, n), in parallel on r, and returns when all calls have returned. It is
// For for cheap iterations: the loop over a subrange is the caller's own
// code, so the per-index cost is a plain loop step rather than a function
// call. Subranges are never empty (TestForRange); how many there are and
// how large depends on the splitting (adaptive by default, at most g
// indices with Grain(g)).
//
// r, the options, the sequential threshold and panics are as for For.
// ForRange panics if body is nil or n is negative.
func ForRange(r forkjoin.Runner, n int, body func(lo, hi int), opts ...Option) {
	checkRunner("ForRange", r)
	if body == nil {
		panic("magpie: ForRange called with a nil body")
	}
	checkN("ForRange", n)
	grain := collectOptions(opts).grain
	if smallInline(r, n, grain) {
		if n == 0 {
			return
		}
		// Inline while the slack lasts (slackgate.go).
		k := inlineWhileSlack(r, n, grain, body)
		if k == n {
			return
		}
		runRange(r, n-k, rangeBodySpec(func(lo, hi int) { body(k+lo, k+hi) }, grain))
		return
	}
	runRange(r, n, rangeBodySpec(body, grain))
}

// rangeBodySpec is the engine's spec for a body called on whole subranges,
// with nothing to reduce.
func rangeBodySpec(body func(lo, hi int), grain int) *rangeSpec[struct{}] {
	return &rangeSpec[struct{}]{
		leaf: func(_ struct{}, lo, hi int) struct{} {
			body(lo, hi)
			return struct{}{}
		},
		grain: grain,
	}
}
