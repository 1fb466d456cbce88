package sorts

import (
	"cmp"
	"math/bits"
	"reflect"
	"slices"
	"unsafe"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// The radix sort behind Sort for integer and floating-point element types
// (docs/design.md, "Sorting", has the long form).
//
// Every element is mapped to an unsigned key of its own width whose
// unsigned order is the order of slices.Sort: for unsigned integers the
// bits themselves, for signed integers the bits with the sign bit flipped,
// for floats a bijection of the bits (radixFloatKey) that puts NaNs first,
// then -Inf ... -0.0, +0.0 ... +Inf. Integer keys are computed on the fly
// (one XOR); float slices are mapped to their keys in place before the
// sort and back after it.
//
// The sort is most-significant-digit first, one byte per level, then least
// significant digit first once a bucket fits in the L2 cache:
//
//  1. One parallel read pass computes the bits in which the keys differ
//     (OR ^ AND of all keys) and whether the slice is already sorted or
//     reversed (then it is done, or reversed, in that pass's time). The
//     most significant byte that differs is the first digit; leading bytes
//     every key shares cost nothing.
//  2. An MSD level on a range: a histogram of the digit (in parallel over
//     blocks of the range when it is large), then a stable scatter of each
//     block to its place in the other array (the slice or the scratch
//     buffer, ping-pong), then the 256 buckets are sorted in parallel
//     (fork-join over groups of buckets), each on the next byte. A digit
//     all keys of the range share is skipped without a scatter.
//  3. A range of at most radixLeaf elements is sorted sequentially by an
//     LSD radix sort on its remaining bytes: one pass counts every byte,
//     bytes with a single value are skipped, the others are scattered
//     between the two arrays while both stay in the L2 cache. Ranges of at
//     most radixInsertion elements are insertion-sorted.
//
// Every step is stable with respect to the key, and keys are a bijection
// of the bits, so the result depends only on the input's multiset: for
// floats, NaNs come first ordered by their key, and -0.0 before +0.0.
//
// Cancellation and panics: the only panics possible are the runtime's
// (cancellation at a fork or task start). Each range keeps the invariant
// that its elements are all in one array, known to its parent: a scatter
// only reads its source, and a range that unwinds, or that its parent finds
// never started (its done flag unset), has its elements copied back to the
// slice if they were in the buffer. So a canceled sort leaves the slice a
// permutation of its input (for floats, after the keys are mapped back,
// block by block as recorded by flags).

// radixMin is the length from which Sort uses the radix sort on integer
// and float types: below it slices.Sort (pdqsort) is as fast, and needs no
// buffer. BenchmarkSortRadixThreshold measures it.
const radixMin = 1 << 12

// radixLeaf is the length up to which a range is sorted sequentially by an
// LSD radix sort: two arrays of 64K eight-byte keys fill a 1 MiB L2. It
// also decides how many MSD levels run before the leaves: with 1<<15, the
// 39K-element buckets of 10M random keys took a second MSD level and left
// buckets of about 150, whose per-leaf fixed costs (histograms, prefix
// sums) dominated; with 1<<16 they go to the leaf at once. 1<<16 was the
// fastest of 1<<15, 1<<16 and 1<<17 on 10M random int64 (the figures are
// in docs/design.md, "Sorting").
const radixLeaf = 1 << 16

// radixInsertion is the length up to which a range is insertion-sorted.
const radixInsertion = 48

// radixBlockMin is the smallest block of an MSD level done in parallel;
// radixBlocksPerWorker is how many blocks a level has per worker at most.
const (
	radixBlockMin        = 1 << 15
	radixBlocksPerWorker = 4
)

// radixGroupMin is the number of elements below which a run of adjacent
// buckets is sorted by one task instead of a task each.
const radixGroupMin = 1 << 14

// radixWord is the key type of the radix sort.
type radixWord interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// sortRadix sorts s by radix if E is an integer or floating-point type,
// and reports whether it did.
func sortRadix[E cmp.Ordered](r forkjoin.Runner, s []E) bool {
	var zero E
	size := unsafe.Sizeof(zero)
	p := unsafe.Pointer(unsafe.SliceData(s))
	n := len(s)
	switch reflect.TypeFor[E]().Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch size {
		case 1:
			radixRun(r, unsafe.Slice((*uint8)(p), n), 1<<7)
		case 2:
			radixRun(r, unsafe.Slice((*uint16)(p), n), 1<<15)
		case 4:
			radixRun(r, unsafe.Slice((*uint32)(p), n), 1<<31)
		case 8:
			radixRun(r, unsafe.Slice((*uint64)(p), n), 1<<63)
		default:
			return false
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		switch size {
		case 1:
			radixRun(r, unsafe.Slice((*uint8)(p), n), 0)
		case 2:
			radixRun(r, unsafe.Slice((*uint16)(p), n), 0)
		case 4:
			radixRun(r, unsafe.Slice((*uint32)(p), n), 0)
		case 8:
			radixRun(r, unsafe.Slice((*uint64)(p), n), 0)
		default:
			return false
		}
	case reflect.Float32:
		radixRunFloat(r, unsafe.Slice((*uint32)(p), n), 23)
	case reflect.Float64:
		radixRunFloat(r, unsafe.Slice((*uint64)(p), n), 52)
	default:
		return false
	}
	return true
}

// radixFloatKey maps the bits b of an IEEE 754 float with a mantissa of
// mant bits to its key: the sign-magnitude bits made monotonic (negative
// values complemented, positive ones with the sign bit set), then rotated
// by 2^mant-1 so that the 2^(mant+1)-2 NaN patterns, which the monotonic
// map sends below -Inf (negative NaNs) and above +Inf (positive ones),
// all come first: positive NaNs, then negative NaNs, then -Inf.
func radixFloatKey[U radixWord](b U, mant uint) U {
	width := uint(unsafe.Sizeof(b)) * 8
	sign := U(1) << (width - 1)
	neg := U(0) - (b >> (width - 1)) // all ones if the sign bit is set
	return (b ^ (neg | sign)) + (U(1)<<mant - 1)
}

// radixFloatBits is the inverse of radixFloatKey.
func radixFloatBits[U radixWord](k U, mant uint) U {
	width := uint(unsafe.Sizeof(k)) * 8
	sign := U(1) << (width - 1)
	t := k - (U(1)<<mant - 1)
	if t&sign != 0 {
		return t ^ sign
	}
	return ^t
}

// radixState is one radix sort: the slice, the scratch buffer of the same
// length, and the key's flip (the sign bit for signed integers).
type radixState[U radixWord] struct {
	s, buf  []U
	flip    U
	workers int
}

// radixBlocks is the number of parallel blocks for a pass over m elements.
func (st *radixState[U]) radixBlocks(m int) int { return radixBlockCount(st.workers, m) }

// radixBlockCount is the number of parallel blocks for a pass over m
// elements on a pool of the given parallelism.
func radixBlockCount(workers, m int) int {
	return max(1, min(workers*radixBlocksPerWorker, m/radixBlockMin))
}

// forBlocks runs fn(w', 0), ..., fn(w', nb-1) in parallel on w by binary
// fork-join, w' being the worker that runs the block (fn must use it, not
// a captured one); one block runs inline.
func forBlocks(w *forkjoin.Worker, nb int, fn func(w *forkjoin.Worker, b int)) {
	if nb == 1 {
		fn(w, 0)
		return
	}
	blockTask{fn: fn, b0: 0, b1: nb}.Compute(w)
}

// blockTask runs fn on blocks [b0, b1).
type blockTask struct {
	fn     func(w *forkjoin.Worker, b int)
	b0, b1 int
}

func (t blockTask) Compute(w *forkjoin.Worker) struct{} {
	if t.b1-t.b0 == 1 {
		t.fn(w, t.b0)
		return struct{}{}
	}
	mid := t.b0 + (t.b1-t.b0)/2
	task.InvokeBoth[struct{}, struct{}](w, blockTask{t.fn, t.b0, mid}, blockTask{t.fn, mid, t.b1})
	return struct{}{}
}

// blockBounds returns block b of nb blocks over [lo, hi).
func blockBounds(lo, hi, nb, b int) (int, int) {
	m := hi - lo
	return lo + m*b/nb, lo + m*(b+1)/nb
}

// radixRun sorts s (keys v^flip) on r.
func radixRun[U radixWord](r forkjoin.Runner, s []U, flip U) {
	if !runSort(r, func(w *forkjoin.Worker) {
		radixSortKeys(w, s, flip)
	}) {
		radixSeq(s, func(v U) U { return v ^ flip }, func(k U) U { return k ^ flip })
	}
}

// radixSeq is the radix sort on the caller's goroutine, for a pool that
// refused it (closed): s mapped to its keys, sorted by slices.Sort, mapped
// back. The keys are unsigned integers, of which slices.Sort gives the one
// sorted order the radix sort gives, bit for bit (TestSortsOnClosedPool).
func radixSeq[U radixWord](s []U, key, unkey func(U) U) {
	for i, v := range s {
		s[i] = key(v)
	}
	slices.Sort(s)
	for i, k := range s {
		s[i] = unkey(k)
	}
}

// radixRunFloat sorts the float bits in s (mantissa of mant bits) on r: it
// maps them to keys in place, sorts the keys, and maps them back. Blocks
// record which of them were mapped, so that a cancellation at any point
// leaves s holding the original bits, permuted.
func radixRunFloat[U radixWord](r forkjoin.Runner, s []U, mant uint) {
	if !runSort(r, func(w *forkjoin.Worker) {
		n := len(s)
		nb := radixBlockCount(w.Pool().Parallelism(), n)
		mapped := make([]bool, nb) // block b holds keys
		finished := false
		defer func() {
			if finished {
				return
			}
			// Unwinding: every block marked holds keys (sorted or not);
			// map them back.
			for b, k := range mapped {
				if k {
					lo, hi := blockBounds(0, n, nb, b)
					for i := lo; i < hi; i++ {
						s[i] = radixFloatBits(s[i], mant)
					}
				}
			}
		}()
		forBlocks(w, nb, func(w *forkjoin.Worker, b int) {
			lo, hi := blockBounds(0, n, nb, b)
			for i := lo; i < hi; i++ {
				s[i] = radixFloatKey(s[i], mant)
			}
			mapped[b] = true
		})
		// From here every block holds keys, whatever the sort does: the
		// sort only permutes them within s (and copies them back there
		// when it unwinds).
		radixSortKeys(w, s, 0)
		forBlocks(w, nb, func(w *forkjoin.Worker, b int) {
			lo, hi := blockBounds(0, n, nb, b)
			for i := lo; i < hi; i++ {
				s[i] = radixFloatBits(s[i], mant)
			}
			mapped[b] = false
		})
		finished = true
	}) {
		radixSeq(s, func(b U) U { return radixFloatKey(b, mant) }, func(k U) U { return radixFloatBits(k, mant) })
	}
}

// radixSortKeys sorts s by key v^flip on w.
func radixSortKeys[U radixWord](w *forkjoin.Worker, s []U, flip U) {
	n := len(s)
	workers := w.Pool().Parallelism()
	nb := radixBlockCount(workers, n)

	// One read pass: the bits in which keys differ, and whether the slice
	// is sorted (ascending) or reversed (non-increasing) already. The
	// order is tracked only until both directions have failed, a few
	// elements into most unsorted input, whose compare-and-branch per
	// element is mispredicted half the time; a block found unsorted is
	// then read to its end by radixCountTop, which also counts the top
	// byte of its keys. That byte is the first MSD digit whenever the keys
	// differ there (random keys of the type's whole range), and that level
	// then needs no histogram pass of its own. A block found sorted or
	// reversed counts nothing: a histogram of keys that repeat their top
	// byte from one element to the next (sorted, equal) is a chain of
	// increments of one counter, three times the cost of the pass itself
	// (BenchmarkSortRadixDists, docs/benchmarks.md).
	type scan struct {
		or, and   U
		asc, desc bool
	}
	top := uint(unsafe.Sizeof(flip))*8 - 8
	scans := make([]scan, nb)
	hists := make([]radixHist, nb)
	forBlocks(w, nb, func(w *forkjoin.Worker, b int) {
		lo, hi := blockBounds(0, n, nb, b)
		first := s[max(lo-1, 0)] // overlap one element to see the boundary
		or, and, asc, desc := radixScanOrder(s[lo:hi], first, flip)
		if !asc && !desc {
			// The OR and AND of the prefix read above count again,
			// harmlessly.
			or, and = radixCountTop(s[lo:hi], &hists[b], flip, top)
		}
		scans[b] = scan{or, and, asc, desc}
	})
	diff := U(0)
	or, and := U(0), ^U(0)
	asc, desc := true, true
	for _, sc := range scans {
		or |= sc.or
		and &= sc.and
		asc = asc && sc.asc
		desc = desc && sc.desc
	}
	diff = or ^ and
	if diff == 0 || asc {
		return
	}
	if desc {
		// Keys are a bijection of the bits: equal keys are identical
		// elements, so reversing gives the sorted slice.
		forBlocks(w, nb, func(w *forkjoin.Worker, b int) {
			lo, hi := blockBounds(0, n/2, nb, b)
			for i := lo; i < hi; i++ {
				s[i], s[n-1-i] = s[n-1-i], s[i]
			}
		})
		return
	}
	shift := (bits.Len64(uint64(diff)) - 1) &^ 7
	st := &radixState[U]{s: s, buf: make([]U, n), flip: flip, workers: workers}
	var done bool
	counted := true // every block unsorted, so its top byte counted
	for _, sc := range scans {
		counted = counted && !sc.asc && !sc.desc
	}
	if counted && n > radixLeaf && uint(shift) == top {
		// The blocks of this pass are those of the first MSD level
		// (radixBlocks(n)), so its histograms are that level's.
		st.sortRange(w, 0, n, false, shift, &done, hists)
		return
	}
	st.sortBucket(w, 0, n, false, shift, &done)
}

// sortBucket sorts [lo, hi) as sortRange does, but sends a range of at
// most radixLeaf elements straight to the leaf, past sortRange's frame:
// the bucket offsets and groups that sortRange's forked passes capture
// escape to the heap on entry, 2-4 KiB per call, which every bucket of the
// last MSD level paid when it entered sortRange only to go to the leaf
// (66.6K allocations, ~76 MB beside the 80 MB buffer, per sort of 10M
// non-negative int64: docs/benchdata/radix-alloc-2026-12-04T1325Z.txt;
// TestRadixSortAllocatesOnlyItsBuffer). *done and the unwinding are as in
// sortRange.
func (st *radixState[U]) sortBucket(w *forkjoin.Worker, lo, hi int, inBuf bool, shift int, done *bool) {
	if hi-lo > radixLeaf {
		st.sortRange(w, lo, hi, inBuf, shift, done, nil)
		return
	}
	finished := false
	defer func() {
		if !finished && inBuf {
			copy(st.s[lo:hi], st.buf[lo:hi])
		}
		*done = true
	}()
	st.leaf(lo, hi, inBuf, shift)
	finished = true
}

// diffBits returns the bits in which the keys of src[lo:hi] differ (the OR
// of all keys xor their AND), in parallel over blocks.
func (st *radixState[U]) diffBits(w *forkjoin.Worker, src []U, lo, hi int) U {
	nb := st.radixBlocks(hi - lo)
	ors, ands := make([]U, nb), make([]U, nb)
	flip := st.flip
	forBlocks(w, nb, func(w *forkjoin.Worker, b int) {
		blo, bhi := blockBounds(lo, hi, nb, b)
		or, and := U(0), ^U(0)
		for _, v := range src[blo:bhi] {
			or |= v ^ flip
			and &= v ^ flip
		}
		ors[b], ands[b] = or, and
	})
	or, and := U(0), ^U(0)
	for b := range nb {
		or |= ors[b]
		and &= ands[b]
	}
	return or ^ and
}

// radixHist is one block's histogram of a digit, then its scatter offsets.
type radixHist [256]int

// sortRange sorts the elements of [lo, hi), which are in st.buf if inBuf
// and in st.s otherwise, on the digit at bit shift and the lower ones,
// leaving them in st.s. When it returns, or unwinds, the range's elements
// are in st.s (sorted if it returned) and *done is true. It is called,
// through sortBucket, only for ranges of more than radixLeaf elements.
//
// pre, if not nil, is the histogram of the digit at shift over the blocks
// radixBlocks(hi-lo) of [lo, hi) (radixSortKeys's read pass computed it).
func (st *radixState[U]) sortRange(w *forkjoin.Worker, lo, hi int, inBuf bool, shift int, done *bool, pre []radixHist) {
	// children, when not nil, are the buckets forked on the last level:
	// on unwinding, those never finished have their elements in the array
	// the scatter wrote to.
	var (
		bucketLo [257]int
		children *[256]bool
		finished bool
	)
	defer func() {
		if !finished {
			if children != nil {
				if inBuf {
					for d := range 256 {
						if !children[d] {
							copy(st.s[bucketLo[d]:bucketLo[d+1]], st.buf[bucketLo[d]:bucketLo[d+1]])
						}
					}
				}
			} else if inBuf {
				// The scatter only reads its source: the elements are all
				// still there.
				copy(st.s[lo:hi], st.buf[lo:hi])
			}
		}
		*done = true
	}()
	m := hi - lo
	for {
		src, dst := st.s, st.buf
		if inBuf {
			src, dst = dst, src
		}
		nb := st.radixBlocks(m)
		flip := st.flip
		sh := uint(shift)
		hists := pre
		pre = nil
		if hists == nil {
			hists = make([]radixHist, nb)
			forBlocks(w, nb, func(w *forkjoin.Worker, b int) {
				blo, bhi := blockBounds(lo, hi, nb, b)
				h := &hists[b]
				for _, v := range src[blo:bhi] {
					h[byte((v^flip)>>sh)]++
				}
			})
		}
		var total radixHist
		for b := range hists {
			for d, c := range hists[b] {
				total[d] += c
			}
		}
		if total[byte((src[lo]^flip)>>sh)] == m {
			// Every key has this digit. Rather than a histogram for each
			// further byte the keys share (seven read passes for a bucket
			// of equal 8-byte keys), one read pass finds the bits in which
			// they differ; they lie below this digit.
			var diff U
			if shift > 0 {
				diff = st.diffBits(w, src, lo, hi)
			}
			if diff == 0 { // all keys equal: sorted
				if inBuf {
					copy(st.s[lo:hi], st.buf[lo:hi])
				}
				finished = true
				return
			}
			shift = (bits.Len64(uint64(diff)) - 1) &^ 7
			continue
		}
		// Offsets: bucket d starts at bucketLo[d]; block b's part of it
		// follows the parts of blocks before b.
		pos := lo
		for d := range 256 {
			bucketLo[d] = pos
			for b := range hists {
				c := hists[b][d]
				hists[b][d] = pos
				pos += c
			}
		}
		bucketLo[256] = hi
		forBlocks(w, nb, func(w *forkjoin.Worker, b int) {
			blo, bhi := blockBounds(lo, hi, nb, b)
			radixScatter(dst, src[blo:bhi], &hists[b], flip, sh)
		})
		inBuf = !inBuf
		if shift == 0 {
			// Each bucket holds equal keys: sorted.
			if inBuf {
				copy(st.s[lo:hi], st.buf[lo:hi])
			}
			finished = true
			return
		}
		// Sort the buckets in parallel, in groups of adjacent buckets of
		// at least radixGroupMin elements.
		children = new([256]bool)
		var groups [257]int
		ng := 0
		for d := 0; d < 256; {
			groups[ng] = d
			ng++
			start := bucketLo[d]
			d++
			for d < 256 && bucketLo[d]-start < radixGroupMin {
				d++
			}
		}
		groups[ng] = 256
		next := shift - 8
		in := inBuf
		forBlocks(w, ng, func(w *forkjoin.Worker, g int) {
			for d := groups[g]; d < groups[g+1]; d++ {
				if bucketLo[d] == bucketLo[d+1] {
					children[d] = true
					continue
				}
				st.sortBucket(w, bucketLo[d], bucketLo[d+1], in, next, &children[d])
			}
		})
		finished = true
		return
	}
}

// leaf sorts [lo, hi) sequentially by LSD radix sort on the digits at bit
// shift and below, ping-ponging between st.s and st.buf, and leaves the
// result in st.s. Its elements are in st.buf if inBuf.
func (st *radixState[U]) leaf(lo, hi int, inBuf bool, shift int) {
	src, dst := st.s[lo:hi], st.buf[lo:hi]
	if inBuf {
		src, dst = dst, src
	}
	flip := st.flip
	m := hi - lo
	if m <= radixInsertion {
		for i := 1; i < m; i++ {
			v := src[i]
			k := v ^ flip
			j := i
			for j > 0 && src[j-1]^flip > k {
				src[j] = src[j-1]
				j--
			}
			src[j] = v
		}
		if inBuf {
			copy(dst, src)
		}
		return
	}
	nd := shift/8 + 1
	var cnt [8][256]uint32
	// The counting loop is written out for 4 and 8 bytes so that neither
	// tests nd per element.
	if nd <= 4 {
		for _, v := range src {
			k := uint64(v ^ flip)
			cnt[0][byte(k)]++
			cnt[1][byte(k>>8)]++
			cnt[2][byte(k>>16)]++
			cnt[3][byte(k>>24)]++
		}
	} else {
		for _, v := range src {
			k := uint64(v ^ flip)
			cnt[0][byte(k)]++
			cnt[1][byte(k>>8)]++
			cnt[2][byte(k>>16)]++
			cnt[3][byte(k>>24)]++
			cnt[4][byte(k>>32)]++
			cnt[5][byte(k>>40)]++
			cnt[6][byte(k>>48)]++
			cnt[7][byte(k>>56)]++
		}
	}
	k0 := uint64(src[0] ^ flip)
	for j := 0; j < nd; j++ {
		sh := uint(8 * j)
		c := &cnt[j]
		if int(c[byte(k0>>sh)]) == m {
			continue // every key has this digit
		}
		var off radixHist
		pos := 0
		for d := range 256 {
			off[d] = pos
			pos += int(c[d])
		}
		radixScatter(dst, src, &off, flip, sh)
		src, dst = dst, src
		inBuf = !inBuf
	}
	if inBuf {
		copy(dst, src)
	}
}

// radixScatter moves each element v of src to dst[off[d]], d being the
// byte of its key v^flip at bit sh, and advances off[d]: one stable
// scatter pass, off holding each digit's first position on entry. It is a
// function of its own, kept out of line, so that its loop gets registers
// to itself: written inside leaf, whose frame holds the 8 KiB of
// histograms, the loop kept its index, element and digit on the stack,
// six memory operations per element beside the move itself.
//
//go:noinline
func radixScatter[U radixWord](dst, src []U, off *radixHist, flip U, sh uint) {
	sh &= 63 // sh < 64: the shift needs no check for a larger count
	for _, v := range src {
		d := byte(uint64(v^flip) >> sh)
		dst[off[d]] = v
		off[d]++
	}
}

// radixCountTop adds the byte at bit top of each key v^flip of src to h
// and returns the OR and the AND of the keys: radixSortKeys's read pass
// over a block found unsorted. Out of line for the reason radixScatter
// is.
//
//go:noinline
func radixCountTop[U radixWord](src []U, h *radixHist, flip U, top uint) (or, and U) {
	top &= 63 // top < 64: the shift needs no check for a larger count
	and = ^U(0)
	for _, v := range src {
		k := v ^ flip
		or |= k
		and &= k
		h[byte(uint64(k)>>top)]++
	}
	return or, and
}

// radixScanOrder returns the OR and the AND of the keys v^flip of a
// prefix of src and whether src is ascending or non-increasing after
// prev: it reads src to its end if src is either, and stops within 64
// elements of the one where it finds it is neither (a few elements into
// unsorted input). Out of line for the reason radixScatter is.
//
//go:noinline
func radixScanOrder[U radixWord](src []U, prev, flip U) (or, and U, asc, desc bool) {
	and = ^U(0)
	asc, desc = true, true
	kp := prev ^ flip
	for len(src) > 0 && (asc || desc) {
		// Runs of 64 keep the test of both flags out of the inner loop,
		// which sorted input runs to the end.
		run := src[:min(len(src), 64)]
		src = src[len(run):]
		for _, v := range run {
			k := v ^ flip
			or |= k
			and &= k
			if k < kp {
				asc = false
			} else if k > kp {
				desc = false
			}
			kp = k
		}
	}
	return or, and, asc, desc
}
