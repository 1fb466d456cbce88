package sorts

import (
	"slices"

	"github.com/magpie-go/magpie/forkjoin"
)

// The parallel pattern-defeating quicksort behind Func. quick_ordered.go
// is the same code for cmp.Ordered (comparisons inlined instead of calls
// through cmp); keep the two in step, line for line.
//
// Every task owns data[a:b] and writes nothing outside it. It may read
// data[a-1] (the pdqsort predecessor test): that element is a pivot placed
// by an ancestor, or an element equal to it, and no running task writes it.

// pdqTaskCmpFunc sorts data[a:b]; a typed task so that JoinTasks forks it
// without allocating.
type pdqTaskCmpFunc[E any] struct {
	data                        []E
	a, b, limit, leaf           int
	wasBalanced, wasPartitioned bool
	adaptive                    bool
	cmp                         func(a, b E) int
}

func (t pdqTaskCmpFunc[E]) Compute(w *forkjoin.Worker) struct{} {
	parPdqCmpFunc(w, t.data, t.a, t.b, t.limit, t.wasBalanced, t.wasPartitioned, t.leaf, t.adaptive, t.cmp)
	return struct{}{}
}

// parPdqCmpFunc sorts data[a:b]. It follows pdqsort's loop (Go's
// slices.pdqsort) but, instead of recursing on the smaller side, sorts
// both sides in parallel; ranges below leaf (or, when adaptive, below
// maxAdaptiveLeaf and met while the worker has a surplus of queued tasks)
// go to slices.SortFunc, and so does a range that used up its budget of bad
// partitions (limit).
func parPdqCmpFunc[E any](w *forkjoin.Worker, data []E, a, b, limit int, wasBalanced, wasPartitioned bool, leaf int, adaptive bool, cmp func(a, b E) int) {
	for {
		length := b - a
		if length <= leaf || limit == 0 || (adaptive && length <= maxAdaptiveLeaf && w.Surplus() >= sortSurplus) {
			slices.SortFunc(data[a:b], cmp)
			return
		}

		// After an unbalanced partition, scatter a few elements so that
		// the next pivot does not hit the same pattern again.
		if !wasBalanced {
			breakPatternsCmpFunc(data, a, b)
			limit--
		}

		pivot, hint := choosePivotCmpFunc(data, a, b, cmp)
		if hint == decreasingHint {
			reverseRangeCmpFunc(data, a, b)
			pivot = (b - 1) - (pivot - a)
			hint = increasingHint
		}

		// Likely sorted already: an O(n) check with a few repairs.
		if wasBalanced && wasPartitioned && hint == increasingHint {
			if partialInsertionSortCmpFunc(data, a, b, cmp) {
				return
			}
		}

		// The pivot equals the predecessor, which is <= every element
		// here: many duplicates. Put the elements equal to the pivot
		// first, they are done, and go on with the greater ones.
		if a > 0 && !(cmp(data[a-1], data[pivot]) < 0) {
			a = partitionEqualCmpFunc(data, a, b, pivot, cmp)
			continue
		}

		// Partition in parallel while other workers are idle (the top
		// levels), sequentially once they all have work.
		var mid int
		var alreadyPartitioned bool
		if length >= parPartitionMin && w.Surplus() < 0 {
			mid, alreadyPartitioned = parPartitionCmpFunc(w, data, a, b, pivot, cmp)
		} else {
			mid, alreadyPartitioned = partitionCmpFunc(data, a, b, pivot, cmp)
		}
		leftLen, rightLen := mid-a, b-mid-1
		balanced := min(leftLen, rightLen) >= length/8
		left := pdqTaskCmpFunc[E]{data, a, mid, limit, leaf, balanced, alreadyPartitioned, adaptive, cmp}
		right := pdqTaskCmpFunc[E]{data, mid + 1, b, limit, leaf, balanced, alreadyPartitioned, adaptive, cmp}
		// Fork the larger side: if it is stolen, the thief gets the bigger
		// share; if not, it runs here next anyway.
		if leftLen < rightLen {
			forkjoin.JoinTasks[struct{}, struct{}](w, left, right)
		} else {
			forkjoin.JoinTasks[struct{}, struct{}](w, right, left)
		}
		return
	}
}

// partitionCmpFunc partitions data[a:b] around data[pivot]: on return
// data[i] < p for a <= i < newpivot, data[newpivot] = p and data[j] >= p
// after it. alreadyPartitioned reports that no element had to move.
func partitionCmpFunc[E any](data []E, a, b, pivot int, cmp func(a, b E) int) (newpivot int, alreadyPartitioned bool) {
	data[a], data[pivot] = data[pivot], data[a]
	i, j := a+1, b-1 // inclusive bounds of the elements left to partition

	for i <= j && cmp(data[i], data[a]) < 0 {
		i++
	}
	for i <= j && !(cmp(data[j], data[a]) < 0) {
		j--
	}
	if i > j {
		data[j], data[a] = data[a], data[j]
		return j, true
	}
	data[i], data[j] = data[j], data[i]
	i++
	j--

	for {
		for i <= j && cmp(data[i], data[a]) < 0 {
			i++
		}
		for i <= j && !(cmp(data[j], data[a]) < 0) {
			j--
		}
		if i > j {
			break
		}
		data[i], data[j] = data[j], data[i]
		i++
		j--
	}
	data[j], data[a] = data[a], data[j]
	return j, false
}

