package magpie

import (
	"cmp"

	"github.com/magpie-go/magpie/forkjoin"
)

// Sorting by a cached key (rayon's par_sort_by_cached_key): for a key that
// costs more than a comparison (a string built, a field parsed, a distance
// computed), computing it once per element beats computing it twice per
// comparison. Three parallel passes: the keys, with their indices, into a
// slice of pairs (For); a sort of the pairs (SortFunc); the elements
// gathered through the sorted indices into a buffer and copied back (For).
// Extra memory: n (key, int) pairs and n elements.

// keyed is an element's key and its index in the input.
type keyed[K cmp.Ordered] struct {
	key K
	i   int
}

// SortByKey sorts s in increasing order of key(x), in parallel on r (a
// *forkjoin.Pool, the *forkjoin.Worker of the calling task, or nil for
// forkjoin.Default()). key is called exactly once per element, in
// parallel, so it must be safe to call concurrently (TestSortByKeySmall,
// TestSortByKeyLarge). Keys are ordered by cmp.Compare (NaNs first:
// TestSortByKeyFloatKeys). The sort is not stable: the result is ordered
// as by
//
//	slices.SortFunc(s, func(a, b E) int { return cmp.Compare(key(a), key(b)) })
//
// with equal keys in an unspecified order; SortStableByKey keeps them in
// input order.
//
// Extra memory: n (key, int) pairs and n elements (the permuted copy:
// TestSortMemoryAsDocumented). Grain(g) sets the pieces of the key pass and
// the leaves of the sort. A panic in key reaches the caller as a
// *forkjoin.PanicError, with s unmodified (TestSortByKeyPanics). Canceled
// (run by a task whose context is canceled), it leaves s either unmodified
// or sorted, never part of each (TestSortByKeyCanceledLeavesPermutation).
func SortByKey[S ~[]E, E any, K cmp.Ordered](r forkjoin.Runner, s S, key func(E) K, opts ...Option) {
	checkRunner("SortByKey", r)
	if key == nil {
		panic("magpie: SortByKey called with a nil key")
	}
	sortByKey(r, s, key, func(a, b keyed[K]) int { return cmp.Compare(a.key, b.key) }, opts)
}

// SortStableByKey sorts s in increasing order of key(x), keeping the input
// order of elements with equal keys, in parallel on r. The result is
// exactly that of
//
//	slices.SortStableFunc(s, func(a, b E) int { return cmp.Compare(key(a), key(b)) })
//
// with key called exactly once per element (in parallel: it must be safe
// to call concurrently) instead of twice per comparison. The pairs are
// sorted by (key, index), an order with no ties, so the fast unstable sort
// gives the stable result with no merge buffer. r, the memory, the options
// and panics are as for SortByKey.
func SortStableByKey[S ~[]E, E any, K cmp.Ordered](r forkjoin.Runner, s S, key func(E) K, opts ...Option) {
	checkRunner("SortStableByKey", r)
	if key == nil {
		panic("magpie: SortStableByKey called with a nil key")
	}
	sortByKey(r, s, key, func(a, b keyed[K]) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	}, opts)
}

func sortByKey[S ~[]E, E any, K cmp.Ordered](r forkjoin.Runner, s S, key func(E) K,
	order func(a, b keyed[K]) int, opts []Option) {
	n := len(s)
	if n == 0 {
		return
	}
	// Every element's key, even for n == 1: "exactly once per element"
	// holds at every size, and so does a panic in key.
	pairs := make([]keyed[K], n)
	For(r, n, func(i int) { pairs[i] = keyed[K]{key(s[i]), i} }, opts...)
	if n == 1 {
		return
	}
	// order cannot panic and the passes below only move elements: from here
	// on s is either untouched or fully permuted. The sort and the gather
	// only read s; the copy-back, cut short (a cancellation at one of its
	// forks), is finished on the caller.
	SortFunc(r, pairs, order, opts...)
	buf := make(S, n)
	ForRange(r, n, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			buf[j] = s[pairs[j].i]
		}
	}, opts...)
	copyBack(r, s, buf)
}

// copyBack copies buf into s in parallel on r. If the parallel copy ends
// early (ForRange panics: a cancellation at a fork), every task
// of it has stopped (ForRange returns only then), so s is no longer
// written by anyone else: the copy is finished here, sequentially, before
// the panic goes on, and s holds buf whatever happened
// (TestSortByKeyCanceledLeavesPermutation; a copy cut short left some
// blocks of s unsorted, elements lost and others duplicated).
func copyBack[S ~[]E, E any](r forkjoin.Runner, s, buf S) {
	finished := false
	defer func() {
		if !finished {
			copy(s, buf)
		}
	}()
	ForRange(r, len(s), func(lo, hi int) { copy(s[lo:hi], buf[lo:hi]) }, Grain(sortKeyCopyGrain))
	finished = true
}

// sortKeyCopyGrain is the piece of the sorts by key's copy-back: a copy of
// this many elements takes microseconds, more than the fork that splits it.
const sortKeyCopyGrain = 1 << 14
