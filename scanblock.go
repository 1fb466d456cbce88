package magpie

import (
	"sync"
	"unsafe"

	"github.com/magpie-go/magpie/forkjoin"
)

// The blocked parallel scan of Scan and PrefixSum: one pass over memory.
//
// The slice is cut into blocks small enough to stay in a core's cache
// (scanBlockBytes). Every participant (the caller's worker and P-1 forked
// tasks, all running the same loop) claims the blocks in index order,
// one at a time, and does one of two things with the block c it claims:
//
//   - if the prefix before c is known (every block before c is scanned or
//     reduced and its offset chained: c == known), it scans c in place from
//     that prefix: one pass, as the sequential loop;
//   - otherwise it reduces c to its sum (reading it, which brings it into
//     its cache), publishes the sum, and scans c from its offset later,
//     once the chain of offsets has reached c: a second pass over data
//     still in cache, not a second trip to memory.
//
// Invariant (under mu): blocks [0, next) are claimed and [next, blocks)
// are not; blocks [0, known) have their offset known (pre is the inclusive
// prefix up to the end of block known-1), known <= next; a block in
// [known, next) is either being scanned in place (then it is block known,
// and only its scanner moves known past it) or being reduced or reduced.
// Whoever publishes the piece the chain waits for (the end of the block at
// known, or its sum) advances known over the reduced blocks after it,
// turning each sum into that block's offset.
//
// Nobody ever waits for anything but mu, which is held for O(1) work per
// block and never while running a task: a reduced block whose offset is
// not known is left, not waited for. Its reducer scans it once known has
// passed it (it checks before claiming each new block); a reducer that
// finds nothing left to claim marks its unscanned blocks orphaned and
// returns, and whoever later advances known past an orphan scans it. A
// block's offset is unknown only while an earlier block is being scanned
// or reduced by a running participant, which will advance known: every
// orphan is scanned. So one participant alone does everything (the forked
// tasks may find nothing left), and the caller never waits for a task
// that is only queued (it joins the forked tasks: an unstolen one runs on
// the caller and finds nothing to claim). Each element is read from memory
// once and written once; a reduced block is read twice, the second time
// from cache.
//
// The slice itself is not shared: a block is read or written by one
// participant at a time, handed over through mu (the reducer publishes
// its sum, or the orphan, under mu before another participant scans it),
// and read by the caller after the join.

// scanBlockBytes is the size of a block: small enough that a participant's
// reduced blocks stay in its L2 cache until it scans them (it holds one or
// two at a time), large enough that the per-block bookkeeping (a few lock
// acquisitions, one op call) is negligible.
const scanBlockBytes = 64 << 10

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

// scanBlockState is one block's bookkeeping, under blockScan.mu.
type scanBlockState[E any] struct {
	v       E    // the block's sum once reduced, its offset once known passed it
	reduced bool // v holds the sum (or, once known passed the block, the offset)
	orphan  bool // its reducer has returned: whoever advances past it scans it
}

// blockScan is one parallel scan in progress (see the top of the file).
type blockScan[E any] struct {
	s      []E
	block  int // elements per block; the last block may be shorter
	blocks int
	k      scanKernels[E]

	mu sync.Mutex
	// The claimed blocks are [0, next) and [next+1, top), top > next: at
	// most one unclaimed block, next, below claimed ones (the gap).
	next, top int
	known     int  // blocks [0, known) have their offset known; known <= next
	pre       E    // the inclusive prefix up to the end of block known-1
	scanning  bool // a participant is scanning block known in place
	st        []scanBlockState[E]
}

// scanBlockLen returns the block length of a parallel scan of n elements
// of type E on workers participants: grain if set, else scanBlockBytes of
// elements, shortened so that each participant has scanBlocksPerWorker
// blocks.
func scanBlockLen[E any](n, workers, grain int) int {
	if grain > 0 {
		return grain
	}
	var zero E
	size := max(int(unsafe.Sizeof(zero)), 1)
	return max(min(scanBlockBytes/size, n/(scanBlocksPerWorker*workers)), 1)
}

// scanBlocked scans s in place with the kernels k on w's pool: the caller
// and Parallelism()-1 forked tasks run the participants' loop (work).
func scanBlocked[E any](w *forkjoin.Worker, s []E, k scanKernels[E], grain int) {
	workers := w.Pool().Parallelism()
	block := scanBlockLen[E](len(s), workers, grain)
	blocks := (len(s) + block - 1) / block
	b := &blockScan[E]{s: s, block: block, blocks: blocks, k: k, top: 1, st: make([]scanBlockState[E], blocks)}
	helpers := make([]*forkjoin.Future[struct{}], 0, min(workers, blocks)-1)
	for range cap(helpers) {
		helpers = append(helpers, forkjoin.Fork(w, func(*forkjoin.Worker) struct{} { b.work(); return struct{}{} }))
	}
	b.work()
	for i := len(helpers) - 1; i >= 0; i-- {
		helpers[i].Join(w)
	}
}

