package magpie

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/refuse"
)

// The probe: how a loop without a Grain, called from outside the pool,
// decides whether to go parallel, by the time it takes rather than by its
// length. The caller runs the loop itself in batches it claims from a
// cursor, while the loop is registered with the watcher (watcher.go); if
// the loop is still running a tick later, the watcher claims everything
// not yet claimed and hands it to the pool as one task, which the engine
// splits as usual; the caller, back from its batch, finds the rest gone,
// waits for that task and combines the two results in index order.
//
//  1. A short loop (n <= SequentialThreshold) never reads the clock: its
//     batches double from one index (1, 1, 2, 4, ...), one CAS each, so a
//     loop of 100 cheap indices costs eight CASes and a registration, and
//     ends long before the watcher could look at it. An index that blocks
//     or runs long (100 indices of a millisecond) is covered from the
//     first one: the rest goes to the pool about a tick later.
//  2. A long loop reads the clock between batches as before (the first 16
//     indices, then eight times as many each time, capped by the budget
//     left) and hands the rest to the pool itself once probeBudget has
//     passed, without waiting for the watcher; the watcher still covers a
//     batch that blocks.
//
// Invariant: every index of [0, n) runs exactly once. probeRecord.next
// is the first index nobody has claimed (0 <= next <= n), -(from+1) once
// the watcher has claimed [from, n), or cursorClosed once the caller has
// left; the caller claims [k, end) by a CAS from k to end, the watcher by
// a CAS from k < n to -(k+1), so the two never both run an index. The
// caller leaves the loop only after closing the cursor (a CAS to
// cursorClosed) or, if the watcher claimed the rest, after the task that
// runs it has finished: no task of the loop runs on after the helper has
// returned or unwound, the rule of every forkjoin call. A closed or handed
// cursor can be claimed by nobody, so a record may be reused (For recycles
// its spec): the next loop writes n and the pool, then opens the cursor
// (a store of 0), and a watcher still holding the record from the last
// loop either finds it closed or claims from the new loop, consistently.
//
// A caller that is itself a worker of some pool (a helper called with a
// *Pool from inside a task) never registers here: it must not block on a
// hand-over while its own pool may need it, so its short loops go to the
// task probe (probetask.go), which waits only for work already running.

// probeRecord is the part of a loop's probe the watcher sees.
type probeRecord struct {
	next  atomic.Int64                    // first unclaimed index, -(from+1) once the rest is handed over, or cursorClosed
	hand  atomic.Pointer[handover]        // the watcher's hand-over, stored before its claim
	n     atomic.Int64                    // the loop's length, stored before the cursor opens
	seq   atomic.Uint64                   // registrations of this record: the watcher tells loops apart by it
	owner interface{ runRest(*handover) } // the loop's spec; set before the record's first use, then read-only
}

// cursorClosed is probeRecord.next once the caller has left the loop (and
// before a recycled record opens): no index to claim whatever n.
const cursorClosed = math.MaxInt64

// handover is the rest of a loop the watcher handed to the pool: indices
// [from, n), run by runRest, which closes done when they have finished.
type handover struct {
	from int
	done chan struct{}
}

// handOver claims the indices of rec nobody has claimed yet, if any, and
// starts a goroutine that runs them on the pool (the watcher itself must
// not block: the pool's queue may be bounded). Called by the watcher only.
func (rec *probeRecord) handOver() {
	k := rec.next.Load()
	if k < 0 || k >= rec.n.Load() {
		return // handed over already, or every index claimed by the caller
	}
	h := &handover{from: int(k), done: make(chan struct{})}
	rec.hand.Store(h)
	if rec.next.CompareAndSwap(k, -(k + 1)) {
		go rec.owner.runRest(h)
	}
}

// probeState is a loop's probe: the record the watcher sees, and the
// outcome of the rest if the watcher handed it over. rest, restPanic and
// rerun are written by runRest before it closes the hand-over's done
// channel and read by the caller after it has received from it: the
// channel orders them, no other goroutine touches them.
type probeState[A any] struct {
	rec       probeRecord
	pool      *forkjoin.Pool
	rest      A
	restPanic *forkjoin.PanicError
	rerun     bool // the pool was closed: the caller runs the rest itself
}

// runRest runs the handed-over indices [h.from, n) as one task on the
// pool, on a goroutine of its own (the caller is busy in an index), and
// records the outcome for the caller.
func (s *rangeSpec[A]) runRest(h *handover) {
	ps := &s.probe
	defer close(h.done)
	defer func() {
		if v := recover(); v != nil {
			ps.restPanic = forkjoin.CapturePanic(v)
		}
	}()
	n := int(ps.rec.n.Load())
	// Refused (the pool closed meanwhile): nothing of the rest ran, and the
	// caller runs it (rerun). A panic of the rest's indices, also one
	// holding ErrClosed, is the loop's (refuse.Run).
	ps.rest, ps.rerun = refuse.Run(ps.pool, func(w *forkjoin.Worker) A {
		return rangeTask[A]{s, h.from, n, s.start()}.Compute(w)
	})
}

