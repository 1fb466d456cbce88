package magpie

import (
	"cmp"
	"slices"

	"github.com/magpie-go/magpie/forkjoin"
)

// Parallel sorting.
//
// Choice of algorithms (the long form is in docs/design.md):
//
//   - Sort on integer and floating-point types, from radixMin (4096)
//     elements, is a parallel radix sort (sort_radix.go): one byte per
//     level most significant first, in parallel over blocks and buckets,
//     then least significant first once a bucket fits in the L2 cache. It
//     needs a buffer of len(s) elements; the InPlace option keeps the
//     quicksort below instead.
//
//   - Sort on other types (and with InPlace) and SortFunc (unstable) are a
//     parallel pattern-defeating
//     quicksort in the style of rayon's par_sort_unstable: choose a pivot
//     (median of three, Tukey's ninther above 50 elements), partition in
//     place, then sort both sides in parallel with forkjoin.JoinTasks.
//     Subranges below the leaf size, or met while the worker already has a
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
//   - SortStableFunc is a parallel merge sort, like Java's
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
// Panics: a panic in the comparator reaches the caller as a
// *forkjoin.PanicError, after every task of the sort has stopped, and the
// slice then holds a permutation of its input (quicksort only swaps in
// place; the merge sort moves each subrange back from the buffer as the
// panic unwinds).

// sortLeaf is the default size below which a subrange is sorted
// sequentially: a few thousand elements take tens of microseconds, far more
// than the fork that could split them.
const sortLeaf = 2048

// minSortLeaf bounds Grain for the sorts: the parallel levels need a few
// elements to choose a pivot or to merge profitably.
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

// Sort sorts s in increasing order, in parallel on r (a *forkjoin.Pool,
// the *forkjoin.Worker of the calling task, or nil for forkjoin.Default()).
// The result is the one slices.Sort gives: for floating-point types NaNs
// come first, ordered as by cmp.Less.
//
// Slices of integers (any kind, named types included) and of floats with
// at least 4096 elements are sorted by a parallel radix sort, which
// allocates a scratch buffer of len(s) elements for the duration of the
// call; the InPlace option avoids it (and sorts them as strings are
// sorted, by quicksort, in O(log n) stack). Integers come out bit for bit
// as slices.Sort leaves them. For floats, where slices.Sort leaves
// elements that compare equal in an unspecified order, the radix sort
// puts -0.0 before +0.0 and orders NaNs by their bits (the NaNs first,
// then -Inf ... +Inf): the result is a sorted permutation of s that
// depends only on its contents.
//
// Strings, and integers and floats with InPlace or below 4096 elements,
// are sorted by a parallel pattern-defeating quicksort that uses no extra
// memory beyond O(log n) stack; it is not stable (which can only be seen
// on -0.0 and +0.0, and on NaNs). Without options its leaves are chosen
// adaptively; Grain(n) sets the size below which a subrange is sorted
// sequentially. Grain does not affect the radix sort.
func Sort[S ~[]E, E cmp.Ordered](r forkjoin.Runner, s S, opts ...Option) {
	checkRunner("Sort", r)
	n := len(s)
	if n < 2 {
		return
	}
	if n >= radixMin && sortRadix(r, []E(s), opts) {
		return
	}
	leaf, adaptive := sortGrain(opts, sortLeaf)
	if n <= leaf {
		slices.Sort(s)
		return
	}
	runSort(r, func(w *forkjoin.Worker) {
		parPdqOrdered(w, []E(s), 0, n, pdqLimit(n), true, true, leaf, adaptive)
	})
}

