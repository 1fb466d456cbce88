package magpie

import (
	"cmp"

	"github.com/magpie-go/magpie/forkjoin"
)

// Map returns a new slice holding f(x) for every element x of in, in the
// order of in, computing the calls in parallel on r. f must be safe to call
// concurrently. r, the options (Grain), the sequential threshold and panics
// are as for For. Map panics if f is nil.
//
// Map of a cheap f over a large slice is bound by memory bandwidth, not by
// the cores: it then runs about as fast as hand-chunked goroutines, which
// gain no more from a second core than it does.
func Map[E, R any](r forkjoin.Runner, in []E, f func(E) R, opts ...Option) []R {
	checkRunner("Map", r)
	if f == nil {
		panic("magpie: Map called with a nil function")
	}
	whole := make([]R, len(in))
	out := whole
	grain := collectOptions(opts).grain
	if smallInline(r, len(in), grain) {
		// Inline while the slack lasts (slackgate.go); the rest, if any, below.
		k := inlineWhileSlack(r, len(in), grain, func(lo, hi int) { mapSeq(in[lo:hi], out[lo:hi], f) })
		if k == len(in) {
			return whole
		}
		in, out = in[k:], out[k:]
	}
	s := &rangeSpec[struct{}]{
		leaf: func(_ struct{}, lo, hi int) struct{} {
			in, out := in[lo:hi], out[lo:hi]
			for i, x := range in {
				out[i] = f(x)
			}
			return struct{}{}
		},
		grain: grain,
	}
	runRange(r, len(in), s)
	return whole
}

// MapInPlace replaces every element x of s by f(x), in parallel on r. It is
// Map without the new slice. r, the options, the sequential threshold and
// panics are as for For. MapInPlace panics if f is nil.
func MapInPlace[S ~[]E, E any](r forkjoin.Runner, s S, f func(E) E, opts ...Option) {
	checkRunner("MapInPlace", r)
	if f == nil {
		panic("magpie: MapInPlace called with a nil function")
	}
	grain := collectOptions(opts).grain
	if smallInline(r, len(s), grain) {
		// Inline while the slack lasts (slackgate.go); the rest, if any, below.
		k := inlineWhileSlack(r, len(s), grain, func(lo, hi int) { mapSeq(s[lo:hi], s[lo:hi], f) })
		if k == len(s) {
			return
		}
		s = s[k:]
	}
	spec := &rangeSpec[struct{}]{
		leaf: func(_ struct{}, lo, hi int) struct{} {
			s := s[lo:hi]
			for i, x := range s {
				s[i] = f(x)
			}
			return struct{}{}
		},
		grain: grain,
	}
	runRange(r, len(s), spec)
}

// Reduce folds in in parallel on r. The slice is cut into consecutive
// pieces; each piece is folded left to right from zero with fold, and the
// results of adjacent pieces are joined left to right with combine. When
// combine is associative and zero is its identity, and fold(acc, x) equals
// combine(acc, fold(zero, x)), the result equals the sequential left fold
//
//	acc := zero
//	for _, x := range in { acc = fold(acc, x) }
//
// whatever the pieces; order is always kept, so combine need not be
// commutative. Floating-point addition is not associative: a float sum may
// differ from the sequential one in its last bits, and is reproducible only
// with a fixed Grain and one pool size. An empty in returns zero.
//
// fold and combine must be safe to call concurrently, and must not modify
// values shared between pieces. **zero is copied into every piece: a zero
// that holds a map, a slice or a pointer is shared by all of them**, and a
// fold that writes into it races with the other pieces. For such an
// accumulator use ReduceWith, which makes a fresh one per piece. r, the options, the
// sequential threshold and panics are as for For. Reduce panics if fold or
// combine is nil.
//
// fold is called through a function value once per element, as For calls
// its body: for a fold of a few nanoseconds that call is a large part of
// the cost, and ReduceRange, whose leaf is the caller's own loop with the
// fold inlined, or Sum, Min and Max, which loop with the operator inlined,
// are faster (docs/benchmarks.md, "Reduce and For against ForRange").
func Reduce[E, A any](r forkjoin.Runner, in []E, zero A, fold func(A, E) A,
	combine func(A, A) A, opts ...Option) A {
	checkRunner("Reduce", r)
	if fold == nil {
		panic("magpie: Reduce called with a nil fold")
	}
	if combine == nil {
		panic("magpie: Reduce called with a nil combine")
	}
	grain := collectOptions(opts).grain
	rest := func(k int) A {
		s := foldSpec(in[k:], fold, combine, grain)
		s.zero = zero
		return runRange(r, len(in)-k, s)
	}
	if smallInline(r, len(in), grain) {
		if len(in) <= slackBatch {
			return reduceSeq(in, zero, fold) // the plain loop: no slack check (slackgate.go)
		}
		// Inline while the slack lasts (slackgate.go): the rest is folded
		// from zero and combined after the inline part.
		return reduceWhileSlack(r, len(in), grain, zero, func(acc A, lo, hi int) A {
			return foldLoop(in[lo:hi], acc, fold)
		}, rest, combine)
	}
	return rest(0)
}