// probeRun runs [0, n) of s (n >= 2, no Grain) from outside the pool p,
// r being the caller's Runner (p, or nil): the probe described at the top
// of this file.
func probeRun[A any](s *rangeSpec[A], r forkjoin.Runner, p *forkjoin.Pool, n int) A {
	ps := &s.probe
	onWorker := forkjoin.OnWorker()
	if onWorker && n <= SequentialThreshold {
		// A worker must not wait on a hand-over: the task probe, which
		// waits only for work already running (probetask.go).
		return taskProbeRun(s, r, nil, p, n)
	}
	// The first accumulator before the registration: a panic in it
	// (ReduceWith's newAcc) must not leave the record registered.
	acc := s.start()
	if ps.rec.owner == nil {
		ps.rec.owner = s // a fresh spec; a recycled one has it already
	}
	// The pool and the outcome fields are plain: the watcher's goroutine
	// reads and writes them only after claiming from the open cursor,
	// whose store below orders them.
	var zero A
	ps.pool, ps.rest, ps.restPanic, ps.rerun = p, zero, nil, false
	ps.rec.n.Store(int64(n))
	ps.rec.next.Store(0)
	slot := -1
	if !onWorker {
		slot = registerProbe(&ps.rec)
	}
	if slot < 0 && n <= SequentialThreshold {
		// Every slot taken: a short loop runs inline, unwatched.
		ps.rec.next.Store(cursorClosed)
		return inlineLeaf(s, r, acc, 0, n)
	}
	k, handed := 0, false
	closed := false
	defer func() {
		if closed {
			return
		}
		// A panic in a batch (or a runtime.Goexit): keep the watcher from
		// starting the rest, or wait for the rest it started, then unwind
		// with a *PanicError, as inlineLeaf would (one defer per call
		// rather than one per batch).
		unregisterProbe(slot)
		if !ps.rec.next.CompareAndSwap(int64(k), cursorClosed) {
			<-ps.rec.hand.Load().done
		}
		if v := recover(); v != nil {
			panic(forkjoin.CapturePanic(v))
		}
	}()
	clocked := n > SequentialThreshold
	next, start := 1, time.Duration(0)
	if clocked {
		next, start = probeFirst, time.Since(epoch)
	}
	for k < n && !s.limit.reached(k) {
		end := min(next, n)
		if !ps.rec.next.CompareAndSwap(int64(k), int64(end)) {
			handed = true
			break
		}
		lo := k
		k = end                        // the cursor's value: what the deferred close expects
		acc = s.runLeaf(r, acc, lo, k) // a panic: see the deferred function
		if !clocked {
			next = 2 * k
			continue
		}
		elapsed := time.Since(epoch) - start
		if elapsed >= probeBudget && k < n {
			// Past the budget: hand the rest to the pool from here, the
			// accumulator with it (no combine), unless the watcher has.
			if ps.rec.next.CompareAndSwap(int64(k), cursorClosed) {
				closed = true
				unregisterProbe(slot)
				return runOnPool(s, r, p, k, n, acc)
			}
			handed = true
			break
		}
		perIter := max(elapsed/time.Duration(k), 1)
		next = min(k*probeGrowth, k+int((probeBudget-elapsed)/perIter)+1)
	}
	closed = true
	unregisterProbe(slot)
	if !handed && ps.rec.next.CompareAndSwap(int64(k), cursorClosed) {
		return acc // done, or stopped early with the rest closed
	}
	return combineRest(s, r, acc, n)
}

// runOnPool runs [lo, n) of s on p from acc, and waits. (Out of line so
// that probeRun's variables are not captured by the closure, which would
// move them to the heap on every call.) If p refuses the task (closed
// meanwhile), the caller runs the rest itself, as it does for a rest the
// watcher handed over (combineRest): Invoke's ErrClosed escaped raw before,
// after part of the loop had run on the caller
// (TestLongLoopOnPoolClosedMidLoop, review rev20).
func runOnPool[A any](s *rangeSpec[A], r forkjoin.Runner, p *forkjoin.Pool, lo, n int, acc A) A {
	res, refused := refuse.Run(p, func(w *forkjoin.Worker) A {
		return rangeTask[A]{s, lo, n, acc}.Compute(w)
	})
	if !refused {
		return res
	}
	if s.limit.reached(lo) {
		return acc
	}
	return inlineLeaf(s, r, acc, lo, n)
}

// combineRest waits for the rest the watcher handed over and returns acc
// combined with it, re-raising its panic. On a closed pool the caller
// runs the rest itself. A panic in combine (the user's: Reduce's) reaches
// the caller as a *forkjoin.PanicError, as when the engine combines on the
// pool (rethrow; TestShortLoopCombinePanic: it escaped raw before).
func combineRest[A any](s *rangeSpec[A], r forkjoin.Runner, acc A, n int) A {
	defer rethrow()
	ps := &s.probe
	h := ps.rec.hand.Load()
	<-h.done
	rest := ps.rest
	switch {
	case ps.restPanic != nil:
		panic(ps.restPanic)
	case ps.rerun:
		rest = s.start()
		if !s.limit.reached(h.from) {
			rest = inlineLeaf(s, r, rest, h.from, n)
		}
	}
	if s.combine == nil {
		return acc
	}
	return s.combine(acc, rest)
}
