// Package sorts holds the parallel sort algorithms behind magpie's Sort,
// SortFunc and SortStableFunc: a radix sort, a pattern-defeating quicksort
// in two variants (cmp.Less inlined, and a comparison function) generated
// from one template, and a stable merge sort. It runs on package forkjoin
// and knows nothing of package magpie: the public functions check their
// arguments, turn options into a grain and an in-place flag, convert
// panics, and call Sort, Func or StableFunc here.
//
// Choice of algorithms (the long form is in docs/design.md):
//
//   - Sort on integer and floating-point types, from radixMin (4096)
//     elements, is a parallel radix sort (radix.go): one byte per
//     level most significant first, in parallel over blocks and buckets,
//     then least significant first once a bucket fits in the L2 cache. It
//     needs a buffer of len(s) elements; magpie's InPlace option keeps the
//     quicksort below instead.
//
//   - Sort on other types (and with inPlace) and Func (unstable) are a
//     parallel pattern-defeating quicksort (zquick_ordered.go and
//     zquick_func.go, both written by gen_variants.go from one template)
//     in the style of rayon's par_sort_unstable: choose a pivot (median
//     of three, Tukey's ninther above 50 elements), partition in place,
//     then sort both sides in parallel with task.InvokeBoth. Subranges
//     below the leaf size, or met while the worker already has a
//     surplus of queued work, are sorted sequentially with slices.Sort /
//     slices.SortFunc (itself pdqsort). pdqsort's defences are kept at the
//     parallel levels: a budget of bad (unbalanced) partitions, after which
//     the subrange goes to slices.Sort (O(n log n) worst case thanks to its
//     heapsort fallback); pattern breaking after a bad partition; the
//     equal-elements partition when the pivot equals the pivot that bounds
//     the subrange from the left (many duplicates become linear); and the
//     already-sorted / reversed detection. While other workers are idle
//     (the top levels, where one partition would otherwise run alone), a
//     range is partitioned in parallel: blocks are partitioned
//     independently, then the misplaced elements on either side of the
//     split point are swapped pairwise in parallel. Quicksort needs no
//     buffer (O(log n) stack plus O(P) words per parallel partition), does
//     no merging pass, and moves each element about log2(n/leaf) times at
//     the parallel levels. Java's Arrays.parallelSort (for primitives) is a
//     parallel merge sort: it needs an n-element buffer and its last merges
//     are memory-bound. Samplesort (one classification pass into p buckets,
//     then independent sorts) also needs a buffer or an extra
//     classification pass, and its advantage, a single splitting pass
//     instead of log(p) partitions, only matters with many cores; the
//     parallel partition covers that case well enough here.
//
//   - StableFunc is a parallel merge sort, like Java's
//     Arrays.parallelSort (for objects) and rayon's par_sort: halves are
//     sorted in parallel, down to leaves sorted sequentially by a bottom-up
//     merge sort (insertion-sorted runs merged with the buffer), and every
//     merge is itself split in parallel by binary search (the median of the
//     longer run, a lower or upper bound in the shorter one, chosen so that
//     equal elements of the left run stay first: stability is preserved).
//     Runs ping-pong between the slice and one n-element buffer, so no level
//     copies. A stable samplesort would need the buffer too, and more
//     passes. Extra memory: one buffer of len(s) elements plus one byte per
//     tree node (about n/2000 bytes with the default leaves).
//
// A closed pool: each sort submits one task (runSort); if the pool refuses
// it, the sort runs on the caller instead, sequentially, with the same
// result, but for the order of elements that compare equal, which the
// quicksort leaves unspecified on any pool (TestSortsOnClosedPool; magpie's
// TestRev29ClosedPoolUnstableSortsPermute).
//
// Panics: a panic in the comparator reaches the caller after every task of
// the sort has stopped, as the runtime delivers it (magpie's wrappers turn
// it into a *forkjoin.PanicError), and the slice then holds a permutation
// of its input (quicksort only swaps in place; the merge sort moves each
// subrange back from the buffer as the panic unwinds).
package sorts

//go:generate go run gen_variants.go

import (
	"cmp"
	"slices"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/refuse"
)

// sortLeaf is the default size below which a subrange is sorted
// sequentially: a few thousand elements take tens of microseconds, far more
// than the fork that could split them.
const sortLeaf = 2048

