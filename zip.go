package magpie

import (
	"strconv"

	"github.com/magpie-go/magpie/forkjoin"
)

// Map2 returns a new slice holding f(a[i], b[i]) for every index i, in
// order, computing the calls in parallel on r: the sequential
//
//	for i := range a { out[i] = f(a[i], b[i]) }
//
// (rayon's zip followed by map). f must be safe to call concurrently. r,
// the options, the sequential threshold and panics are as for For. Map2
// panics if f is nil or the slices differ in length (TestMap2,
// TestZipInputs).
func Map2[A, B, R any](r forkjoin.Runner, a []A, b []B, f func(A, B) R, opts ...Option) []R {
	checkRunner("Map2", r)
	if f == nil {
		panic("magpie: Map2 called with a nil function")
	}
	if len(a) != len(b) {
		panic("magpie: Map2 called with slices of different lengths (" +
			strconv.Itoa(len(a)) + " and " + strconv.Itoa(len(b)) + ")")
	}
	out := make([]R, len(a))
	grain := collectOptions(opts).grain
	k := 0
	if smallInline(r, len(a), grain) {
		if len(a) <= slackBatch {
			map2Seq(a, b, out, f) // the plain loop: no slack check (slackgate.go)
			return out
		}
		// Inline while the slack lasts (slackgate.go); the rest, if any, below.
		if k = inlineWhileSlack(r, len(a), grain, func(lo, hi int) { map2Loop(a[lo:hi], b[lo:hi], out[lo:hi], f) }); k == len(a) {
			return out
		}
	}
	map2Range(r, a[k:], b[k:], out[k:], f, grain)
	return out
}

// map2Range is Map2's loop through the engine.
func map2Range[A, B, R any](r forkjoin.Runner, a []A, b []B, out []R, f func(A, B) R, grain int) {
	runRange(r, len(a), &rangeSpec[struct{}]{
		leaf: func(_ struct{}, lo, hi int) struct{} {
			map2Loop(a[lo:hi], b[lo:hi], out[lo:hi], f)
			return struct{}{}
		},
		grain: grain,
	})
}

// FilterMap returns, in the order of in, f(x) for every element x of in
// for which f reports true, calling f in parallel on r: Filter and Map
// fused (rayon's filter_map), the sequential
//
//	for _, x := range in { if y, ok := f(x); ok { out = append(out, y) } }
//
// The result is a new slice (nil if f keeps nothing: TestFilterMap). f
// must be safe to
// call concurrently. Memory is as for Filter. r, the options, the
// sequential threshold and panics are as for For. FilterMap panics if f is
// nil.
func FilterMap[E, R any](r forkjoin.Runner, in []E, f func(E) (R, bool), opts ...Option) []R {
	checkRunner("FilterMap", r)
	if f == nil {
		panic("magpie: FilterMap called with a nil function")
	}
	return filterMap(r, in, f, opts)
}

// filterMap is FilterMap after the argument checks: filterLeaves with a
// leaf that calls f once per element.
func filterMap[E, R any](r forkjoin.Runner, in []E, f func(E) (R, bool), opts []Option) []R {
	return filterLeaves(r, in, func(seg []R, part []E) []R {
		for _, x := range part {
			if y, ok := f(x); ok {
				seg = append(seg, y)
			}
		}
		return seg
	}, opts)
}

// filterLeaves runs FilterMap and Filter: appendKept(seg, part) appends to
// seg what the sequential loop keeps of part, in order, and returns it. It
// is called once per leaf, so that the user's function is the only call
// through a function value per element (Filter passed through FilterMap's
// f cost two: its wrapper, then keep). Each piece of the input collects
// what it keeps in a slice of its own; the pieces are then copied, in
// order, into the result.
func filterLeaves[E, R any](r forkjoin.Runner, in []E, appendKept func(seg []R, part []E) []R, opts []Option) []R {
	grain := collectOptions(opts).grain
	if smallInline(r, len(in), grain) {
		if len(in) <= slackBatch {
			return filterLeavesSeq(in, appendKept) // the plain loop: no slack check (slackgate.go)
		}
		// Inline while the slack lasts (slackgate.go); the rest's segments
		// follow the inline part's.
		var seg []R
		k := inlineWhileSlack(r, len(in), grain, func(lo, hi int) { seg = appendKept(seg, in[lo:hi]) })
		if k == len(in) {
			return seg
		}
		segs := filterSegments(r, in[k:], appendKept, grain)
		if len(seg) > 0 {
			segs = append([][]R{seg}, segs...)
		}
		return concatSegments(segs)
	}
	return concatSegments(filterSegments(r, in, appendKept, grain))
}

