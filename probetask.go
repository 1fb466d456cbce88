package magpie

import (
	"context"
	"sync/atomic"

	"github.com/magpie-go/magpie/forkjoin"
)

// The task probe: how a short loop called from inside a task (with the
// task's *Worker, or with a *Pool from a worker's goroutine) decides
// whether to go parallel, by time rather than by count, as the probe of
// probe.go does for loops called from outside the pool. The caller runs
// the loop itself in batches it claims from a cursor (1, 3, 12, 48, ...
// indices: four times as many claimed in all each time), while the loop
// is registered with the watcher (watcher.go). A loop the watcher sees
// registered at two consecutive ticks is shared: the watcher marks the
// cursor shared and submits helper tasks to the pool (Execute: never
// blocks, wakes an idle worker). From then on the caller, once back from
// its batch, and every helper that starts claim chunks of what is left
// from a second cursor, sized for load balance (what is left over four
// times the pool's parallelism, at least one index), and fold each chunk
// from a fresh accumulator into a slot of their own; the caller waits for
// the participants still in a chunk and combines its own batches and the
// chunks in index order.
//
// Why helpers that share a cursor rather than one task that runs the rest
// with the engine, as probe.go does: the caller is a worker inside a
// computation, and a worker waiting for a submitted task cannot help with
// it (a waiting worker runs only tasks of its own computation); it would
// sit idle while the rest ran on one worker. Sharing the cursor, the
// caller keeps working until nothing is left, and waits only for chunks
// that another worker has already started, never for a task still queued,
// so no wait here can deadlock a pool, a one-worker pool (which never gets
// here: it runs every loop inline) and a closed one (Execute fails; the
// caller runs everything) included. A started chunk may still call back
// into the caller's pool: the caller waits in forkjoin.Block on its
// *Worker, and with none (a *Pool from a worker's goroutine, possibly of
// another pool) as Invoke waits (taskShare.wait).
//
// Where: runRange (split.go) sends a short loop here from inside a task.
// A *Worker with slack queued (Surplus() >= 1, slackQueued) does not get
// here: the helper runs the loop inline while the slack lasts
// (smallInline, slackgate.go), with no registration, since every worker
// is busy or has its queued tasks to take and fine-grained loops nested
// in a busy computation would pay the probe for nothing; only what is
// left when the slack goes comes here.
//
// Invariant: every index of [0, n) runs exactly once. taskRecord.cur
// holds the loop's generation, n, the first unclaimed index and the shared
// bit in one word; the caller claims [k, end) by a CAS from k to end of
// an unshared cursor, the watcher shares by a CAS of the same word that
// sets the bit, so an index is either claimed by the caller or left to the
// chunk cursor (taskShare.cur), from which each chunk is claimed by one
// CAS. The caller leaves only after its last claim took the cursor to n
// (or closed it there for an early exit) without the cursor being shared,
// or, once shared, when every participant has left (taskShare.active
// reaches zero): the watcher counts itself as one while it reads the
// loop's plain fields and submits the helpers, a helper only joins while
// active is positive, and claims nothing after that, so no index, and no
// read of the spec, happens after the helper has returned or unwound. A
// helper still queued then finds active zero and returns; it holds only
// its taskShare, which is never reused. The generation in the word makes
// a recycled record (For's) safe: the watcher shares only the generation
// it saw at both ticks.

// Layout of taskRecord.cur: next (bits 0-10) and n (bits 11-21), both at
// most SequentialThreshold; the shared bit; the generation above.
const (
	tpBits     = 11
	tpMask     = 1<<tpBits - 1
	tpShared   = 1 << (2 * tpBits)
	tpGenShift = 2*tpBits + 1

	// tpGrowth is the factor by which the caller's claims grow: each batch
	// claims (tpGrowth-1) times what the caller has claimed so far, so a
	// loop of n indices costs about log4(n) CASes.
	tpGrowth = 4

	// tpChunkDiv times the pool's parallelism is the number of chunks
	// what is left is cut into at each claim of the shared phase (guided
	// self-scheduling): few CASes, and a balanced end.
	tpChunkDiv = 4
)

