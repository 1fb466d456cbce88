package magpie

import (
	"sync/atomic"

	"github.com/magpie-go/magpie/forkjoin"
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
// last bits. A parallel scan calls op about 2P/(P+1)·n times instead of
// n - 1 with P workers (4/3 n for two): see the algorithm below.
//
// r is as for For. Without options, a slice of at most SequentialThreshold
// elements is scanned on the caller; Grain(g) scans on the caller when g
// covers len(s) and otherwise sets the block size to g. Unlike the other
// helpers Scan does not probe: a larger slice goes to the pool at once. A
// panic in op reaches the caller as a *forkjoin.PanicError, and s is then
// left partly scanned. Scan panics if op is nil.
func Scan[S ~[]E, E any](r forkjoin.Runner, s S, op func(E, E) E, opts ...Option) {
	checkRunner("Scan", r)
	if op == nil {
		panic("magpie: Scan called with a nil op")
	}
	grain := collectOptions(opts).grain
	if shortByCount(len(s), grain) {
		scanCaught(s, op)
		return
	}
	if w, ok := r.(*forkjoin.Worker); ok {
		// As for the other helpers, a panic is a *PanicError on every path.
		defer rethrow()
		scanPar(w, s, op, grain)
		return
	}
	p := runnerPool(r)
	if p.Parallelism() <= 1 {
		scanCaught(s, op)
		return
	}
	forkjoin.Run(p, func(w *forkjoin.Worker) struct{} {
		scanPar(w, s, op, grain)
		return struct{}{}
	})
}

// scanBlocksPerWorker and scanMinBlock size the blocks of the parallel
// scan's head: about scanBlocksPerWorker blocks per worker, so that the
// splitting can balance both passes, but no fewer than scanMinBlock
// elements, so that a block's bookkeeping (one op call and one sum) stays
// negligible.
const (
	scanBlocksPerWorker = 16
	scanMinBlock        = 4096
)

// scanPar is the parallel scan, in two passes over a head s[:m] cut into
// blocks, and a tail s[m:] of n/(P+1) elements:
//
//  1. The head runs on the range engine over its block indices. A block
//     whose predecessors are all scanned knows its prefix: it is scanned
//     in place, once. That is the run of blocks from block 0 that the
//     worker starting there gets through (its piece, extended chunk after
//     chunk, then the pieces it forked and nobody stole). Every other
//     block is only reduced to a sum (read, not written).
//  2. On the caller's worker, the sums of the reduced blocks become their
//     offsets (a sequential scan over a few dozen blocks), and the offset
//     of the tail follows.
//  3. The tail (never reduced: nothing needs its sum) is scanned from its
//     offset on this worker, while the reduced blocks are scanned from
//     their offsets in parallel as a forked range task.
//
// With two workers the ideal is three equal thirds: the first scanned and
// the second reduced in pass 1, the second and the tail scanned in pass 2,
// 2/3·n op calls per worker against n for the sequential loop: at most
// 1.5x, (P+1)/2 with P workers. A plain "reduce every block, then scan
// every block" costs 2n calls, no gain at all on two workers.
func scanPar[S ~[]E, E any](w *forkjoin.Worker, s S, op func(E, E) E, grain int) {
	n := len(s)
	workers := w.Pool().Parallelism()
	if workers <= 1 {
		scanSeq(s, op)
		return
	}
	m := n - n/(workers+1)
	block := grain
	if block == 0 {
		block = max(m/(scanBlocksPerWorker*workers), scanMinBlock)
	}
	blocks := (m + block - 1) / block
	bounds := func(b int) (lo, hi int) { return b * block, min((b+1)*block, m) }
	sums := make([]E, blocks)

	// Pass 1. frontier is the number of blocks scanned in place so far:
	// a block that starts exactly there follows a final prefix, so it is
	// scanned (once), whichever piece holds it; any other block is reduced.
	// Usually the piece holding block 0 scans its range, and then the
	// pieces it forked and ran itself, since nobody stole them. The blocks
	// scanned are therefore [0, frontier), and all others are reduced:
	// frontier passes a block only by scanning it.
	var frontier atomic.Int64
	pass1 := &rangeSpec[struct{}]{
		leaf: func(_ struct{}, lo, hi int) struct{} {
			for b := lo; b < hi; b++ {
				from, to := bounds(b)
				if frontier.Load() != int64(b) {
					sums[b] = reduceBlock(s[from:to], op)
					continue
				}
				if b == 0 {
					scanSeq(s[:to], op)
				} else {
					scanFrom(s[from:to], s[from-1], op)
				}
				// The store publishes the block's writes to whoever
				// scans the next block or, after the join, reads s[to-1].
				frontier.Store(int64(b + 1))
			}
			return struct{}{}
		},
		grain: min(grain, 1), // with Grain, halve down to single blocks
	}
	rangeTask[struct{}]{pass1, 0, blocks, struct{}{}}.Compute(w)
	done := int(frontier.Load())

	// Offsets: sums[b] becomes the prefix before block b.
	_, hi := bounds(done - 1)
	off := s[hi-1]
	for b := done; b < blocks; b++ {
		sums[b], off = off, op(off, sums[b])
	}

	// Pass 2: the tail here, from the start (it is the largest piece and
	// cannot be split), the reduced blocks in a forked range task.
	pass2 := &rangeSpec[struct{}]{
		leaf: func(_ struct{}, lo, hi int) struct{} {
			for b := lo; b < hi; b++ {
				from, to := bounds(b)
				scanFrom(s[from:to], sums[b], op)
			}
			return struct{}{}
		},
		grain: min(grain, 1),
	}
	forkjoin.Join(w,
		func(*forkjoin.Worker) struct{} { scanFrom(s[m:], off, op); return struct{}{} },
		func(w *forkjoin.Worker) struct{} {
			if done < blocks {
				rangeTask[struct{}]{pass2, done, blocks, struct{}{}}.Compute(w)
			}
			return struct{}{}
		})
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

// scanCaught is scanSeq for the paths that run on the caller, with a
// panic turned into a *forkjoin.PanicError as on the pool.
func scanCaught[S ~[]E, E any](s S, op func(E, E) E) {
	defer rethrow()
	scanSeq(s, op)
}