// filterSegments runs filterLeaves' loop over in through the engine and
// returns what the pieces kept, a segment per piece that kept something,
// in order.
func filterSegments[E, R any](r forkjoin.Runner, in []E, appendKept func(seg []R, part []E) []R, grain int) [][]R {
	s := &rangeSpec[[][]R]{
		// A piece that continues an earlier one appends to its last
		// segment, a new piece adds a segment only if it keeps something,
		// and segments combine in order.
		leaf: func(acc [][]R, lo, hi int) [][]R {
			var seg []R
			if len(acc) > 0 {
				seg = acc[len(acc)-1]
				acc = acc[:len(acc)-1]
			}
			seg = appendKept(seg, in[lo:hi])
			if len(seg) > 0 {
				acc = append(acc, seg)
			}
			return acc
		},
		combine: func(a, b [][]R) [][]R { return append(a, b...) },
		grain:   grain,
	}
	return runRange(r, len(in), s)
}

// concatSegments returns the segments joined in order (nil if empty),
// reusing a single segment as it is.
func concatSegments[R any](segs [][]R) []R {
	switch len(segs) {
	case 0:
		return nil
	case 1:
		return segs[0]
	}
	total := 0
	for _, seg := range segs {
		total += len(seg)
	}
	out := make([]R, total)
	at := out
	for _, seg := range segs {
		at = at[copy(at, seg):]
	}
	return out
}

// ForChunks calls body(lo, hi) once for each chunk of [0, n) of exactly
// size indices, [0, size), [size, 2·size), ..., the last one shorter if
// size does not divide n, in parallel on r, and returns when all calls
// have returned: the sequential
//
//	for lo := 0; lo < n; lo += size { body(lo, min(lo+size, n)) }
//
// Unlike ForRange, whose pieces the splitting chooses, the bounds are
// fixed by size, for work aligned to blocks (pages, rows of a matrix,
// batches). The chunks are the granularity: every chunk may run as a
// task of its own whatever n, so the sequential threshold does not apply;
// the calls run on the caller only when there is one chunk, when Grain
// covers every chunk, or when the pool has one worker or is closed
// (TestForChunks, TestForChunksParallel, TestClosedPoolRunsEveryHelperOnCaller). Grain(g) groups up to g consecutive chunks per
// task. r and panics are as for For. ForChunks panics if body is nil, n is negative or
// size is less than 1.
func ForChunks(r forkjoin.Runner, n, size int, body func(lo, hi int), opts ...Option) {
	checkRunner("ForChunks", r)
	if body == nil {
		panic("magpie: ForChunks called with a nil body")
	}
	checkN("ForChunks", n)
	if size < 1 {
		panic("magpie: ForChunks called with a size less than 1")
	}
	chunks := n / size
	if n%size != 0 {
		chunks++
	}
	grain := max(collectOptions(opts).grain, 1) // eager halving down to whole chunks
	if chunks <= grain {
		forChunksSeq(0, n, size, body)
		return
	}
	runRange(r, chunks, &rangeSpec[struct{}]{
		leaf: func(_ struct{}, lo, hi int) struct{} {
			for c := lo; c < hi; c++ {
				lo := c * size // c < chunks, so c*size < n: no overflow
				body(lo, lo+min(size, n-lo))
			}
			return struct{}{}
		},
		grain: grain,
	})
}

// map2Seq is Map2's loop over at most slackBatch elements on the caller,
// with a panic turned into a *forkjoin.PanicError as on the pool.
func map2Seq[A, B, R any](a []A, b []B, out []R, f func(A, B) R) {
	defer rethrow()
	map2Loop(a, b, out, f)
}

// map2Loop is Map2's leaf, on a worker or on the caller
// (inlineWhileSlack turns a panic into a *forkjoin.PanicError there).
func map2Loop[A, B, R any](a []A, b []B, out []R, f func(A, B) R) {
	b, out = b[:len(a)], out[:len(a)]
	for i, x := range a {
		out[i] = f(x, b[i])
	}
}

// filterLeavesSeq is filterLeaves' loop over at most slackBatch elements
// on the caller, with a panic turned into a *forkjoin.PanicError as on the
// pool.
func filterLeavesSeq[E, R any](in []E, appendKept func(seg []R, part []E) []R) []R {
	defer rethrow()
	return appendKept(nil, in)
}

func forChunksSeq(lo, n, size int, body func(lo, hi int)) {
	defer rethrow()
	for lo < n {
		hi := lo + min(size, n-lo) // lo+size may overflow when size is huge
		body(lo, hi)
		lo = hi
	}
}