// foldSpec is the range spec of Reduce and ReduceWith: each piece folds
// its subrange of in, and pieces combine in index order; the caller sets
// the spec's zero or newZero.
func foldSpec[E, A any](in []E, fold func(A, E) A, combine func(A, A) A, grain int) *rangeSpec[A] {
	return &rangeSpec[A]{
		leaf:    func(acc A, lo, hi int) A { return foldLoop(in[lo:hi], acc, fold) },
		combine: combine,
		grain:   grain,
	}
}

// ReduceWith is Reduce for an accumulator that must not be shared between
// pieces (a map, a slice to append to, a per-piece statistics struct):
// each piece starts from a value newAcc makes for it, rayon's fold_with and
// Java's collect(supplier, accumulator, combiner). With newAcc returning
// a fresh empty value each time, and combine merging two accumulators, the
// result equals the sequential
//
//	acc := newAcc()
//	for _, x := range in { acc = fold(acc, x) }
//
// newAcc, fold and combine must be safe to call concurrently; newAcc is
// called once per piece (once in all when the loop runs on the caller), and
// an accumulator is folded by one piece only (TestReduceWith,
// TestReduceWithAccumulatorPerPiece).
// r, the options, the sequential threshold and panics are as for Reduce.
// ReduceWith panics if newAcc, fold or combine is nil.
func ReduceWith[E, A any](r forkjoin.Runner, in []E, newAcc func() A, fold func(A, E) A,
	combine func(A, A) A, opts ...Option) A {
	checkRunner("ReduceWith", r)
	switch {
	case newAcc == nil:
		panic("magpie: ReduceWith called with a nil newAcc")
	case fold == nil:
		panic("magpie: ReduceWith called with a nil fold")
	case combine == nil:
		panic("magpie: ReduceWith called with a nil combine")
	}
	// A panic in newAcc reaches the caller as a *PanicError wherever the
	// piece started (the caller's goroutine or a worker), as fold's does.
	fresh := func() A {
		defer rethrow()
		return newAcc()
	}
	grain := collectOptions(opts).grain
	rest := func(k int) A {
		s := foldSpec(in[k:], fold, combine, grain)
		s.newZero = fresh
		return runRange(r, len(in)-k, s)
	}
	if smallInline(r, len(in), grain) {
		if len(in) <= slackBatch {
			return reduceSeq(in, fresh(), fold) // the plain loop: no slack check (slackgate.go)
		}
		// Inline while the slack lasts (slackgate.go): the rest starts
		// from accumulators of its own and is combined after.
		return reduceWhileSlack(r, len(in), grain, fresh(), func(acc A, lo, hi int) A {
			return foldLoop(in[lo:hi], acc, fold)
		}, rest, combine)
	}
	return rest(0)
}

