// Code generated from quick_func.go by TestSortOrderedGenerated (quick_gen_test.go); DO NOT EDIT.

package sorts

import (
	"cmp"
	"slices"

	"github.com/magpie-go/magpie/forkjoin"
)

// The parallel pattern-defeating quicksort behind Sort: quick_func.go
// with cmp.Less inlined in place of calls through a comparison function (a
// call per comparison would cost Sort a third of its speed). Keep the two
// in step, line for line.
//
// Every task owns data[a:b] and writes nothing outside it. It may read
// data[a-1] (the pdqsort predecessor test): that element is a pivot placed
// by an ancestor, or an element equal to it, and no running task writes it.

// pdqTaskOrdered sorts data[a:b]; a typed task so that JoinTasks forks it
// without allocating.
type pdqTaskOrdered[E cmp.Ordered] struct {
	data                        []E
	a, b, limit, leaf           int
	wasBalanced, wasPartitioned bool
	adaptive                    bool
}

func (t pdqTaskOrdered[E]) Compute(w *forkjoin.Worker) struct{} {
	parPdqOrdered(w, t.data, t.a, t.b, t.limit, t.wasBalanced, t.wasPartitioned, t.leaf, t.adaptive)
	return struct{}{}
}

// parPdqOrdered sorts data[a:b]. It follows pdqsort's loop (Go's
// slices.pdqsort) but, instead of recursing on the smaller side, sorts
// both sides in parallel; ranges below leaf (or, when adaptive, below
// maxAdaptiveLeaf and met while the worker has a surplus of queued tasks)
// go to slices.Sort, and so does a range that used up its budget of bad
// partitions (limit).
func parPdqOrdered[E cmp.Ordered](w *forkjoin.Worker, data []E, a, b, limit int, wasBalanced, wasPartitioned bool, leaf int, adaptive bool) {
	for {
		length := b - a
		if length <= leaf || limit == 0 || (adaptive && length <= maxAdaptiveLeaf && w.Surplus() >= sortSurplus) {
			slices.Sort(data[a:b])
			return
		}

		// After an unbalanced partition, scatter a few elements so that
		// the next pivot does not hit the same pattern again.
		if !wasBalanced {
			breakPatternsOrdered(data, a, b)
			limit--
		}

		pivot, hint := choosePivotOrdered(data, a, b)
		if hint == decreasingHint {
			reverseRangeOrdered(data, a, b)
			pivot = (b - 1) - (pivot - a)
			hint = increasingHint
		}

		// Likely sorted already: an O(n) check with a few repairs.
		if wasBalanced && wasPartitioned && hint == increasingHint {
			if partialInsertionSortOrdered(data, a, b) {
				return
			}
		}

		// The pivot equals the predecessor, which is <= every element
		// here: many duplicates. Put the elements equal to the pivot
		// first, they are done, and go on with the greater ones.
		if a > 0 && !cmp.Less(data[a-1], data[pivot]) {
			a = partitionEqualOrdered(data, a, b, pivot)
			continue
		}

		// Partition in parallel while other workers are idle (the top
		// levels), sequentially once they all have work.
		var mid int
		var alreadyPartitioned bool
		if length >= parPartitionMin && w.Surplus() < 0 {
			mid, alreadyPartitioned = parPartitionOrdered(w, data, a, b, pivot)
		} else {
			mid, alreadyPartitioned = partitionOrdered(data, a, b, pivot)
		}
		leftLen, rightLen := mid-a, b-mid-1
		balanced := min(leftLen, rightLen) >= length/8
		left := pdqTaskOrdered[E]{data, a, mid, limit, leaf, balanced, alreadyPartitioned, adaptive}
		right := pdqTaskOrdered[E]{data, mid + 1, b, limit, leaf, balanced, alreadyPartitioned, adaptive}
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

// partitionOrdered partitions data[a:b] around data[pivot]: on return
// data[i] < p for a <= i < newpivot, data[newpivot] = p and data[j] >= p
// after it. alreadyPartitioned reports that no element had to move.
func partitionOrdered[E cmp.Ordered](data []E, a, b, pivot int) (newpivot int, alreadyPartitioned bool) {
	data[a], data[pivot] = data[pivot], data[a]
	i, j := a+1, b-1 // inclusive bounds of the elements left to partition

	for i <= j && cmp.Less(data[i], data[a]) {
		i++
	}
	for i <= j && !cmp.Less(data[j], data[a]) {
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
		for i <= j && cmp.Less(data[i], data[a]) {
			i++
		}
		for i <= j && !cmp.Less(data[j], data[a]) {
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

// partitionEqualOrdered puts the elements of data[a:b] equal to
// data[pivot] first and returns where the greater ones start. No element
// of data[a:b] may be smaller than the pivot.
func partitionEqualOrdered[E cmp.Ordered](data []E, a, b, pivot int) (newpivot int) {
	data[a], data[pivot] = data[pivot], data[a]
	i, j := a+1, b-1

	for {
		for i <= j && !cmp.Less(data[a], data[i]) {
			i++
		}
		for i <= j && cmp.Less(data[a], data[j]) {
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

// partialInsertionSortOrdered repairs up to a few out-of-order pairs of
// data[a:b] and reports whether it is then sorted. Unlike the standard
// library's version it never looks left of a, which belongs to another
// task.
func partialInsertionSortOrdered[E cmp.Ordered](data []E, a, b int) bool {
	const (
		maxSteps         = 5  // out-of-order pairs repaired at most
		shortestShifting = 50 // below this, give up at the first one
	)
	i := a + 1
	for range maxSteps {
		for i < b && !cmp.Less(data[i], data[i-1]) {
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
			if !cmp.Less(data[j], data[j-1]) {
				break
			}
			data[j], data[j-1] = data[j-1], data[j]
		}
		// Shift the greater one to the right.
		for j := i + 1; j < b; j++ {
			if !cmp.Less(data[j], data[j-1]) {
				break
			}
			data[j], data[j-1] = data[j-1], data[j]
		}
	}
	return false
}

// breakPatternsOrdered swaps three elements near the middle of data[a:b]
// with pseudo-random others.
func breakPatternsOrdered[E cmp.Ordered](data []E, a, b int) {
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

// choosePivotOrdered returns the index of a pivot for data[a:b] (the
// median of three, or Tukey's ninther from 50 elements on) and a hint of
// whether the samples were all increasing or all decreasing.
func choosePivotOrdered[E cmp.Ordered](data []E, a, b int) (pivot int, hint sortedHint) {
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
			i = medianOrdered(data, i-1, i, i+1, &swaps)
			j = medianOrdered(data, j-1, j, j+1, &swaps)
			k = medianOrdered(data, k-1, k, k+1, &swaps)
		}
		j = medianOrdered(data, i, j, k, &swaps)
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

// order2Ordered returns x, y with data[x] <= data[y], {x, y} = {a, b}.
func order2Ordered[E cmp.Ordered](data []E, a, b int, swaps *int) (int, int) {
	if cmp.Less(data[b], data[a]) {
		*swaps++
		return b, a
	}
	return a, b
}

// medianOrdered returns the index of the median of data[a], data[b], data[c].
func medianOrdered[E cmp.Ordered](data []E, a, b, c int, swaps *int) int {
	a, b = order2Ordered(data, a, b, swaps)
	b, c = order2Ordered(data, b, c, swaps)
	_, b = order2Ordered(data, a, b, swaps)
	return b
}

func reverseRangeOrdered[E cmp.Ordered](data []E, a, b int) {
	for i, j := a, b-1; i < j; i, j = i+1, j-1 {
		data[i], data[j] = data[j], data[i]
	}
}

// parPartitionOrdered is partitionOrdered run in parallel, for the top
// levels of a large sort, where a sequential partition would leave every
// other worker idle: on 2 workers the first partition is only a few
// percent of the sort, on 64 it would dominate it. It partitions blocks of
// data[a+1:b] around the pivot value in parallel, then swaps, in parallel,
// the large elements that ended left of the split point with the small
// ones right of it (the k-th of one with the k-th of the other), and
// finally puts the pivot between the two sides. Like every step of the
// quicksort it only swaps, so it never loses an element.
func parPartitionOrdered[E cmp.Ordered](w *forkjoin.Worker, data []E, a, b, pivot int) (newpivot int, alreadyPartitioned bool) {
	data[a], data[pivot] = data[pivot], data[a]
	lo, n := a+1, b-a-1
	blocks := min(n/parPartitionBlock, 4*w.Pool().Parallelism())
	st := &parPartStateOrdered[E]{
		data: data, p: data[a], lo: lo, hi: b,
		block: n / blocks, blocks: blocks,
		small: make([]int, blocks), moved: make([]bool, blocks),
	}
	partBlocksTaskOrdered[E]{st, 0, blocks}.Compute(w)

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
		partSwapTaskOrdered[E]{st, 0, total}.Compute(w)
	}
	data[a], data[split-1] = data[split-1], data[a]
	return split - 1, !moved && total == 0
}

// parPartStateOrdered is shared by the tasks of one parallel partition.
type parPartStateOrdered[E cmp.Ordered] struct {
	data          []E
	p             E
	lo, hi        int
	block, blocks int    // block i is [lo+i*block, lo+(i+1)*block), the last one to hi
	small         []int  // small[i]: elements < p in block i, now at its start
	moved         []bool // moved[i]: block i needed swaps
	left, right   []span // misplaced large and small elements
}

func (st *parPartStateOrdered[E]) bounds(i int) (lo, hi int) {
	lo = st.lo + i*st.block
	hi = lo + st.block
	if i == st.blocks-1 {
		hi = st.hi
	}
	return lo, hi
}

// partBlocksTaskOrdered partitions blocks [i, j) of a parallel partition.
type partBlocksTaskOrdered[E cmp.Ordered] struct {
	st   *parPartStateOrdered[E]
	i, j int
}

func (t partBlocksTaskOrdered[E]) Compute(w *forkjoin.Worker) struct{} {
	if t.j-t.i > 1 {
		m := t.i + (t.j-t.i)/2
		forkjoin.JoinTasks[struct{}, struct{}](w,
			partBlocksTaskOrdered[E]{t.st, t.i, m}, partBlocksTaskOrdered[E]{t.st, m, t.j})
		return struct{}{}
	}
	st := t.st
	data, p := st.data, st.p
	lo, hi := st.bounds(t.i)
	i, j := lo, hi-1
	moved := false
	for {
		for i <= j && cmp.Less(data[i], p) {
			i++
		}
		for i <= j && !cmp.Less(data[j], p) {
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

// partSwapTaskOrdered swaps the misplaced pairs [from, to) of a parallel
// partition: the k-th element of the left runs with the k-th of the right.
type partSwapTaskOrdered[E cmp.Ordered] struct {
	st       *parPartStateOrdered[E]
	from, to int
}

func (t partSwapTaskOrdered[E]) Compute(w *forkjoin.Worker) struct{} {
	if t.to-t.from > parPartitionBlock {
		m := t.from + (t.to-t.from)/2
		forkjoin.JoinTasks[struct{}, struct{}](w,
			partSwapTaskOrdered[E]{t.st, t.from, m}, partSwapTaskOrdered[E]{t.st, m, t.to})
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