// bounds returns the element range of block c.
func (b *blockScan[E]) bounds(c int) (lo, hi int) {
	return c * b.block, min((c+1)*b.block, len(b.s))
}

// work is one participant's loop: until every block is claimed, scan its
// own reduced blocks (and inherited orphans) whose offset is known, else
// claim the next block and scan it in place or reduce it. mine holds the
// blocks this participant has reduced, or inherited as orphans, and not
// yet scanned.
func (b *blockScan[E]) work() {
	var mine []int
	finished := false
	defer func() {
		if !finished { // a panic in op: stop the others claiming blocks
			b.mu.Lock()
			b.next, b.top = b.blocks, b.blocks+1
			b.mu.Unlock()
		}
	}()
	for {
		b.mu.Lock()
		if i := b.readyIn(mine); i >= 0 {
			c := mine[i]
			mine = append(mine[:i], mine[i+1:]...)
			off := b.st[c].v
			b.mu.Unlock()
			lo, hi := b.bounds(c)
			b.k.scan(b.s[lo:hi], off) // mostly from cache: this participant reduced it
			continue
		}
		if b.next == b.blocks {
			// Every block is claimed; those of mine not yet known go to
			// whoever advances known past them.
			for _, c := range mine {
				b.st[c].orphan = true
			}
			b.mu.Unlock()
			finished = true
			return
		}
		c, inPlace, pre := b.claim()
		b.mu.Unlock()

		lo, hi := b.bounds(c)
		if inPlace {
			if c == 0 {
				b.k.first(b.s[lo:hi])
			} else {
				b.k.scan(b.s[lo:hi], pre)
			}
			// s[hi-1] is this participant's own write: no other reads it
			// before the join.
			mine = b.publish(c, b.s[hi-1], false, mine)
		} else {
			mine = b.publish(c, b.k.reduce(b.s[lo:hi]), true, mine)
		}
	}
}

// claim claims a block under mu, with next < blocks: next, in place, if
// its offset is known; else a block to reduce: next, or top while another
// participant scans in place, so that next stays unclaimed (the gap) for
// that participant to scan in place too when it finishes. Without the gap
// a reducer claiming next, still reducing it when the scan in place ends,
// would leave the chain waiting for it and every participant reducing from
// then on (each next's offset unknown when claimed): two passes over every
// block, no gain (TestScanKeepsScanningInPlace).
func (b *blockScan[E]) claim() (c int, inPlace bool, pre E) {
	switch {
	case b.next == b.known:
		c, inPlace, pre = b.next, true, b.pre
		b.scanning = true
		b.next, b.top = b.top, b.top+1
	case b.scanning && b.top < b.blocks:
		c = b.top
		b.top++
	default:
		c = b.next
		b.next, b.top = b.top, b.top+1
	}
	return c, inPlace, pre
}

// readyIn returns the index in mine of a block whose offset is known, or
// -1. Called with mu held; mine is short (a few blocks).
func (b *blockScan[E]) readyIn(mine []int) int {
	for i, c := range mine {
		if c < b.known {
			return i
		}
	}
	return -1
}

// publish records the outcome of block c under mu: v is the inclusive
// prefix up to its end if it was scanned in place, its sum if reduced (a
// reduced block joins mine). If the chain was waiting for c, it advances
// known over c and the reduced blocks after it, turning each one's sum into
// its offset and taking over the orphans among them (they join mine). The
// unlock is deferred: op may panic.
func (b *blockScan[E]) publish(c int, v E, reduced bool, mine []int) []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if reduced {
		b.st[c] = scanBlockState[E]{v: v, reduced: true}
		mine = append(mine, c)
		if c != b.known {
			return mine
		}
	} else {
		// Only c's scanner moves known past c (c == known since its claim).
		b.pre = v
		b.known = c + 1
		b.scanning = false
	}
	for b.known < b.blocks && b.st[b.known].reduced {
		// known > 0: block 0 is always scanned in place (its claimer finds
		// known == 0), so pre is set.
		x := &b.st[b.known]
		x.v, b.pre = b.pre, b.k.op(b.pre, x.v)
		if x.orphan {
			mine = append(mine, b.known)
		}
		b.known++
	}
	return mine
}