// partitionEqualCmpFunc puts the elements of data[a:b] equal to
// data[pivot] first and returns where the greater ones start. No element
// of data[a:b] may be smaller than the pivot.
func partitionEqualCmpFunc[E any](data []E, a, b, pivot int, cmp func(a, b E) int) (newpivot int) {
	data[a], data[pivot] = data[pivot], data[a]
	i, j := a+1, b-1

	for {
		for i <= j && !(cmp(data[a], data[i]) < 0) {
			i++
		}
		for i <= j && cmp(data[a], data[j]) < 0 {
			j--
		}
		if i > j {
			break
		}
		data[i], data[j] = data[j], data[i]
		i++
		j--
	}
	return i
}

// partialInsertionSortCmpFunc repairs up to a few out-of-order pairs of
// data[a:b] and reports whether it is then sorted. Unlike the standard
// library's version it never looks left of a, which belongs to another
// task.
func partialInsertionSortCmpFunc[E any](data []E, a, b int, cmp func(a, b E) int) bool {
	const (
		maxSteps         = 5  // out-of-order pairs repaired at most
		shortestShifting = 50 // below this, give up at the first one
	)
	i := a + 1
	for range maxSteps {
		for i < b && !(cmp(data[i], data[i-1]) < 0) {
			i++
		}
		if i == b {
			return true
		}
		if b-a < shortestShifting {
			return false
		}
		data[i], data[i-1] = data[i-1], data[i]

		// Shift the smaller one to the left.
		for j := i - 1; j > a; j-- {
			if !(cmp(data[j], data[j-1]) < 0) {
				break
			}
			data[j], data[j-1] = data[j-1], data[j]
		}
		// Shift the greater one to the right.
		for j := i + 1; j < b; j++ {
			if !(cmp(data[j], data[j-1]) < 0) {
				break
			}
			data[j], data[j-1] = data[j-1], data[j]
		}
	}
	return false
}

// breakPatternsCmpFunc swaps three elements near the middle of data[a:b]
// with pseudo-random others.
func breakPatternsCmpFunc[E any](data []E, a, b int) {
	length := b - a
	if length >= 8 {
		random := xorshift(length)
		modulus := nextPowerOfTwo(length)
		for idx := a + (length/4)*2 - 1; idx <= a+(length/4)*2+1; idx++ {
			other := int(uint(random.next()) & (modulus - 1))
			if other >= length {
				other -= length
			}
			data[idx], data[a+other] = data[a+other], data[idx]
		}
	}
}

// choosePivotCmpFunc returns the index of a pivot for data[a:b] (the
// median of three, or Tukey's ninther from 50 elements on) and a hint of
// whether the samples were all increasing or all decreasing.
func choosePivotCmpFunc[E any](data []E, a, b int, cmp func(a, b E) int) (pivot int, hint sortedHint) {
	const (
		shortestNinther = 50
		maxSwaps        = 4 * 3
	)
	l := b - a
	var (
		swaps int
		i     = a + l/4*1
		j     = a + l/4*2
		k     = a + l/4*3
	)
	if l >= 8 {
		if l >= shortestNinther {
			i = medianCmpFunc(data, i-1, i, i+1, &swaps, cmp)
			j = medianCmpFunc(data, j-1, j, j+1, &swaps, cmp)
			k = medianCmpFunc(data, k-1, k, k+1, &swaps, cmp)
		}
		j = medianCmpFunc(data, i, j, k, &swaps, cmp)
	}
	switch swaps {
	case 0:
		return j, increasingHint
	case maxSwaps:
		return j, decreasingHint
	default:
		return j, unknownHint
	}
}

// order2CmpFunc returns x, y with data[x] <= data[y], {x, y} = {a, b}.
func order2CmpFunc[E any](data []E, a, b int, swaps *int, cmp func(a, b E) int) (int, int) {
	if cmp(data[b], data[a]) < 0 {
		*swaps++
		return b, a
	}
	return a, b
}

// medianCmpFunc returns the index of the median of data[a], data[b], data[c].
func medianCmpFunc[E any](data []E, a, b, c int, swaps *int, cmp func(a, b E) int) int {
	a, b = order2CmpFunc(data, a, b, swaps, cmp)
	b, c = order2CmpFunc(data, b, c, swaps, cmp)
	_, b = order2CmpFunc(data, a, b, swaps, cmp)
	return b
}

func reverseRangeCmpFunc[E any](data []E, a, b int) {
	for i, j := a, b-1; i < j; i, j = i+1, j-1 {
		data[i], data[j] = data[j], data[i]
	}
}