// minSortLeaf bounds the grain of the sorts (magpie's Grain option): the
// parallel levels need a few elements to choose a pivot or to merge
// profitably.
const minSortLeaf = 16

// maxAdaptiveLeaf caps the subranges the adaptive quicksort sorts
// sequentially because the worker has a surplus of work: a sequential leaf
// cannot be split once started, so a large one would leave the other
// workers idle at the end of the sort. 64K elements take a few
// milliseconds.
const maxAdaptiveLeaf = 1 << 16

// sortSurplus is the surplus of queued tasks (Worker.Surplus) at which the
// adaptive quicksort stops splitting and sorts its subrange sequentially.
const sortSurplus = 3

// Sort sorts s in increasing order (cmp.Less) on r: by radix if E is an
// integer or floating-point type, len(s) >= radixMin and not inPlace,
// otherwise by the parallel quicksort. grain > 0 fixes the quicksort's
// leaves (at least minSortLeaf); 0 chooses them adaptively. Documented in
// full on magpie.Sort.
func Sort[E cmp.Ordered](r forkjoin.Runner, s []E, grain int, inPlace bool) {
	n := len(s)
	if n < 2 {
		return
	}
	if n >= radixMin && !inPlace && sortRadix(r, s) {
		return
	}
	leaf, adaptive := leafSize(grain, sortLeaf)
	if n <= leaf {
		slices.Sort(s)
		return
	}
	if !runSort(r, func(w *forkjoin.Worker) {
		parPdqOrdered(w, s, 0, n, pdqLimit(n), true, true, leaf, adaptive)
	}) {
		slices.Sort(s)
	}
}

// Func sorts s in increasing order as determined by cmp on r, by the
// parallel quicksort (not stable). grain is as for Sort. Documented in full
// on magpie.SortFunc.
func Func[E any](r forkjoin.Runner, s []E, cmp func(a, b E) int, grain int) {
	n := len(s)
	if n < 2 {
		return
	}
	leaf, adaptive := leafSize(grain, sortLeaf)
	if n <= leaf {
		slices.SortFunc(s, cmp)
		return
	}
	if !runSort(r, func(w *forkjoin.Worker) {
		parPdqCmpFunc(w, s, 0, n, pdqLimit(n), true, true, leaf, adaptive, cmp)
	}) {
		slices.SortFunc(s, cmp)
	}
}

// StableFunc sorts s stably in increasing order as determined by cmp on r,
// by the parallel merge sort. grain > 0 sets its leaves (at least
// minSortLeaf); 0 means stableLeaf. Documented in full on
// magpie.SortStableFunc.
func StableFunc[E any](r forkjoin.Runner, s []E, cmp func(a, b E) int, grain int) {
	n := len(s)
	if n < 2 {
		return
	}
	if n <= stableInsertion {
		insertionSortStable(s, cmp)
		return
	}
	leaf, _ := leafSize(grain, stableLeaf)
	st := newStableState(s, leaf, cmp)
	if n <= leaf {
		// One leaf: no pool needed, but the same panic guarantees.
		st.leafSort(0, n, false)
		return
	}
	if !runSort(r, func(w *forkjoin.Worker) {
		stableTask[E]{st: st, lo: 0, hi: n, id: 1}.Compute(w)
	}) {
		st.leafSort(0, n, false) // the whole slice as one leaf: the same result
	}
}

// leafSize returns the leaf size of a sort given its grain (0: none) and
// default, and whether splitting is adaptive (no grain given).
func leafSize(grain, def int) (leaf int, adaptive bool) {
	if grain > 0 {
		return max(grain, minSortLeaf), false
	}
	return def, true
}

// runSort runs fn on r: the bridge of forkjoin.Run, for a body with no
// result. It reports false if r is a closed pool, which refused fn: fn has
// not run, and the caller sorts on its own goroutine, sequentially, to the
// result the parallel sort gives (quicksort: slices.Sort or
// slices.SortFunc, which may order elements that compare equal otherwise,
// as the quicksort itself may; merge sort: its leaf sort over the whole
// slice; radix: radixSeq). A panic of fn, also one holding forkjoin.ErrClosed, goes on
// (refuse.Run; TestSortsOnClosedPool).
func runSort(r forkjoin.Runner, fn func(w *forkjoin.Worker)) bool {
	_, refused := refuse.Run(r, func(w *forkjoin.Worker) struct{} {
		fn(w)
		return struct{}{}
	})
	return !refused
}
