package magpie

import (
	"sync/atomic"
	"unsafe"

	"github.com/magpie-go/magpie/forkjoin"
)

// The blocked parallel scan of Scan and PrefixSum: one pass over memory.
//
// The slice is cut into blocks small enough to stay in a core's cache
// (scanBlockBytes). Every participant (the caller's worker and the tasks
// forked to make them up to P, all running the same loop, work) claims
// blocks one at a time and does one of two things with the block c it
// claims:
//
//   - if the inclusive prefix up to the end of block c-1 is known (c-1 is
//     prefixed), it scans c in place from it: one pass, as the sequential
//     loop, and c is prefixed;
//   - otherwise it reduces c to its sum (reading it, which brings it into
//     its cache) and publishes the sum; it scans c later, once c-1 is
//     prefixed: a second pass over data still in its cache, not a second
//     trip to memory.
//
// The chain of prefixes: a reduced block c becomes prefixed (its inclusive
// prefix is op(prefix of c-1, sum of c)) as soon as c-1 is; whoever
// prefixes c-1 tries to prefix c, and c's reducer, once it has published
// its sum, tries too if c-1 is prefixed. Both store, then load the other's
// flag (sequentially consistent atomics): at least one sees both, and a
// CompareAndSwap (reduced -> prefixing) picks the one that writes the
// prefix. So the prefixed blocks are always a prefix [0, K) of the blocks,
// and K stops only at a block being scanned in place, or being reduced.
//
// Claims: blocks are claimed in index order, except that while a block is
// being scanned in place a reducer claims the block after next (top), so
// that next stays free (the gap) for the participant scanning in place to
// go on scanning in place when it finishes (claim).
//
// Nobody ever waits, spins or sleeps on another participant. A reducer
// that finds nothing left to claim while some of its blocks are not yet
// ready hands them over (hand: orphaned), and whoever prefixes the block
// before an orphan takes it (CompareAndSwap orphaned -> taken) and scans
// it; the same store-then-load argument shows that the orphan is taken by
// someone. A block's predecessor is unprefixed only while a running
// participant scans or reduces a block before it, and that participant
// carries the chain on: every block is scanned once, by one participant,
// whatever runs when. One participant alone does everything, and the
// caller never waits for a task that is only queued (it joins the forked
// tasks: an unstolen one runs on the caller and finds nothing to claim).
// Each element is read from memory once and written once; a reduced block
// is read twice, the second time from cache.
//
// Ownership of the data: block c's elements are read by its reducer, and
// written by one scanner (its reducer, or the one that took it as an
// orphan, after the CompareAndSwap that follows the reducer's store), read
// by no other participant; a block's sum and prefix are written before the
// flag store that publishes them and read after a load that sees it. The
// caller reads s after the join.

// scanBlockBytes is the size of a block: small enough that a participant's
// reduced blocks stay in its L2 cache until it scans them (it holds a few
// at a time, at most scanAheadBytes), large enough that the per-block bookkeeping (a few
// atomic operations, one op call) is negligible.
const scanBlockBytes = 256 << 10

// scanAheadBytes bounds the blocks a participant holds reduced and not yet
// scanned (work): about what stays in its L2 cache.
const scanAheadBytes = 1 << 20

// scanBlocksPerWorker is the least number of blocks per participant, so
// that a slice much smaller than scanBlockBytes·P still splits.
const scanBlocksPerWorker = 8

// scanKernels are the loops that scan and reduce one block: Scan's call
// op through a function value, PrefixSum's add with + inlined.
type scanKernels[E any] struct {
	op func(E, E) E // combines offsets, once per block
	// scan replaces s[i] by the inclusive prefix from prefix (s[0] becomes
	// op(prefix, s[0])).
	scan func(s []E, prefix E)
	// first scans s in place with no prefix before it.
	first func(s []E)
	// reduce returns op folded over s, which is not empty.
	reduce func(s []E) E
}

// The flags of a block (scanBlockState.flag).
const (
	blockClaimed   = iota // claimed, or not yet: being scanned in place or reduced
	blockReduced          // sum holds the block's sum
	blockPrefixing        // a participant is computing prefix from the sum
	blockPrefixed         // prefix holds the inclusive prefix to the block's end
)

// The hand-over states of a reduced block (scanBlockState.hand).
const (
	handOwned    = iota // its reducer will scan it
	handOrphaned        // its reducer has returned: whoever prefixes the block before takes it
	handTaken           // a participant took it to scan it
)

// scanBlockState is one block's bookkeeping.
type scanBlockState[E any] struct {
	flag   atomic.Int32
	hand   atomic.Int32
	sum    E // written by the reducer before flag = blockReduced
	prefix E // written by one participant before flag = blockPrefixed
}