// SequentialThreshold must fit the record's next and n fields.
var _ = [tpMask - SequentialThreshold]struct{}{}

// taskRecord is the part of a loop's task probe the watcher sees.
type taskRecord struct {
	cur   atomic.Uint64                // gen | shared | n | next: see the layout above
	owner interface{ share(c uint64) } // the loop's spec; set before the record's first use, then read-only
}

// taskProbe is a loop's task probe: the record, the shared phase's state
// once the watcher has made it, and what the watcher needs to make it.
// pool and ctx are plain: written by the caller before it registers, read
// by the watcher only after its CAS has shared the cursor, while it counts
// as a participant, so the caller cannot have left the loop (and started
// another on a recycled spec).
type taskProbe[A any] struct {
	rec   taskRecord
	share atomic.Pointer[taskShare[A]] // stored by the watcher before its CAS shares the cursor
	pool  *forkjoin.Pool
	ctx   context.Context // the caller's computation's context (nil: none to follow)
}

// taskShare is the shared phase of one loop: the chunk cursor, the
// participants and the outcome. It is made by the watcher for one
// generation of the record and never reused.
type taskShare[A any] struct {
	// spec, gen, n and results (the slice) are plain: written by the
	// watcher before it publishes h (tp.share.Store, then the CAS that
	// the caller sees fail, then Execute for the helpers), read-only after.
	spec *rangeSpec[A]
	gen  uint64
	n    int
	// cur is chunk<<32 | next: the next chunk's number and first index.
	cur atomic.Uint64
	// div is tpChunkDiv times the pool's parallelism, stored by the
	// watcher after the CAS (0 until then: tpChunkDiv is used).
	div atomic.Int64
	// results[c] is the fold of chunk c (nil when the helper has no
	// combine); written by the participant that claimed c before it
	// leaves, read by the caller once every participant has left.
	results []A
	// active counts the participants in the loop: the caller and the
	// watcher from the start, each helper from when it joins; the one
	// that takes it to zero closes done.
	active   atomic.Int32
	done     chan struct{}
	stop     atomic.Bool                         // no new chunk: a panic, or the computation was canceled
	panicked atomic.Pointer[forkjoin.PanicError] // the first panic of a participant
	canceled atomic.Bool                         // the caller's computation was canceled
	ctx      context.Context                     // written by the watcher before the helpers exist; read by them
	pool     *forkjoin.Pool                      // likewise
}

// share is the watcher's side: if c is still the cursor, it marks it
// shared and starts the helpers. Called by the watcher only, for a record
// it saw at two consecutive ticks with c's generation, unshared and with
// indices left.
func (s *rangeSpec[A]) share(c uint64) {
	tp := &s.tprobe
	k, n := int(c&tpMask), int(c>>tpBits&tpMask)
	h := &taskShare[A]{spec: s, gen: c >> tpGenShift, n: n, done: make(chan struct{})}
	h.cur.Store(uint64(k))
	h.active.Store(2) // the caller and the watcher
	if s.combine != nil {
		h.results = make([]A, n-k) // at most one chunk per index
	}
	tp.share.Store(h)
	if !tp.rec.cur.CompareAndSwap(c, c|tpShared) {
		return // the caller claimed meanwhile, or left: h is never seen
	}
	// Counted in active: the caller is still in the loop.
	p, ctx := tp.pool, tp.ctx
	h.pool, h.ctx = p, ctx
	par := p.Parallelism()
	h.div.Store(int64(tpChunkDiv * par))
	for range min(par-1, n-k) {
		if p.Execute(h.help) != nil {
			break // closed, or a full bounded queue: the caller runs it
		}
	}
	h.leave()
}

// taskOpen reports whether c is the cursor of a loop that is running,
// unshared, with indices left to claim.
func taskOpen(c uint64) bool {
	return c&tpShared == 0 && c&tpMask < c>>tpBits&tpMask
}

