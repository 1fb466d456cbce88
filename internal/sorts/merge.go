package sorts

import (
	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// The parallel stable merge sort behind StableFunc (magpie.SortStableFunc).
//
// The range is halved recursively (a fixed, balanced tree: node id has
// children 2id and 2id+1) down to leaves of at most leaf elements. Each
// node sorts its range into a target, the slice or the buffer, alternating
// by depth (the root's target is the slice): its children sort into the
// other one, and the node merges their runs from there into its target,
// splitting the merge in parallel. So every level moves each element once
// and no level copies.
//
// Panics. Every node guarantees: if it returns normally, its range holds
// its elements in its target; if it panics (or never ran, being a forked
// child dropped when its sibling panicked), its range holds a permutation
// of them in the slice. The done flags tell a panicking parent which of its
// children completed, and so where each half is; it brings both halves back
// to the slice before re-panicking. Merges only write their target, so a
// panic during a merge leaves the source runs whole.

const (
	// stableInsertion is the length up to which StableFunc is a plain
	// insertion sort in place, with no buffer.
	stableInsertion = 24
	// stableRun is the length of the insertion-sorted runs a leaf starts
	// with, before merging them bottom-up.
	stableRun = 24
	// stableLeaf is the default leaf size of the parallel merge sort and
	// the length below which a merge runs sequentially.
	stableLeaf = 4096
)

// stableState is shared by all tasks of one StableFunc call.
type stableState[E any] struct {
	s, buf []E
	cmp    func(a, b E) int
	leaf   int
	done   []bool // done[id]: node id returned normally
}

func newStableState[E any](s []E, leaf int, cmp func(a, b E) int) *stableState[E] {
	depth := 0
	for m := len(s); m > leaf; m = (m + 1) / 2 {
		depth++
	}
	return &stableState[E]{
		s:    s,
		buf:  make([]E, len(s)),
		cmp:  cmp,
		leaf: leaf,
		done: make([]bool, 2<<depth),
	}
}

// stableTask sorts st.s[lo:hi] into its target (st.buf if toBuf).
type stableTask[E any] struct {
	st     *stableState[E]
	lo, hi int
	id     int
	toBuf  bool
}

func (t stableTask[E]) Compute(w *forkjoin.Worker) struct{} {
	st, lo, hi := t.st, t.lo, t.hi
	if hi-lo <= st.leaf {
		st.leafSort(lo, hi, t.toBuf)
		st.done[t.id] = true
		return struct{}{}
	}
	mid := lo + (hi-lo)/2
	phase := 0 // 0: sorting the halves; 1: merging them; 2: done
	defer func() {
		if phase == 2 {
			return
		}
		v := recover()
		var pe *forkjoin.PanicError
		if v != nil {
			pe = forkjoin.CapturePanic(v)
		}
		if phase == 0 {
			st.restore(lo, mid, 2*t.id, !t.toBuf)
			st.restore(mid, hi, 2*t.id+1, !t.toBuf)
		} else if !t.toBuf {
			// The runs being merged are whole, in the buffer.
			copy(st.s[lo:hi], st.buf[lo:hi])
		}
		if v != nil {
			panic(pe)
		} // else runtime.Goexit: let it unwind
	}()
	task.InvokeBoth[struct{}, struct{}](w,
		stableTask[E]{st, lo, mid, 2 * t.id, !t.toBuf},
		stableTask[E]{st, mid, hi, 2*t.id + 1, !t.toBuf})
	phase = 1
	src, dst := st.s, st.buf
	if !t.toBuf {
		src, dst = st.buf, st.s
	}
	mergeTask[E]{src[lo:mid], src[mid:hi], dst[lo:hi], st.cmp, st.leaf}.Compute(w)
	phase = 2
	st.done[t.id] = true
	return struct{}{}
}

// restore brings the range of child node id back to the slice if the child
// completed into the buffer (one that panicked or never ran left it there).
func (st *stableState[E]) restore(lo, hi, id int, toBuf bool) {
	if st.done[id] && toBuf {
		copy(st.s[lo:hi], st.buf[lo:hi])
	}
}

// leafSort sorts st.s[lo:hi] sequentially into its target: insertion sort
// of short runs, then bottom-up merge passes between the slice and the
// buffer, starting in whichever makes the last pass land in the target.
func (st *stableState[E]) leafSort(lo, hi int, toBuf bool) {
	s, buf, cmp := st.s[lo:hi], st.buf[lo:hi], st.cmp
	n := hi - lo
	passes := 0
	for width := stableRun; width < n; width *= 2 {
		passes++
	}
	inBuf := toBuf != (passes%2 == 1) // where the data is whole right now
	finished := false
	defer func() {
		if !finished {
			v := recover()
			var pe *forkjoin.PanicError
			if v != nil {
				pe = forkjoin.CapturePanic(v)
			}
			if inBuf {
				copy(s, buf)
			}
			if v != nil {
				panic(pe)
			}
		}
	}()
	cur, other := s, buf
	if inBuf {
		copy(buf, s)
		cur, other = buf, s
	}
	for i := 0; i < n; i += stableRun {
		insertionSortStable(cur[i:min(i+stableRun, n)], cmp)
	}
	for width := stableRun; width < n; width *= 2 {
		for i := 0; i < n; i += 2 * width {
			m, e := min(i+width, n), min(i+2*width, n)
			mergeSeq(cur[i:m], cur[m:e], other[i:e], cmp)
		}
		cur, other = other, cur
		inBuf = !inBuf
	}
	finished = true
}

// insertionSortStable sorts s stably in place. It moves elements only by
// swaps, each after its comparison, so that a panicking cmp leaves a
// permutation of s.
func insertionSortStable[E any](s []E, cmp func(a, b E) int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && cmp(s[j], s[j-1]) < 0; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// mergeTask merges the sorted runs a and b into dst (len(a)+len(b)),
// taking a's element first among equal ones.
type mergeTask[E any] struct {
	a, b, dst []E
	cmp       func(a, b E) int
	grain     int
}

// Compute splits the merge in two independent merges until it is below the
// grain: the median of the longer run is the splitting element, and the
// shorter run is cut at its lower bound (a longer: b's elements < it go
// left) or its upper bound (b longer: a's elements <= it go left). Either
// way every element on the left sorts before or equal to every element on
// the right, and equal elements of a stay left of those of b.
func (t mergeTask[E]) Compute(w *forkjoin.Worker) struct{} {
	a, b, cmp := t.a, t.b, t.cmp
	if len(t.dst) <= t.grain || len(a) == 0 || len(b) == 0 || !(cmp(b[0], a[len(a)-1]) < 0) {
		mergeSeq(a, b, t.dst, cmp)
		return struct{}{}
	}
	var i, j int
	if len(a) >= len(b) {
		i = len(a) / 2
		p := a[i]
		j = searchCmp(len(b), func(k int) bool { return !(cmp(b[k], p) < 0) })
	} else {
		j = len(b) / 2
		p := b[j]
		i = searchCmp(len(a), func(k int) bool { return cmp(p, a[k]) < 0 })
	}
	task.InvokeBoth[struct{}, struct{}](w,
		mergeTask[E]{a[:i], b[:j], t.dst[:i+j], cmp, t.grain},
		mergeTask[E]{a[i:], b[j:], t.dst[i+j:], cmp, t.grain})
	return struct{}{}
}

// searchCmp returns the first k in [0, n) with f(k), or n; f must be false
// then true over [0, n).
func searchCmp(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !f(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// mergeSeq merges the sorted runs a and b into dst, stably (a first among
// equals). Runs already in order are copied.
func mergeSeq[E any](a, b, dst []E, cmp func(a, b E) int) {
	if len(a) == 0 || len(b) == 0 || !(cmp(b[0], a[len(a)-1]) < 0) {
		copy(dst[copy(dst, a):], b)
		return
	}
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if cmp(b[j], a[i]) < 0 {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}