// parPartitionCmpFunc is partitionCmpFunc run in parallel, for the top
// levels of a large sort, where a sequential partition would leave every
// other worker idle: on 2 workers the first partition is only a few
// percent of the sort, on 64 it would dominate it. It partitions blocks of
// data[a+1:b] around the pivot value in parallel, then swaps, in parallel,
// the large elements that ended left of the split point with the small
// ones right of it (the k-th of one with the k-th of the other), and
// finally puts the pivot between the two sides. Like every step of the
// quicksort it only swaps, so a panicking cmp leaves a permutation.
func parPartitionCmpFunc[E any](w *forkjoin.Worker, data []E, a, b, pivot int, cmp func(a, b E) int) (newpivot int, alreadyPartitioned bool) {
	data[a], data[pivot] = data[pivot], data[a]
	lo, n := a+1, b-a-1
	blocks := min(n/parPartitionBlock, 4*w.Pool().Parallelism())
	st := &parPartStateCmpFunc[E]{
		data: data, p: data[a], cmp: cmp, lo: lo, hi: b,
		block: n / blocks, blocks: blocks,
		small: make([]int, blocks), moved: make([]bool, blocks),
	}
	partBlocksTaskCmpFunc[E]{st, 0, blocks}.Compute(w)

	split := lo
	moved := false
	for i := range blocks {
		split += st.small[i]
		moved = moved || st.moved[i]
	}
	// Misplaced runs: the large part of each block left of split, the small
	// part of each block right of it, both in increasing position.
	for i := range blocks {
		blo, bhi := st.bounds(i)
		mid := blo + st.small[i]
		if s, e := mid, min(bhi, split); s < e {
			st.left = append(st.left, span{s, e})
		}
		if s, e := max(blo, split), mid; s < e {
			st.right = append(st.right, span{s, e})
		}
	}
	total := 0
	for _, sp := range st.left {
		total += sp.hi - sp.lo
	}
	if total > 0 {
		partSwapTaskCmpFunc[E]{st, 0, total}.Compute(w)
	}
	data[a], data[split-1] = data[split-1], data[a]
	return split - 1, !moved && total == 0
}

// parPartStateCmpFunc is shared by the tasks of one parallel partition.
type parPartStateCmpFunc[E any] struct {
	data          []E
	p             E
	cmp           func(a, b E) int
	lo, hi        int
	block, blocks int    // block i is [lo+i*block, lo+(i+1)*block), the last one to hi
	small         []int  // small[i]: elements < p in block i, now at its start
	moved         []bool // moved[i]: block i needed swaps
	left, right   []span // misplaced large and small elements
}

func (st *parPartStateCmpFunc[E]) bounds(i int) (lo, hi int) {
	lo = st.lo + i*st.block
	hi = lo + st.block
	if i == st.blocks-1 {
		hi = st.hi
	}
	return lo, hi
}

// partBlocksTaskCmpFunc partitions blocks [i, j) of a parallel partition.
type partBlocksTaskCmpFunc[E any] struct {
	st   *parPartStateCmpFunc[E]
	i, j int
}

func (t partBlocksTaskCmpFunc[E]) Compute(w *forkjoin.Worker) struct{} {
	if t.j-t.i > 1 {
		m := t.i + (t.j-t.i)/2
		forkjoin.JoinTasks[struct{}, struct{}](w,
			partBlocksTaskCmpFunc[E]{t.st, t.i, m}, partBlocksTaskCmpFunc[E]{t.st, m, t.j})
		return struct{}{}
	}
	st := t.st
	data, p, cmp := st.data, st.p, st.cmp
	lo, hi := st.bounds(t.i)
	i, j := lo, hi-1
	moved := false
	for {
		for i <= j && cmp(data[i], p) < 0 {
			i++
		}
		for i <= j && !(cmp(data[j], p) < 0) {
			j--
		}
		if i > j {
			break
		}
		data[i], data[j] = data[j], data[i]
		moved = true
		i++
		j--
	}
	st.small[t.i], st.moved[t.i] = i-lo, moved
	return struct{}{}
}

// partSwapTaskCmpFunc swaps the misplaced pairs [from, to) of a parallel
// partition: the k-th element of the left runs with the k-th of the right.
type partSwapTaskCmpFunc[E any] struct {
	st       *parPartStateCmpFunc[E]
	from, to int
}

func (t partSwapTaskCmpFunc[E]) Compute(w *forkjoin.Worker) struct{} {
	if t.to-t.from > parPartitionBlock {
		m := t.from + (t.to-t.from)/2
		forkjoin.JoinTasks[struct{}, struct{}](w,
			partSwapTaskCmpFunc[E]{t.st, t.from, m}, partSwapTaskCmpFunc[E]{t.st, m, t.to})
		return struct{}{}
	}
	data := t.st.data
	li, lpos := seekSpan(t.st.left, t.from)
	ri, rpos := seekSpan(t.st.right, t.from)
	for k := t.from; k < t.to; k++ {
		for lpos == t.st.left[li].hi {
			li++
			lpos = t.st.left[li].lo
		}
		for rpos == t.st.right[ri].hi {
			ri++
			rpos = t.st.right[ri].lo
		}
		data[lpos], data[rpos] = data[rpos], data[lpos]
		lpos++
		rpos++
	}
	return struct{}{}
}