// join counts a helper in, unless every participant has left already.
func (h *taskShare[A]) join() bool {
	for {
		a := h.active.Load()
		if a == 0 {
			return false
		}
		if h.active.CompareAndSwap(a, a+1) {
			return true
		}
	}
}

// leave counts a participant out; the last one closes done.
func (h *taskShare[A]) leave() {
	if h.active.Add(-1) == 0 {
		close(h.done)
	}
}

// fail records pe (the first one wins) and stops the claims.
func (h *taskShare[A]) fail(pe *forkjoin.PanicError) {
	h.panicked.CompareAndSwap(nil, pe)
	h.stop.Store(true)
}

// claim claims the next chunk: its number and range, or ok false once
// nothing is left, the loop is stopped or its early-exit bound is reached.
func (h *taskShare[A]) claim() (c, lo, hi int, ok bool) {
	for {
		if h.stop.Load() {
			return 0, 0, 0, false
		}
		x := h.cur.Load()
		c, lo = int(x>>32), int(uint32(x))
		if lo >= h.n || h.spec.limit.reached(lo) {
			return 0, 0, 0, false
		}
		div := int(h.div.Load())
		if div == 0 {
			div = tpChunkDiv
		}
		hi = lo + max((h.n-lo)/div, 1)
		if h.cur.CompareAndSwap(x, uint64(c+1)<<32|uint64(hi)) {
			return c, lo, hi, true
		}
	}
}

// work claims and runs chunks until none is left; r is the Runner handed
// to the leaves, w the participant's worker (nil if unknown), whose
// computation it checks for cancellation before each chunk.
func (h *taskShare[A]) work(r forkjoin.Runner, w *forkjoin.Worker) {
	s := h.spec
	for {
		if w != nil && w.Err() != nil {
			h.canceled.Store(true)
			h.stop.Store(true)
			return
		}
		c, lo, hi, ok := h.claim()
		if !ok {
			return
		}
		acc := s.runLeaf(r, s.start(), lo, hi)
		if h.results != nil {
			h.results[c] = acc
		}
	}
}

// help is a helper task: it joins the loop and works on it, within the
// caller's context if it has one, so that a canceled computation stops
// its helpers too. A panic stops the loop and goes to the caller.
func (h *taskShare[A]) help(w *forkjoin.Worker) {
	if !h.join() {
		return
	}
	defer h.leave()
	if h.ctx != nil && h.ctx.Done() != nil {
		// Not run at all if ctx is done already: nothing claimed then.
		_, _ = forkjoin.InvokeContext(h.ctx, h.pool, func(w *forkjoin.Worker) struct{} {
			h.helpOn(w)
			return struct{}{}
		})
		return
	}
	h.helpOn(w)
}

// helpOn runs help's work on w, recording a panic (or a runtime.Goexit,
// which goes on unwinding) for the caller. (A Goexit also reaches the
// pool's panic handler, as for any Execute task: no recover stops it.)
func (h *taskShare[A]) helpOn(w *forkjoin.Worker) {
	finished := false
	defer func() {
		if !finished {
			h.fail(forkjoin.CapturePanic(recover()))
		}
	}()
	h.work(w, w)
	finished = true
}

// wait waits until every participant has left; a worker waits in
// forkjoin.Block, so that its pool keeps its parallelism meanwhile. With
// no *Worker (a *Pool called from a worker's goroutine) it waits in
// forkjoin.Blocking: on a worker of any pool, that pool starts a
// compensating worker, so a helper's chunk that calls back into the
// caller's pool (Invoke on it from p's worker queues a task there) finds a
// worker to run it (TestShortLoopInsideTaskOtherPool). It queues nothing on
// p: a task there that waited for the loop could be taken by p's worker
// waiting inside a chunk of the same loop (for its Invoke on the caller's
// pool), which then waited for itself, for good
// (TestShortLoopInsideTaskOtherPoolWaiterNotHelped). With no compensating
// worker free, Blocking runs the wait on a goroutine of its own and the
// caller's worker runs its pool's tasks meanwhile
// (TestShortLoopInsideTaskOtherPoolNoSpare).
func (h *taskShare[A]) wait(w *forkjoin.Worker) {
	select {
	case <-h.done:
		return
	default:
	}
	await := func() { <-h.done }
	if w != nil {
		forkjoin.Block(w, await)
		return
	}
	forkjoin.Blocking(await)
}