// blockScan is one parallel scan in progress (see the top of the file).
type blockScan[E any] struct {
	s      []E
	block  int // elements per block; the last block may be shorter
	blocks int
	k      scanKernels[E]
	st     []scanBlockState[E]
	// claims packs next<<32 | top: the claimed blocks are [0, next) and
	// [next+1, top), top > next: at most one unclaimed block, next, lies
	// below claimed ones (the gap).
	claims   atomic.Uint64
	workers  int          // the pool's parallelism: the most participants
	live     atomic.Int32 // participants forked and not yet done claiming
	maxAhead int          // the most blocks a participant holds reduced and not ready
	// scanning is set while a participant scans a block in place (at most
	// one does: the block's predecessor is prefixed, and its successor's
	// predecessor is not until the scan ends). A heuristic for claim only.
	scanning atomic.Bool
}

// scanBlockLen returns the block length of a parallel scan of n elements
// of type E on workers participants: grain if set, else scanBlockBytes of
// elements, shortened so that each participant has scanBlocksPerWorker
// blocks; never so short that there are more than scanMaxBlocks.
func scanBlockLen[E any](n, workers, grain int) int {
	// At most scanMaxBlocks blocks: claims packs block indices in 32 bits.
	least := n/scanMaxBlocks + 1
	if grain > 0 {
		return max(grain, least)
	}
	size := max(elemSize[E](), 1)
	return max(min(scanBlockBytes/size, n/(scanBlocksPerWorker*workers)), least, 1)
}

// scanMaxBlocks bounds the number of blocks, whose indices (and that
// index plus one) blockScan.claims packs in 32 bits each.
const scanMaxBlocks = 1 << 30

// scanBlocked scans s in place with the kernels k on w's pool: the caller
// runs the participants' loop (work), which forks the others.
func scanBlocked[E any](w *forkjoin.Worker, s []E, k scanKernels[E], grain int) {
	workers := w.Pool().Parallelism()
	block := scanBlockLen[E](len(s), workers, grain)
	blocks := (len(s) + block - 1) / block
	b := &blockScan[E]{s: s, block: block, blocks: blocks, k: k, workers: workers,
		maxAhead: max(scanAheadBytes/max(block*elemSize[E](), 1), 2),
		st:       make([]scanBlockState[E], blocks)}
	b.claims.Store(packClaims(0, 1))
	b.live.Store(1)
	b.work(w)
}

// elemSize is the size of an E in bytes.
func elemSize[E any]() int {
	var zero E
	return int(unsafe.Sizeof(zero))
}

func packClaims(next, top int) uint64 { return uint64(next)<<32 | uint64(top) }

// bounds returns the element range of block c.
func (b *blockScan[E]) bounds(c int) (lo, hi int) {
	return c * b.block, min((c+1)*b.block, len(b.s))
}

// prefixed reports whether block c is prefixed; c == -1 is (nothing is
// before block 0).
func (b *blockScan[E]) prefixed(c int) bool {
	return c < 0 || b.st[c].flag.Load() == blockPrefixed
}

// work is one participant's loop: scan its blocks whose predecessor is
// prefixed, else claim a block and scan it in place or reduce it, until
// nothing is left to claim or it holds maxAhead blocks it cannot scan yet;
// then hand those over, and join the participants it forked. mine holds
// the blocks this participant reduced, or took as orphans, and has not
// scanned.
//
// Before each claim it forks a participant if fewer than workers are live
// (topUp): the caller forks the first ones, and a participant that has
// stopped is replaced. A participant stops at maxAhead because its
// further reductions, made while the chain does not move (the participant
// scanning in place is slow or descheduled: on a busy machine the two may
// share one CPU), would leave its cache before it could scan them, two
// passes over memory instead of one: better leave those blocks to the
// scan in place, and start a participant again if it is still wanted when
// the chain has moved (TestScanReducerStopsAhead).
func (b *blockScan[E]) work(w *forkjoin.Worker) {
	var mine []int
	var forked []*forkjoin.Future[struct{}]
	finished := false
	defer func() {
		// Joined on every path: a panic in op included, here or in a fork.
		if pe := joinParticipants(w, forked); pe != nil && finished {
			panic(pe) // else this participant's own panic goes on
		}
	}()
	defer func() {
		if !finished { // a panic in op: stop everyone claiming
			b.claims.Store(packClaims(b.blocks, b.blocks+1))
		}
		b.live.Add(-1)
	}()
	for {
		if i := b.readyIn(mine); i >= 0 {
			c := mine[i]
			mine = append(mine[:i], mine[i+1:]...)
			b.scanFrom(c) // from cache if this participant reduced it
			continue
		}
		forked = b.topUp(w, forked)
		c, inPlace, ok := b.claim(len(mine) < b.maxAhead)
		if !ok {
			break
		}
		lo, hi := b.bounds(c)
		st := &b.st[c]
		if inPlace {
			if c == 0 {
				b.k.first(b.s[lo:hi])
			} else {
				b.k.scan(b.s[lo:hi], b.st[c-1].prefix)
			}
			// s[hi-1] is this participant's own write.
			st.prefix = b.s[hi-1]
			b.scanning.Store(false) // before the flag: see scanning
			st.flag.Store(blockPrefixed)
			mine = b.advance(c+1, mine)
			continue
		}
		st.sum = b.k.reduce(b.s[lo:hi])
		st.flag.Store(blockReduced)
		mine = append(mine, c)
		if b.prefixed(c - 1) {
			mine = b.advance(c, mine)
		}
	}
	finished = true
	// No block of mine is ready: hand them over.
	for _, c := range mine {
		st := &b.st[c]
		st.hand.Store(handOrphaned)
		// Prefixed since readyIn looked? Then whoever prefixed it may have
		// looked at hand before the store: take the block back.
		if b.prefixed(c-1) && st.hand.CompareAndSwap(handOrphaned, handTaken) {
			b.scanFrom(c)
		}
	}
}

