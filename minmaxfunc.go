package magpie

import "github.com/magpie-go/magpie/forkjoin"

// MinFunc returns the first minimal element of s according to cmp, found
// in parallel on r: the result of slices.MinFunc, which returns the first
// of several minimal elements (TestMinMaxFunc, TestMinMaxFuncRandom). cmp
// must be a consistent ordering (as for
// slices.SortFunc) and safe to call concurrently. Like slices.MinFunc it
// panics if s is empty. r, the options, the sequential threshold and
// panics are as for For. MinFunc panics if cmp is nil.
func MinFunc[S ~[]E, E any](r forkjoin.Runner, s S, cmp func(a, b E) int, opts ...Option) E {
	checkRunner("MinFunc", r)
	checkBestArgs("MinFunc", len(s), cmp != nil)
	return s[bestIndex(r, s, cmp, false, opts)]
}

// MaxFunc returns the first maximal element of s according to cmp, found
// in parallel on r: the result of slices.MaxFunc, which returns the first
// of several maximal elements. cmp, panics, r and the options are as for
// MinFunc.
func MaxFunc[S ~[]E, E any](r forkjoin.Runner, s S, cmp func(a, b E) int, opts ...Option) E {
	checkRunner("MaxFunc", r)
	checkBestArgs("MaxFunc", len(s), cmp != nil)
	return s[bestIndex(r, s, cmp, true, opts)]
}

func checkBestArgs(api string, n int, haveCmp bool) {
	if !haveCmp {
		panic("magpie: " + api + " called with a nil cmp")
	}
	if n == 0 {
		panic("magpie: " + api + " called with an empty list")
	}
}

// bestIndex returns the index of the first minimal (max: maximal) element
// of the non-empty s. The accumulator is an index, -1 for a piece that has
// seen nothing, so that E is never copied between pieces. An element
// replaces the best so far only if it is strictly better, in a piece and
// when two pieces combine (the right one wins only if strictly better), so
// the first of equal elements wins whatever the cut, as in the
// sequential loop of slices.MinFunc, and cmp is always called as
// cmp(later, earlier), as that loop calls it.
func bestIndex[S ~[]E, E any](r forkjoin.Runner, s S, cmp func(a, b E) int, max bool, opts []Option) int {
	grain := collectOptions(opts).grain
	// rest finds the best of s[k:] through the engine, as an index into s.
	rest := func(k int) int {
		return runRange(r, len(s)-k, &rangeSpec[int]{
			leaf:    func(best, lo, hi int) int { return bestSeq(s, k+lo, k+hi, best, cmp, max) },
			combine: func(a, b int) int { return bestOf(s, a, b, cmp, max) },
			zero:    -1,
			grain:   grain,
		})
	}
	if smallInline(r, len(s), grain) {
		if len(s) <= slackBatch {
			return bestSeqCaught(s, cmp, max) // the plain loop: no slack check (slackgate.go)
		}
		// Inline while the slack lasts (slackgate.go); the rest's best
		// wins only if strictly better.
		return reduceWhileSlack(r, len(s), grain, -1, func(best, lo, hi int) int {
			return bestSeq(s, lo, hi, best, cmp, max)
		}, rest, func(a, b int) int { return bestOf(s, a, b, cmp, max) })
	}
	return rest(0)
}

// bestOf combines the bests a and b of two adjacent pieces, a's first
// (-1: a piece that has seen nothing): b wins only if strictly better.
func bestOf[S ~[]E, E any](s S, a, b int, cmp func(a, b E) int, max bool) int {
	if a < 0 {
		return b
	}
	if b >= 0 && better(cmp(s[b], s[a]), max) {
		return b
	}
	return a
}

// better reports whether cmp's result c says the later element beats the
// best so far.
func better(c int, max bool) bool {
	if max {
		return c > 0
	}
	return c < 0
}

func bestSeq[S ~[]E, E any](s S, lo, hi, best int, cmp func(a, b E) int, max bool) int {
	if best < 0 {
		best, lo = lo, lo+1
	}
	m := s[best]
	for i := lo; i < hi; i++ {
		if better(cmp(s[i], m), max) {
			best, m = i, s[i]
		}
	}
	return best
}

// bestSeqCaught is bestSeq over at most slackBatch elements on the caller,
// with a panic turned into a *forkjoin.PanicError as on the pool.
func bestSeqCaught[S ~[]E, E any](s S, cmp func(a, b E) int, max bool) int {
	defer rethrow()
	return bestSeq(s, 0, len(s), -1, cmp, max)
}
