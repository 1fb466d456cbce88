package magpie

import (
	"cmp"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/sorts"
)

// Parallel sorting: the public functions. They check their arguments, turn
// the options into a grain and an in-place flag, make a comparator's panic
// leave as a *forkjoin.PanicError, and call the algorithms of
// internal/sorts (its package comment says which sort runs when, and why).
// A slice of fewer than two elements returns before the options are read.

// Sort sorts s in increasing order, in parallel on r (a *forkjoin.Pool,
// the *forkjoin.Worker of the calling task, or nil for forkjoin.Default()).
// The result is the one slices.Sort gives: for floating-point types NaNs
// come first, ordered as by cmp.Less (TestSortRunners; internal/sorts
// TestSortRadixIntegerTypes, TestSortRadixFloats).
//
// Slices of integers (any kind, named types included) and of floats with
// at least 4096 elements are sorted by a parallel radix sort, which
// allocates a scratch buffer of len(s) elements for the duration of the
// call; the InPlace option avoids it (and sorts them as strings are
// sorted, by quicksort, in O(log n) stack: TestSortMemoryAsDocumented,
// TestSortRadixInPlace). Integers come out bit for bit
// as slices.Sort leaves them. For floats, where slices.Sort leaves
// elements that compare equal in an unspecified order, the radix sort
// puts -0.0 before +0.0 and orders NaNs by their bits (the NaNs first,
// then -Inf ... +Inf): the result is a sorted permutation of s that
// depends only on its contents (TestSortSignedZerosWhereDocumented,
// TestSortRadixFloats).
//
// Strings, and integers and floats with InPlace or below 4096 elements,
// are sorted by a parallel pattern-defeating quicksort that allocates no
// buffer: beyond O(log n) stack, a few small objects per call whatever
// len(s) (TestSortMemoryAsDocumented); it is not stable (which can only be seen
// on -0.0 and +0.0, and on NaNs). Without options its leaves are chosen
// adaptively; Grain(n) sets the size below which a subrange is sorted
// sequentially. Grain does not affect the radix sort.
func Sort[S ~[]E, E cmp.Ordered](r forkjoin.Runner, s S, opts ...Option) {
	checkRunner("Sort", r)
	if len(s) < 2 {
		return
	}
	o := collectOptions(opts)
	sorts.Sort(r, []E(s), o.grain, o.inPlace)
}

// SortFunc sorts s in increasing order as determined by cmp, in parallel on
// r (a *forkjoin.Pool, the *forkjoin.Worker of the calling task, or nil for
// forkjoin.Default()). cmp must be a strict weak ordering, as for
// slices.SortFunc: cmp(a, b) < 0 when a sorts before b, 0 when they are
// equivalent. The sort is not stable; see SortStableFunc.
//
// cmp is called concurrently from several goroutines and must be safe for
// that (a pure function of its arguments is). A panic in cmp reaches the
// caller as a *forkjoin.PanicError; s then holds a permutation of its input
// (TestSortComparatorPanic). SortFunc allocates no buffer: beyond O(log n)
// stack, a few small objects per call whatever len(s)
// (TestSortMemoryAsDocumented). SortFunc panics if cmp is nil
// (TestSortFuncNilCmp).
func SortFunc[S ~[]E, E any](r forkjoin.Runner, s S, cmp func(a, b E) int, opts ...Option) {
	checkRunner("SortFunc", r)
	if cmp == nil {
		panic("magpie: SortFunc called with a nil cmp")
	}
	if len(s) < 2 {
		return
	}
	defer rethrow() // a panic leaves as a *PanicError, inline or stolen
	sorts.Func(r, []E(s), cmp, collectOptions(opts).grain)
}

// SortStableFunc sorts s in increasing order as determined by cmp, keeping
// the original order of equal elements, in parallel on r (a
// *forkjoin.Pool, the *forkjoin.Worker of the calling task, or nil for
// forkjoin.Default()). The result is exactly that of slices.SortStableFunc
// (TestSortRunners).
//
// cmp is called concurrently and must be safe for that. A panic in cmp
// reaches the caller as a *forkjoin.PanicError; s then holds a permutation
// of its input. SortStableFunc allocates one buffer of len(s) elements
// (TestSortMemoryAsDocumented; slices smaller than a few dozen elements are
// insertion-sorted in place). Grain(n) sets the size of the leaves sorted
// sequentially. SortStableFunc panics if cmp is nil (TestSortFuncNilCmp).
func SortStableFunc[S ~[]E, E any](r forkjoin.Runner, s S, cmp func(a, b E) int, opts ...Option) {
	checkRunner("SortStableFunc", r)
	if cmp == nil {
		panic("magpie: SortStableFunc called with a nil cmp")
	}
	if len(s) < 2 {
		return
	}
	defer rethrow() // a panic leaves as a *PanicError, inline or stolen
	sorts.StableFunc(r, []E(s), cmp, collectOptions(opts).grain)
}

// InPlace makes Sort use the in-place parallel quicksort for every element
// type, as it does for strings: no scratch buffer, at the cost of speed for
// integers and floats (see Sort). Other helpers ignore it.
func InPlace() Option {
	return func(o *options) { o.inPlace = true }
}