// ReduceRange is Reduce over the indices [0, n) with the loop in the
// caller's hands, as ForRange is For's: leaf folds the indices [lo, hi)
// into acc, in its own loop, and returns it, so that the work per index is
// compiled inline in that loop instead of called through a function value.
// The range is cut into consecutive pieces; each piece starts from zero and
// is folded by leaf calls on consecutive, non-empty subranges of it, left
// to right, and adjacent pieces are joined left to right with combine.
// When combine is associative with identity zero, and leaf(acc, lo, hi)
// equals combine(acc, leaf(zero, lo, hi)), the result equals the
// sequential leaf(zero, 0, n), the loop
//
//	acc := zero
//	for i := 0; i < n; i++ { acc = fold(acc, i) }
//
// whatever the pieces; order is always kept, so combine need not be
// commutative (TestReduceRange). An n of 0 returns zero without calling
// leaf (TestReduceRangeSum).
//
// Reduce calls its fold once per element; a fold of a few nanoseconds then
// costs about as much as the call, and ReduceRange, whose leaf inlines it,
// runs at the speed of ForRange doing the same fold with per-leaf partials,
// while keeping the order and the combine that ForRange leaves to the
// caller (docs/benchmarks.md, "Reduce and For against ForRange").
//
// leaf and combine must be safe to call concurrently. zero is copied into
// every piece, as in Reduce: a zero that holds a map, a slice or a pointer
// is shared by all of them (ReduceWith makes one per piece). r, the
// options, the sequential threshold and panics are as for For.
// ReduceRange panics if leaf or combine is nil or n is negative.
func ReduceRange[A any](r forkjoin.Runner, n int, zero A, leaf func(acc A, lo, hi int) A,
	combine func(A, A) A, opts ...Option) A {
	checkRunner("ReduceRange", r)
	if leaf == nil {
		panic("magpie: ReduceRange called with a nil leaf")
	}
	if combine == nil {
		panic("magpie: ReduceRange called with a nil combine")
	}
	checkN("ReduceRange", n)
	if n == 0 {
		return zero
	}
	grain := collectOptions(opts).grain
	rest := func(k int) A {
		from := leaf
		if k > 0 {
			from = func(acc A, lo, hi int) A { return leaf(acc, k+lo, k+hi) }
		}
		return runRange(r, n-k, &rangeSpec[A]{leaf: from, combine: combine, zero: zero, grain: grain})
	}
	if smallInline(r, n, grain) {
		if n <= slackBatch {
			return leafSeq(leaf, zero, n) // one leaf call: no slack check (slackgate.go)
		}
		// Inline while the slack lasts (slackgate.go): the rest is folded
		// from zero and combined after the inline part.
		return reduceWhileSlack(r, n, grain, zero, leaf, rest, combine)
	}
	return rest(0)
}

// leafSeq is ReduceRange's whole loop on the caller: one leaf call, a
// panic in it turned into a *forkjoin.PanicError as on the other paths.
func leafSeq[A any](leaf func(acc A, lo, hi int) A, acc A, n int) A {
	defer rethrow()
	return leaf(acc, 0, n)
}

// Filter returns, in their original order, the elements of in for which
// keep returns true, calling keep in parallel on r. The result is a new
// slice (nil if nothing is kept: TestFilterCount); in is not modified. keep must be safe to
// call concurrently. r, the options, the sequential threshold and panics
// are as for For. Filter panics if keep is nil.
//
// Each piece of the input collects its kept elements in a slice of its
// own; the pieces are then copied, in order, into the result. Extra memory:
// about the size of the result, twice.
func Filter[S ~[]E, E any](r forkjoin.Runner, in S, keep func(E) bool, opts ...Option) S {
	checkRunner("Filter", r)
	if keep == nil {
		panic("magpie: Filter called with a nil keep")
	}
	return S(filterLeaves(r, in, func(seg []E, part []E) []E {
		for _, x := range part {
			if keep(x) {
				seg = append(seg, x)
			}
		}
		return seg
	}, opts))
}

// Number is the constraint of Sum and PrefixSum: the integer, floating-point and complex
// types (as golang.org/x/exp/constraints' Integer | Float | Complex).
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64 | ~complex64 | ~complex128
}

// Sum returns the sum of the elements of s, added in parallel on r (0 for
// an empty s). Integer sums equal the sequential sum exactly, overflow
// included (they wrap the same way: TestSumFloatClose); floating-point sums may differ from
// the sequential left-to-right sum in the last bits, since pieces are added
// separately (see Reduce). r and the options are as for For.
func Sum[S ~[]E, E Number](r forkjoin.Runner, s S, opts ...Option) E {
	checkRunner("Sum", r)
	return reduceLeaves(r, s, 0, addAll[E], add[E], opts)
}

func add[E Number](a, b E) E { return a + b }

// reduceLeaves is Reduce for a fold the engine may call once per leaf
// instead of once per element: leaf(acc, in[lo:hi]) must equal the left
// fold of in[lo:hi] from acc. Sum, Min and Max pass a leaf whose loop has
// the operator inlined, so their per-element cost is the loop a user
// writes, not a call through a function value (docs/design.md, "Reduce
// and For against ForRange"). Pieces, their order and the grouping of the
// combines are Reduce's. leaf and combine must not panic: the small-input
// path calls leaf without turning a panic into a *forkjoin.PanicError.
func reduceLeaves[E, A any](r forkjoin.Runner, in []E, zero A, leaf func(A, []E) A,
	combine func(A, A) A, opts []Option) A {
	grain := collectOptions(opts).grain
	if smallInline(r, len(in), grain) {
		return leaf(zero, in)
	}
	return runRange(r, len(in), &rangeSpec[A]{
		leaf:    func(acc A, lo, hi int) A { return leaf(acc, in[lo:hi]) },
		combine: combine,
		zero:    zero,
		grain:   grain,
	})
}

