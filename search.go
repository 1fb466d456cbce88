package magpie

import (
	"sync/atomic"

	"github.com/magpie-go/magpie/forkjoin"
)

// IndexFunc returns the lowest index i with pred(s[i]) true, or -1 if
// there is none, as slices.IndexFunc does, calling pred in parallel on r.
//
// Pieces of s run in parallel, so pred may be called on elements after the
// first match; but once a match at index i is known, no piece that starts
// above i starts or splits any more, and a running one stops at its next
// element (at most one more call per worker), while pieces below i run on,
// since a lower match may still be there (TestSearchMatchesSequential,
// TestIndexFuncFirstMatchWhenLaterFinishesFirst, TestSearchStopsOnceDecided). pred must be safe to call
// concurrently. r, the options, the sequential threshold and panics are as
// for For; a panic in pred stops the whole search. IndexFunc panics if pred
// is nil.
func IndexFunc[S ~[]E, E any](r forkjoin.Runner, s S, pred func(E) bool, opts ...Option) int {
	checkRunner("IndexFunc", r)
	if pred == nil {
		panic("magpie: IndexFunc called with a nil predicate")
	}
	grain := collectOptions(opts).grain
	k := 0
	if smallInline(r, len(s), grain) {
		if len(s) <= slackBatch {
			return indexSeq(s, pred, true) // the plain loop: no slack check (slackgate.go)
		}
		// Inline while the slack lasts (slackgate.go): a match there is
		// the first; otherwise the rest is searched below.
		i, at := indexWhileSlack(r, s, pred, true, grain)
		if i >= 0 || at == len(s) {
			return i
		}
		k = at
	}
	lim := newRangeLimit(len(s) - k)
	search(r, s[k:], pred, true, false, grain, lim)
	if i := lim.load(); i < len(s)-k {
		return k + i
	}
	return -1
}

// ContainsFunc reports whether pred(e) is true for some element e of s, as
// slices.ContainsFunc does, calling pred in parallel on r. Once a match is
// found anywhere, every piece stops: no piece starts or splits any more,
// and a running one stops at its next element (at most one more call per
// worker: TestSearchStopsOnceDecided, TestSearchAllMatchBound). pred must
// be safe to call concurrently. r, the options, the
// sequential threshold and panics are as for For. ContainsFunc panics if
// pred is nil.
func ContainsFunc[S ~[]E, E any](r forkjoin.Runner, s S, pred func(E) bool, opts ...Option) bool {
	checkRunner("ContainsFunc", r)
	return exists("ContainsFunc", r, s, pred, true, opts)
}

// Any reports whether pred(e) is true for some element e of s: it is
// ContainsFunc, under the name that pairs with All. False for an empty s.
func Any[S ~[]E, E any](r forkjoin.Runner, s S, pred func(E) bool, opts ...Option) bool {
	checkRunner("Any", r)
	return exists("Any", r, s, pred, true, opts)
}

// All reports whether pred(e) is true for every element e of s (true for
// an empty s), the sequential
//
//	for _, e := range s {
//		if !pred(e) {
//			return false
//		}
//	}
//	return true
//
// calling pred in parallel on r. It stops at the first element found false,
// as ContainsFunc stops at the first found true. pred must be safe to call
// concurrently. r, the options, the sequential threshold and panics are as
// for For. All panics if pred is nil.
func All[S ~[]E, E any](r forkjoin.Runner, s S, pred func(E) bool, opts ...Option) bool {
	checkRunner("All", r)
	return !exists("All", r, s, pred, false, opts)
}

// exists reports whether pred(e) == want for some element e of s: Any and
// ContainsFunc look for a true, All for a false.
func exists[S ~[]E, E any](api string, r forkjoin.Runner, s S, pred func(E) bool, want bool, opts []Option) bool {
	if pred == nil {
		panic("magpie: " + api + " called with a nil predicate")
	}
	grain := collectOptions(opts).grain
	if smallInline(r, len(s), grain) {
		if len(s) <= slackBatch {
			return indexSeq(s, pred, want) >= 0 // the plain loop: no slack check (slackgate.go)
		}
		// Inline while the slack lasts (slackgate.go); the rest, if any,
		// below.
		i, k := indexWhileSlack(r, s, pred, want, grain)
		if i >= 0 || k == len(s) {
			return i >= 0
		}
		s = s[k:]
	}
	lim := newRangeLimit(len(s))
	search(r, s, pred, want, true, grain, lim)
	// A match lowers the bound to 0 (a panic does too, but is re-raised
	// before this line), and s is not empty here.
	return lim.load() < len(s)
}