// taskProbeRun runs [0, n) of s (2 <= n <= SequentialThreshold, no Grain)
// from inside a task: r is the caller's Runner, w its worker if r is one
// (nil for a *Pool called from a worker's goroutine), p the pool the loop
// runs on. See the top of this file.
func taskProbeRun[A any](s *rangeSpec[A], r forkjoin.Runner, w *forkjoin.Worker, p *forkjoin.Pool, n int) A {
	tp := &s.tprobe
	acc := s.start() // before registering: a panic in it leaves nothing registered
	if tp.rec.owner == nil {
		tp.rec.owner = s // a fresh spec; a recycled one has it already
	}
	tp.pool, tp.ctx = p, nil
	if w != nil {
		tp.ctx = w.Context()
	}
	gen := tp.rec.cur.Load()>>tpGenShift + 1
	base := gen<<tpGenShift | uint64(n)<<tpBits
	tp.rec.cur.Store(base | 1) // open, with [0, 1) claimed
	registerTask(&tp.rec, w)
	k := 1
	var h *taskShare[A] // set once the caller has seen the cursor shared
	finished := false
	defer func() {
		if finished {
			return
		}
		// A panic in a batch or a chunk of the caller's (or a Goexit):
		// stop the loop, wait for the participants, unwind with a
		// *PanicError.
		v := recover()
		if h == nil && !tp.rec.cur.CompareAndSwap(base|uint64(k), base|uint64(n)) {
			h = tp.sharedFor(gen)
		}
		if h != nil {
			h.stop.Store(true)
			if k >= 0 {
				h.leave()
			}
			h.wait(w)
		}
		if v != nil {
			panic(forkjoin.CapturePanic(v))
		}
	}()
	acc = s.runLeaf(r, acc, 0, 1)
	for k < n {
		end, exit := min(tpGrowth*k, n), s.limit.reached(k)
		if exit {
			end = n // early exit: close the cursor where it is
		}
		if !tp.rec.cur.CompareAndSwap(base|uint64(k), base|uint64(end)) {
			h = tp.sharedFor(gen)
			break
		}
		if exit {
			break
		}
		lo := k
		k = end
		acc = s.runLeaf(r, acc, lo, k)
	}
	if h == nil {
		finished = true
		return acc
	}
	// Shared: work on the chunks, then wait for the other participants.
	h.work(r, w)
	k = -1 // left: the deferred function must not leave again
	h.leave()
	h.wait(w)
	finished = true
	if pe := h.panicked.Load(); pe != nil {
		panic(pe)
	}
	if h.canceled.Load() && h.ctx != nil && h.ctx.Err() != nil {
		panic(forkjoin.CapturePanic(h.ctx.Err()))
	}
	if s.combine == nil {
		return acc
	}
	return combineChunks(s, acc, h.results[:h.cur.Load()>>32])
}

// combineChunks returns acc combined with the chunks' results in index
// order. combine is the user's (Reduce's, MinFunc's cmp): rethrow makes
// its panic a *forkjoin.PanicError, as when the engine combines on the
// pool (TestShortLoopInsideTaskCombinePanic; it escaped raw before).
func combineChunks[A any](s *rangeSpec[A], acc A, results []A) A {
	defer rethrow()
	for _, r := range results {
		acc = s.combine(acc, r)
	}
	return acc
}

// sharedFor returns the shared phase of generation gen, which the caller
// has just seen its cursor in: the watcher stored it before its CAS, and
// stores no other before the caller has left this generation.
func (tp *taskProbe[A]) sharedFor(gen uint64) *taskShare[A] {
	h := tp.share.Load()
	if h == nil || h.gen != gen&(1<<(64-tpGenShift)-1) {
		panic("magpie: internal error: a shared loop without its shared phase")
	}
	return h
}