// addAll, minAll and maxAll are the leaves of Sum, Min and Max: the left
// fold of s from acc with the operator inlined.
func addAll[E Number](acc E, s []E) E {
	for _, x := range s {
		acc += x
	}
	return acc
}

func minAll[E cmp.Ordered](acc E, s []E) E {
	for _, x := range s {
		acc = min(acc, x)
	}
	return acc
}

func maxAll[E cmp.Ordered](acc E, s []E) E {
	for _, x := range s {
		acc = max(acc, x)
	}
	return acc
}

// Min returns the smallest element of s, found in parallel on r. Like
// slices.Min it panics if s is empty and, for floating-point elements,
// returns NaN if any element is NaN (TestMinMaxFloats). r and the options
// are as for For.
func Min[S ~[]E, E cmp.Ordered](r forkjoin.Runner, s S, opts ...Option) E {
	checkRunner("Min", r)
	if len(s) == 0 {
		panic("magpie: Min called with an empty list")
	}
	return reduceLeaves(r, s[1:], s[0], minAll[E], minOf[E], opts)
}

// Max returns the largest element of s, found in parallel on r. Like
// slices.Max it panics if s is empty and, for floating-point elements,
// returns NaN if any element is NaN (TestMinMaxFloats). r and the options
// are as for For.
func Max[S ~[]E, E cmp.Ordered](r forkjoin.Runner, s S, opts ...Option) E {
	checkRunner("Max", r)
	if len(s) == 0 {
		panic("magpie: Max called with an empty list")
	}
	return reduceLeaves(r, s[1:], s[0], maxAll[E], maxOf[E], opts)
}

// minOf and maxOf are the builtins, which order -0 before +0 and propagate
// NaN whatever the argument order: the result does not depend on how the
// slice was cut.
func minOf[E cmp.Ordered](a, b E) E { return min(a, b) }
func maxOf[E cmp.Ordered](a, b E) E { return max(a, b) }

// Count returns the number of elements of s for which pred returns true,
// calling pred in parallel on r. r, the options, the sequential threshold
// and panics are as for For. Count panics if pred is nil.
func Count[S ~[]E, E any](r forkjoin.Runner, s S, pred func(E) bool, opts ...Option) int {
	checkRunner("Count", r)
	if pred == nil {
		panic("magpie: Count called with a nil predicate")
	}
	grain := collectOptions(opts).grain
	rest := func(k int) int {
		s := s[k:]
		return runRange(r, len(s), &rangeSpec[int]{
			leaf:    func(c int, lo, hi int) int { return countLeaf(s[lo:hi], pred, c) },
			combine: add[int],
			grain:   grain,
		})
	}
	if smallInline(r, len(s), grain) {
		if len(s) <= slackBatch {
			return countSeq(s, pred) // the plain loop: no slack check (slackgate.go)
		}
		// Inline while the slack lasts (slackgate.go); the rest's count is
		// added.
		return reduceWhileSlack(r, len(s), grain, 0, func(c int, lo, hi int) int {
			return countLeaf(s[lo:hi], pred, c)
		}, rest, add[int])
	}
	return rest(0)
}

// The small-input paths of the helpers: plain loops on the caller, with a
// panic turned into a *forkjoin.PanicError as on the pool.

func mapSeq[E, R any](in []E, out []R, f func(E) R) {
	defer rethrow()
	out = out[:len(in)]
	for i, x := range in {
		out[i] = f(x)
	}
}

// reduceSeq and countSeq are the loops of Reduce and Count over at most
// slackBatch elements on the caller, with a panic turned into a
// *forkjoin.PanicError as on the pool.
func reduceSeq[E, A any](in []E, acc A, fold func(A, E) A) A {
	defer rethrow()
	return foldLoop(in, acc, fold)
}

func countSeq[E any](s []E, pred func(E) bool) int {
	defer rethrow()
	return countLeaf(s, pred, 0)
}

// foldLoop and countLeaf are the leaves of Reduce and Count, on a worker
// or on the caller (inlineWhileSlack turns a panic into a
// *forkjoin.PanicError there).
func foldLoop[E, A any](in []E, acc A, fold func(A, E) A) A {
	for _, x := range in {
		acc = fold(acc, x)
	}
	return acc
}

func countLeaf[E any](s []E, pred func(E) bool, c int) int {
	for _, x := range s {
		if pred(x) {
			c++
		}
	}
	return c
}