// search runs the engine over s looking for an element with pred(e) ==
// want. A match at i lowers lim to i (IndexFunc: only the pieces above i
// are no longer needed), or to 0 if anywhere is enough: every index below
// the final bound has then been tested, since the bound only goes down and
// a piece or an iteration is skipped only at or above it, so the final
// bound is the lowest match. The tests call it with a limit of their own to
// watch the bound.
func search[E any](r forkjoin.Runner, s []E, pred func(E) bool, want, anywhere bool, grain int, lim *rangeLimit) {
	runRange(r, len(s), &rangeSpec[struct{}]{
		leaf: func(_ struct{}, lo, hi int) struct{} {
			scan(s, lo, hi, pred, want, anywhere, lim)
			return struct{}{}
		},
		grain: grain,
		limit: lim,
	})
}

// scan is search's leaf: it tests s[lo:hi] in order, checking the bound
// before every element, so that a long piece stops within one call of the
// decision. The loop itself is scanFirst, out of line and without a
// deferred closure, so that its variables stay in registers.
func scan[E any](s []E, lo, hi int, pred func(E) bool, want, anywhere bool, lim *rangeLimit) {
	finished := false
	defer func() {
		if !finished {
			// A panic ends the search: nothing more to look for.
			lim.lower(0)
			if v := recover(); v != nil {
				panic(forkjoin.CapturePanic(v))
			}
		}
	}()
	if i := scanFirst(s[lo:hi], lo, pred, want, &lim.v); i >= 0 {
		if anywhere {
			lim.lower(0)
		} else {
			lim.lower(i)
		}
	}
	finished = true
}

// scanFirst returns base+j for the first j with pred(s[j]) == want, or -1
// if there is none or if the bound reaches base+j first: it loads the bound
// (one plain load on amd64 and arm64) before every call of pred. It ranges
// over s rather than indexing, with no closure capturing its variables:
// written as scan's indexed loop with a deferred closure, the same loop
// cost 19 ms against 14 ms over 10M int64 on one core (see docs/design.md,
// "Early exit").
func scanFirst[E any](s []E, base int, pred func(E) bool, want bool, bound *atomic.Int64) int {
	for j, x := range s {
		if int64(base+j) >= bound.Load() {
			return -1
		}
		if pred(x) == want {
			return base + j
		}
	}
	return -1
}

// indexWhileSlack is the small-input path of the search helpers: s run
// inline while the slack lasts (inlineWhileSlack). It returns the index of
// the first element with pred(e) == want, or -1 and the first index not
// run (len(s), or where the slack was gone: the caller searches the rest).
// Once a match is found the later batches run nothing.
func indexWhileSlack[E any](r forkjoin.Runner, s []E, pred func(E) bool, want bool, grain int) (found, k int) {
	found = -1
	k = inlineWhileSlack(r, len(s), grain, func(lo, hi int) {
		if found < 0 {
			if i := indexLoop(s[lo:hi], pred, want); i >= 0 {
				found = lo + i
			}
		}
	})
	return found, k
}

// indexSeq is indexLoop over at most slackBatch elements on the caller,
// with a panic turned into a *forkjoin.PanicError as on the pool.
func indexSeq[E any](s []E, pred func(E) bool, want bool) int {
	defer rethrow()
	return indexLoop(s, pred, want)
}

// indexLoop returns the index of the first element of s with pred(e) ==
// want, or -1.
func indexLoop[E any](s []E, pred func(E) bool, want bool) int {
	for i, x := range s {
		if pred(x) == want {
			return i
		}
	}
	return -1
}
