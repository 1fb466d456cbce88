package magpie

import (
	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/refuse"
)

// Scan replaces every element of s by the inclusive prefix of s up to it
// under op, in parallel on r, like Java's Arrays.parallelPrefix: the
// sequential
//
//	for i := 1; i < len(s); i++ { s[i] = op(s[i-1], s[i]) }
//
// op must be associative (op(op(a, b), c) == op(a, op(b, c))), need not be
// commutative (it is always called as op(earlier, later)), and must be safe
// to call concurrently; it needs no identity. Floating-point addition is
// not associative: a float prefix may differ from the sequential one in its
// last bits. A parallel scan calls op once for each element of a block
// scanned in place and twice for the others (reduced, then scanned, the
// reduction one call short of the block's length, the prefix one call):
// from n - 1 times, as the sequential loop, when every block is scanned in
// place, to under 2n when every block after the first is reduced; about
// 4/3 n on two workers when both keep pace (scanblock.go, TestScanWork).
//
// r is as for For. Without options, a slice of at most SequentialThreshold
// elements is scanned on the caller; Grain(g) scans on the caller when g
// covers len(s) and otherwise sets the block size to g. Unlike the other
// helpers Scan does not probe: a larger slice goes to the pool at once. A
// panic in op reaches the caller as a *forkjoin.PanicError, and s is then
// left partly scanned (TestNewHelpersPanics,
// TestScanJoinParticipantsAfterPanic). Scan panics if op is nil
// (TestScanInputs).
func Scan[S ~[]E, E any](r forkjoin.Runner, s S, op func(E, E) E, opts ...Option) {
	checkRunner("Scan", r)
	if op == nil {
		panic("magpie: Scan called with a nil op")
	}
	grain := collectOptions(opts).grain
	if scanInline(r, len(s), grain) { // before the kernels, which allocate
		defer rethrow()
		scanSeq(s, op)
		return
	}
	scanOn(r, []E(s), scanKernels[E]{
		op:     op,
		scan:   func(s []E, prefix E) { scanFrom(s, prefix, op) },
		first:  func(s []E) { scanSeq(s, op) },
		reduce: func(s []E) E { return reduceBlock(s, op) },
	}, grain)
}

// PrefixSum replaces every element of s by the sum of the elements up to
// it (its inclusive prefix sum), in parallel on r: the sequential
//
//	for i := 1; i < len(s); i++ { s[i] += s[i-1] }
//
// It is Scan with op = +, but loops with + inlined as Sum does, instead of
// calling op through a function value per element: on one worker it runs
// that loop, about 5x faster than Scan with +. On more it runs Scan's blocked
// algorithm, which reads memory once as the loop does; its speedup is
// bounded by the memory bandwidth and the second core the machine gives
// (docs/benchmarks.md, "Scan and PrefixSum, blocked": 1.12x the loop on
// two idle vCPUs, none on busy ones). Integer prefix sums equal the sequential ones
// exactly, overflow included (they wrap the same way); floating-point
// prefix sums may differ from the sequential ones in the last bits, since
// the blocks' sums are added separately (see Reduce), but no zero is added
// that the loop does not add: a run of -0.0 stays -0.0
// (TestRev37PrefixSumNegativeZeros).
//
// r and the options are as for Scan: a slice of at most SequentialThreshold
// elements, or with a Grain that covers it, is summed on the caller, a
// larger one goes to the pool at once, and Grain(g) otherwise sets the
// block size to g.
func PrefixSum[S ~[]E, E Number](r forkjoin.Runner, s S, opts ...Option) {
	checkRunner("PrefixSum", r)
	grain := collectOptions(opts).grain
	if scanInline(r, len(s), grain) {
		addFirst(s)
		return
	}
	scanOn(r, []E(s), scanKernels[E]{
		op:     add[E],
		scan:   addFrom[E],
		first:  addFirst[E],
		reduce: addAll4[E],
	}, grain)
}

// scanInline reports whether Scan and PrefixSum run sequentially on the
// caller: a short slice (shortByCount), or a pool of one worker or a
// closed one (parallelism).
func scanInline(r forkjoin.Runner, n, grain int) bool {
	return shortByCount(n, grain) || parallelism(r) <= 1
}

// scanOn runs the blocked scan of s with the kernels k on r, a pool of
// more than one worker or one of its workers (scanblock.go). A panic in op
// is a *forkjoin.PanicError on every path. A pool closed since scanInline
// looked refuses the scan having run nothing, and the caller scans s
// sequentially (TestScanOnRefusingPool).
func scanOn[E any](r forkjoin.Runner, s []E, k scanKernels[E], grain int) {
	// As for the other helpers, a panic is a *PanicError on every path.
	defer rethrow()
	if w, ok := r.(*forkjoin.Worker); ok {
		scanBlocked(w, s, k, grain)
		return
	}
	_, refused := refuse.Run(runnerPool(r), func(w *forkjoin.Worker) struct{} {
		scanBlocked(w, s, k, grain)
		return struct{}{}
	})
	if refused {
		k.first(s)
	}
}

// addFrom is PrefixSum's scanFrom: s[0] becomes prefix + s[0], and so on,
// with + inlined.
func addFrom[E Number](s []E, prefix E) {
	for i, x := range s {
		prefix += x
		s[i] = prefix
	}
}

// addFirst is PrefixSum's sequential loop: s scanned in place with no
// prefix before it.
func addFirst[E Number](s []E) {
	if len(s) > 0 {
		addFrom(s[1:], s[0])
	}
}

// addAll4 is PrefixSum's reduceBlock: the sum of s, which is not empty,
// in four interleaved partial sums, which the CPU adds in parallel (one
// chain of dependent adds limits addAll to one element per cycle; this
// runs about 2.5x as fast in cache: BenchmarkPrefixSumKernels). The
// partial sums start from elements of s, not from 0, as the loop adds no
// zero: a sum of -0.0s stays -0.0, where +0 + -0 is +0 and would turn
// every prefix after the block into +0 (TestRev37PrefixSumNegativeZeros;
// review rev37).
func addAll4[E Number](s []E) E {
	if len(s) < 4 {
		return addAll(s[0], s[1:])
	}
	a, b, c, d := s[0], s[1], s[2], s[3]
	i := 4
	for ; i+4 <= len(s); i += 4 {
		q := s[i : i+4 : i+4]
		a += q[0]
		b += q[1]
		c += q[2]
		d += q[3]
	}
	for _, x := range s[i:] {
		a += x
	}
	return (a + b) + (c + d)
}

// scanSeq scans s in place: s[i] = op(s[i-1], s[i]).
func scanSeq[S ~[]E, E any](s S, op func(E, E) E) {
	if len(s) == 0 {
		return
	}
	scanFrom(s[1:], s[0], op)
}

// scanFrom scans s in place from the prefix before it: s[0] becomes
// op(prefix, s[0]), and so on. The running prefix stays in a register.
func scanFrom[S ~[]E, E any](s S, prefix E, op func(E, E) E) {
	for i, x := range s {
		prefix = op(prefix, x)
		s[i] = prefix
	}
}

// reduceBlock returns op folded over s, which is not empty.
func reduceBlock[S ~[]E, E any](s S, op func(E, E) E) E {
	acc := s[0]
	for _, x := range s[1:] {
		acc = op(acc, x)
	}
	return acc
}
