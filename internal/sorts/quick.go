package sorts

// What the two quicksort variants (quick_func.go and quick_ordered.go)
// share: pdqsort's bad-partition budget, its pattern-breaking generator and
// sortedness hints, and the index spans of the parallel partition. None of
// it compares elements, so one copy serves both variants.

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