// SortFunc sorts s in increasing order as determined by cmp, in parallel on
// r (a *forkjoin.Pool, the *forkjoin.Worker of the calling task, or nil for
// forkjoin.Default()). cmp must be a strict weak ordering, as for
// slices.SortFunc: cmp(a, b) < 0 when a sorts before b, 0 when they are
// equivalent. The sort is not stable; see SortStableFunc.
//
// cmp is called concurrently from several goroutines and must be safe for
// that (a pure function of its arguments is). A panic in cmp reaches the
// caller as a *forkjoin.PanicError; s then holds a permutation of its input.
// SortFunc uses no extra memory beyond O(log n) stack.
func SortFunc[S ~[]E, E any](r forkjoin.Runner, s S, cmp func(a, b E) int, opts ...Option) {
	checkRunner("SortFunc", r)
	n := len(s)
	if n < 2 {
		return
	}
	defer rethrow() // a panic leaves as a *PanicError, inline or stolen
	leaf, adaptive := sortGrain(opts, sortLeaf)
	if n <= leaf {
		slices.SortFunc(s, cmp)
		return
	}
	runSort(r, func(w *forkjoin.Worker) {
		parPdqCmpFunc(w, []E(s), 0, n, pdqLimit(n), true, true, leaf, adaptive, cmp)
	})
}

// SortStableFunc sorts s in increasing order as determined by cmp, keeping
// the original order of equal elements, in parallel on r (a
// *forkjoin.Pool, the *forkjoin.Worker of the calling task, or nil for
// forkjoin.Default()). The result is exactly that of slices.SortStableFunc.
//
// cmp is called concurrently and must be safe for that. A panic in cmp
// reaches the caller as a *forkjoin.PanicError; s then holds a permutation
// of its input. SortStableFunc allocates one buffer of len(s) elements
// (slices smaller than a few dozen elements are insertion-sorted in place).
// Grain(n) sets the size of the leaves sorted sequentially.
func SortStableFunc[S ~[]E, E any](r forkjoin.Runner, s S, cmp func(a, b E) int, opts ...Option) {
	checkRunner("SortStableFunc", r)
	n := len(s)
	if n < 2 {
		return
	}
	defer rethrow() // a panic leaves as a *PanicError, inline or stolen
	if n <= stableInsertion {
		insertionSortStable([]E(s), cmp)
		return
	}
	leaf, _ := sortGrain(opts, stableLeaf)
	st := newStableState([]E(s), leaf, cmp)
	if n <= leaf {
		// One leaf: no pool needed, but the same panic guarantees.
		st.leafSort(0, n, false)
		return
	}
	runSort(r, func(w *forkjoin.Worker) {
		stableTask[E]{st: st, lo: 0, hi: n, id: 1}.Compute(w)
	})
}

// sortGrain returns the leaf size of a sort and whether splitting is
// adaptive (no Grain given).
func sortGrain(opts []Option, def int) (leaf int, adaptive bool) {
	o := collectOptions(opts)
	if o.grain > 0 {
		return max(o.grain, minSortLeaf), false
	}
	return def, true
}

// runSort runs fn on r: the bridge of forkjoin.Run, for a body with no
// result.
func runSort(r forkjoin.Runner, fn func(w *forkjoin.Worker)) {
	forkjoin.Run(r, func(w *forkjoin.Worker) struct{} {
		fn(w)
		return struct{}{}
	})
}

// pdqLimit is the number of bad partitions allowed before a subrange falls
// back to slices.Sort: pdqsort's bits.Len(n).
func pdqLimit(n int) int {
	l := 0
	for n > 0 {
		l++
		n >>= 1
	}
	return l
}

// xorshift is the tiny generator pdqsort uses to break patterns.
type xorshift uint64

func (r *xorshift) next() uint64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return uint64(*r)
}

func nextPowerOfTwo(length int) uint {
	shift := uint(0)
	for 1<<shift < length {
		shift++
	}
	return 1 << shift
}

type sortedHint int

const (
	unknownHint sortedHint = iota
	increasingHint
	decreasingHint
)

// parPartitionMin is the length from which the quicksort partitions in
// parallel, and parPartitionBlock the size of the blocks it partitions
// (and of the swap runs it fixes) per task.
const (
	parPartitionMin   = 1 << 18
	parPartitionBlock = 1 << 15
)

// span is the index range [lo, hi).
type span struct{ lo, hi int }

// seekSpan returns the span holding the k-th element of the concatenated
// spans and that element's index.
func seekSpan(spans []span, k int) (int, int) {
	for i, sp := range spans {
		if k < sp.hi-sp.lo {
			return i, sp.lo + k
		}
		k -= sp.hi - sp.lo
	}
	last := len(spans) - 1
	return last, spans[last].hi
}