// joinParticipants joins every participant in forked, newest first, and
// returns the first panic a join raised, or nil. It joins the others even
// after a panic: a participant not joined could go on scanning its block,
// writing s, after the panic had reached Scan's caller
// (TestScanJoinParticipantsAfterPanic).
func joinParticipants(w *forkjoin.Worker, forked []*forkjoin.Future[struct{}]) (first any) {
	for i := len(forked) - 1; i >= 0; i-- {
		func() {
			defer func() {
				if v := recover(); v != nil && first == nil {
					first = v
				}
			}()
			forked[i].Join(w)
		}()
	}
	return first
}

// topUp forks a participant if fewer than workers are live and at least
// two blocks are left to claim (one for this participant, one for the
// new one); the caller joins it (work's deferred join).
func (b *blockScan[E]) topUp(w *forkjoin.Worker, forked []*forkjoin.Future[struct{}]) []*forkjoin.Future[struct{}] {
	for {
		live := b.live.Load()
		if int(live) >= b.workers || b.blocks-int(b.claims.Load()>>32) < 2 {
			return forked
		}
		if b.live.CompareAndSwap(live, live+1) {
			return append(forked, forkjoin.Fork(w, func(w *forkjoin.Worker) struct{} { b.work(w); return struct{}{} }))
		}
	}
}

// claim claims a block: next, in place, if its predecessor is prefixed;
// else, if reduce is set, a block to reduce: next, or top while another
// participant scans in place, so that next stays unclaimed (the gap) for
// that participant to scan in place too when it finishes. Without the gap
// a reducer claiming next, still reducing it when the scan in place ends,
// would leave the chain waiting for it and every participant reducing
// from then on (each next's predecessor unprefixed when claimed): two
// passes over every block (TestScanClaimLeavesGap). ok is false when
// every block is claimed, or when the block would be reduced and reduce
// is false.
//
// A participant stops (work) only when ok is false. With blocks left, that
// means the chain's first unprefixed block, below next, is held by a
// participant still running (being scanned in place or reduced: a reduced
// block is prefixed once its predecessor is), who carries the chain on
// and then, finding the block at next ready for a scan in place, claims
// it whatever it holds: someone is always left to claim the rest
// (TestScanReducerStopsAhead).
func (b *blockScan[E]) claim(reduce bool) (c int, inPlace, ok bool) {
	for {
		cl := b.claims.Load()
		next, top := int(cl>>32), int(uint32(cl))
		if next >= b.blocks {
			return 0, false, false
		}
		var after uint64
		switch {
		case b.prefixed(next - 1):
			c, inPlace, after = next, true, packClaims(top, top+1)
		case !reduce:
			return 0, false, false
		case b.scanning.Load() && top < b.blocks:
			c, inPlace, after = top, false, packClaims(next, top+1)
		default:
			c, inPlace, after = next, false, packClaims(top, top+1)
		}
		if b.claims.CompareAndSwap(cl, after) {
			if inPlace {
				b.scanning.Store(true)
			}
			return c, inPlace, true
		}
	}
}

// readyIn returns the index in mine of a block whose predecessor is
// prefixed, or -1. mine is short (a few blocks).
func (b *blockScan[E]) readyIn(mine []int) int {
	for i, c := range mine {
		if b.prefixed(c - 1) {
			return i
		}
	}
	return -1
}

// scanFrom scans block c, reduced and whose predecessor is prefixed, from
// that prefix.
func (b *blockScan[E]) scanFrom(c int) {
	lo, hi := b.bounds(c)
	b.k.scan(b.s[lo:hi], b.st[c-1].prefix)
}

// advance carries the chain on from block c, whose predecessor is
// prefixed: it takes c if c is an orphan (it joins mine, to be scanned),
// and prefixes c if c is reduced and no other participant does, then goes
// on with c+1. It stops at a block that is not reduced, or that another
// participant prefixes.
func (b *blockScan[E]) advance(c int, mine []int) []int {
	for ; c < b.blocks; c++ {
		st := &b.st[c]
		if st.hand.Load() == handOrphaned && st.hand.CompareAndSwap(handOrphaned, handTaken) {
			mine = append(mine, c)
		}
		if !st.flag.CompareAndSwap(blockReduced, blockPrefixing) {
			return mine
		}
		st.prefix = b.k.op(b.st[c-1].prefix, st.sum)
		st.flag.Store(blockPrefixed)
	}
	return mine
}
