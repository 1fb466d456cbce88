package magpie

import "github.com/magpie-go/magpie/forkjoin"

// ForInit is For with a state per piece, rayon's for_each_init: the range
// is cut into pieces as for For, init makes one state for each piece, and
// body(state, i) is called for every i in [0, n) with the state of the
// piece that holds i. It matches the sequential
//
//	state := init()
//	for i := range n { body(state, i) }
//
// when body's effect does not depend on which state it gets (a scratch
// buffer, a random generator, a per-piece cache). A state is never used by
// two calls at the same time: body may write to it without locks. One
// state sees a contiguous run of increasing indices; it may pass from the
// caller's goroutine to a worker between two of them (never back and
// forth), so T should not be tied to a goroutine. Inside the pool, a
// piece's state is made by init on the worker that runs the piece, so
// that small states of different workers do not share cache lines
// (TestForInit, TestPieceStateMadeWhereItRuns). T is usually a pointer,
// since body gets a copy.
//
// How often init is called: never when n is 0; once when the loop runs on
// the caller (a Grain covering n, a pool of one worker or a closed one,
// or a short loop the probe keeps on the caller, from outside or inside a
// task); once more
// per chunk when the task probe shares a short loop inside a task with idle
// workers, and once more when a short loop started on a worker with slack
// queued hands its rest to the probe (slackgate.go); otherwise once per
// piece: with Grain(g) about n/g times (each piece holds at most g
// indices), adaptively once plus once per split, and lazy splitting splits
// only when a worker is idle, typically a few times per worker (TestForInit
// checks never, once, and at most g indices per state). init must be safe
// to call concurrently. r, the options and panics (in init as in body) are
// as for For. ForInit panics if init
// or body is nil or n is negative.
func ForInit[T any](r forkjoin.Runner, n int, init func() T, body func(state T, i int), opts ...Option) {
	checkRunner("ForInit", r)
	switch {
	case init == nil:
		panic("magpie: ForInit called with a nil init")
	case body == nil:
		panic("magpie: ForInit called with a nil body")
	}
	checkN("ForInit", n)
	if n == 0 {
		return
	}
	fresh := freshState(init)
	grain := collectOptions(opts).grain
	k := 0
	if smallInline(r, n, grain) {
		if n <= slackBatch {
			forInitSeq(fresh(), n, body) // the plain loop: no slack check (slackgate.go)
			return
		}
		// Inline while the slack lasts (slackgate.go), with one state; the
		// rest, if any, below, with states of its own.
		st := fresh()
		if k = inlineWhileSlack(r, n, grain, func(lo, hi int) { forInitLoop(st, lo, hi, body) }); k == n {
			return
		}
	}
	forInitRange(r, k, n, fresh, body, grain)
}

// forInitRange is ForInit's loop over [k, n) through the engine.
func forInitRange[T any](r forkjoin.Runner, k, n int, fresh func() T, body func(state T, i int), grain int) {
	runRange(r, n-k, &rangeSpec[T]{
		leaf: func(st T, lo, hi int) T {
			forInitLoop(st, k+lo, k+hi, body)
			return st
		},
		newZero: fresh,
		grain:   grain,
	})
}

// MapInit is Map with a state per piece, rayon's map_init: it returns a
// new slice holding f(state, x) for every element x of in, in the order of
// in, where state is the one init made for the piece that holds x. It
// matches the sequential
//
//	state := init()
//	for i, x := range in { out[i] = f(state, x) }
//
// when f's result does not depend on which state it gets. States, and how
// often init is called, are as for ForInit (never for an empty in). r, the
// options and panics are as for For. MapInit panics if init or f is nil.
func MapInit[E, R, T any](r forkjoin.Runner, in []E, init func() T, f func(state T, x E) R, opts ...Option) []R {
	checkRunner("MapInit", r)
	switch {
	case init == nil:
		panic("magpie: MapInit called with a nil init")
	case f == nil:
		panic("magpie: MapInit called with a nil function")
	}
	out := make([]R, len(in))
	if len(in) == 0 {
		return out
	}
	fresh := freshState(init)
	grain := collectOptions(opts).grain
	k := 0
	if smallInline(r, len(in), grain) {
		if len(in) <= slackBatch {
			mapInitSeq(fresh(), in, out, f) // the plain loop: no slack check (slackgate.go)
			return out
		}
		// Inline while the slack lasts (slackgate.go), with one state; the
		// rest, if any, below, with states of its own.
		st := fresh()
		if k = inlineWhileSlack(r, len(in), grain, func(lo, hi int) { mapInitLoop(st, in[lo:hi], out[lo:hi], f) }); k == len(in) {
			return out
		}
	}
	mapInitRange(r, in[k:], out[k:], fresh, f, grain)
	return out
}

// mapInitRange is MapInit's loop through the engine.
func mapInitRange[E, R, T any](r forkjoin.Runner, in []E, out []R, fresh func() T, f func(state T, x E) R, grain int) {
	runRange(r, len(in), &rangeSpec[T]{
		leaf: func(st T, lo, hi int) T {
			mapInitLoop(st, in[lo:hi], out[lo:hi], f)
			return st
		},
		newZero: fresh,
		grain:   grain,
	})
}

// freshState wraps init so that its panic reaches the caller as a
// *forkjoin.PanicError wherever the piece started, as body's does.
func freshState[T any](init func() T) func() T {
	return func() T {
		defer rethrow()
		return init()
	}
}

// forInitSeq and mapInitSeq are the loops of ForInit and MapInit over at
// most slackBatch indices on the caller, with a panic turned into a
// *forkjoin.PanicError as on the pool.
func forInitSeq[T any](st T, n int, body func(T, int)) {
	defer rethrow()
	forInitLoop(st, 0, n, body)
}

func mapInitSeq[E, R, T any](st T, in []E, out []R, f func(T, E) R) {
	defer rethrow()
	mapInitLoop(st, in, out, f)
}

// forInitLoop and mapInitLoop are the leaves of ForInit and MapInit, on a
// worker or on the caller (inlineWhileSlack turns a panic into a
// *forkjoin.PanicError there).
func forInitLoop[T any](st T, lo, hi int, body func(T, int)) {
	for i := lo; i < hi; i++ {
		body(st, i)
	}
}

func mapInitLoop[E, R, T any](st T, in []E, out []R, f func(T, E) R) {
	out = out[:len(in)]
	for i, x := range in {
		out[i] = f(st, x)
	}
}
