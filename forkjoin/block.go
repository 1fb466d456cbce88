package forkjoin

import "runtime"

// Block runs fn, which may block (I/O, a lock, a channel receive, a sleep),
// on behalf of a task running on w, without starving the pool: while fn
// runs, a compensating worker takes w's place, so that the pool keeps
// Parallelism() workers running tasks. Once fn has returned, the
// compensating worker retires as soon as it is between two tasks with none
// of its own left, or finds no work: under steady load too, so that the pool
// goes back to Parallelism() workers (TestSpareRetiresUnderSteadyLoad). This
// is the analogue of Java's ForkJoinPool.managedBlock.
//
// At most WithMaxBlocked compensating workers run at once (by default the
// pool's parallelism). A Block takes a free one, or else takes over one
// that is retiring, left by a Block that has returned, and idle
// (TestBlockRightAfterBlockIsCompensated; one busy with a task is not:
// TestRev25BlockDoesNotTakeOverBusySpare); with none, fn runs without
// compensation until one comes free, from a Block that returns
// (TestBlockEndHandsSpareToQueuedBlock) or a compensating worker that
// exits (TestBlockQueuedForExitingSpare). So while fewer Blocks are in
// progress at once than Parallelism() plus WithMaxBlocked, some worker
// goroutine of the pool is not blocked in one, free to run the tasks they
// wait for (TestBlockChainsWithinBoundStress); with more, all may be, and
// a fn that waits for a task of the pool then waits for good. A goroutine
// not blocked in a Block may be waiting in a join, though, which runs
// only tasks of its own computation, never a submitted one: a fn that
// waits for a submitted task (or one of another computation) may wait
// until such joins end (TestRev27JoinWaiterDoesNotServeBlock). Use Block
// for waits that are long compared with a task switch (microseconds and
// more); it costs a goroutine start. Compensating workers have indices from
// Parallelism() upwards. In a worker hook (a task run inline by Invoke
// from one) fn runs plainly: see Blocking.
func Block(w *Worker, fn func()) {
	if w == nil {
		panicNilWorker("Block")
	}
	if fn == nil {
		panic("forkjoin: Block called with a nil function")
	}
	blockOn(w, fn, false)
}

// blockOn is Block; with foreign set, when no compensating worker is free,
// fn runs on a goroutine of its own while w waits for it as a worker waits
// for another pool's task (waitForeign), running its pool's tasks,
// submitted ones included, meanwhile: it neither takes over a retiring
// one, which may be busy with a long task
// (TestRev25BlockingDoesNotTakeOverBusySpare), nor queues for one (a plain
// Block does both, see startSpare), as w itself keeps the pool going.
func blockOn(w *Worker, fn func(), foreign bool) {
	p := w.pool
	// Tasks w forked and keeps private would be invisible to the
	// compensating worker for as long as fn blocks, and fn may be waiting
	// for one of them: make them stealable first.
	w.publishTasks() // without a spare, only a sleeper can take them
	w.own.blocks++
	if w.inHook {
		// A hook runs no task: there is no place to take, and a
		// compensating worker would call the hooks in turn, whose
		// Blocking would start the next one (TestBlockingInHookRunsPlain).
		// Nor may the hook run tasks while fn blocks (WithWorkerHooks).
		// Its forks (an Invoke inline in it) are published above.
		fn()
		return
	}
	// Counted blocked before the search: w, a compensating worker that
	// retires, is not its own compensation (startSpare skips blocked
	// ones; counted after, it took itself over:
	// TestBlockIsNotItsOwnCompensation).
	w.blocking.Add(1)
	lease := p.startSpare(w, !foreign)
	if !lease.held() && foreign {
		w.blocking.Add(-1) // w helps its pool meanwhile
		blockForeign(w, fn)
		return
	}
	defer w.blocking.Add(-1)
	if lease.held() {
		defer p.endSpare(lease)
	}
	fn()
}

// blockForeign runs fn on a new goroutine and waits for it on w, helping
// w's pool meanwhile; a panic of fn is raised again on w, with its value
// as it is, except for two that cannot be raised from here as they are: a
// runtime error, raised from this package's frame, would be taken for a
// bug in magpie and end the program (internalerr.go), and a
// runtime.Goexit cannot be carried over (raised as panic(nil) it became a
// *runtime.PanicNilError, a runtime error too). Both are raised as the
// *PanicError CapturePanic makes of them on fn's goroutine: the runtime
// error with fn's stack, the Goexit as ErrGoexit
// (TestBlockingForeignPanicIsTheTasks). pv is written before the latch
// is set and read after it is seen set. The goroutine is registered as
// awaited by w's pool while fn runs, so that Close or Shutdown of that
// pool from fn returns at once, as from the task (and from fn when a
// compensating worker is free): it waited for w to exit, and w for fn
// (TestBlockingForeignCanClose).
func blockForeign(w *Worker, fn func()) {
	var (
		l  latch
		pv any // fn's panic, to raise again on w; nil if fn returned
	)
	waiting := waitersOf(w.pool)
	go func() {
		ok := false
		defer func() {
			if !ok {
				v := recover()
				if _, isRuntime := v.(runtime.Error); isRuntime || v == nil {
					v = CapturePanic(v) // on fn's goroutine: fn's frame is the culprit
				}
				pv = v
			}
			l.set()
		}()
		defer awaited(waiting)()
		fn()
		ok = true
	}()
	w.waitForeign(&l)
	if pv != nil {
		panic(pv)
	}
}

// Blocking runs fn, which may block, on the calling goroutine, for code
// that has no *Worker at hand (a library called with a *Pool from inside a
// task): on a worker of any pool it is Block on that worker, so that its
// pool keeps its parallelism while fn blocks (or, with no compensating
// worker free, fn runs on a goroutine of its own while the worker runs its
// pool's tasks until fn returns; Close and Shutdown of that pool called
// from fn return at once either way, as from the task:
// TestBlockingForeignCanClose); in a worker hook (WithWorkerHooks), and
// on any other goroutine, it just calls fn. Finding the calling worker
// costs what OnWorker costs. A panic of fn reaches the caller with its
// value (TestBlockingWithoutSpareHelpsItsPool); when fn ran on a goroutine
// of its own, a runtime error or a runtime.Goexit in it arrives as a
// *PanicError, the Goexit as ErrGoexit (TestBlockingForeignPanicIsTheTasks).
//
// Prefer it to waiting through a task submitted to a pool: a worker that
// waits helps its pool with queued tasks, so a task that blocks until the
// waiter's own work is done can be run by that very waiter, nested inside
// the work it waits for, and never return (magpie's short loops did that:
// TestShortLoopInsideTaskOtherPoolWaiterNotHelped).
func Blocking(fn func()) {
	if fn == nil {
		panic("forkjoin: Blocking called with a nil function")
	}
	if w := callingWorker(); w != nil {
		// With no compensating worker free, a plain call would hold w
		// while fn waits, perhaps for work queued on w's pool that only w
		// could run (a short loop's index calling Invoke on the waiting
		// caller's pool: TestShortLoopInsideTaskOtherPoolNoSpare).
		blockOn(w, fn, true)
		return
	}
	fn()
}

// # The compensating workers' lifecycle
//
// Invariant: each compensating slot (p.workers[Parallelism():]) has at
// most one goroutine, and its state (Worker.spareState) says what it is:
//
//   - spareFree: no goroutine; the slot is on p.spares. Only spareMu's
//     holder moves a slot out of or into this state.
//   - spareRunning: its goroutine stands in for exactly one blocked task
//     (one spareLease holds it) and does not leave its loop, on a drained
//     pool neither: a fork never joined outlives its root, and may Block
//     there (TestRev25DrainedPoolSpareStaysForItsBlock). It may itself
//     block in a nested Block, which then needs a slot of its own.
//   - spareRetiring: its goroutine stands in for nobody; it leaves its
//     loop once idle (exitIdle, retiringBusy), unless a Block reclaims it
//     first. Leaving and reclaiming are each one CAS from spareRetiring,
//     so exactly one of them happens: the goroutine's to spareExiting, or
//     startSpare's, under spareMu, back to spareRunning.
//   - spareExiting: its goroutine has decided to leave and will not run
//     another task; it calls the exit hook and then workerExited, which,
//     under spareMu, either hands the slot to the oldest Block waiting for
//     one (a fresh goroutine, which calls the start hook again: the hooks
//     of an index still alternate) or puts it back on p.spares.
//
// So a Block that finds no free slot takes a retiring, idle one over (it was
// left with no compensation while the previous Block's spare was still
// on its way out, and its fn could wait for a task that only the exiting
// spare would have run: TestBlockRightAfterBlockIsCompensated), and a
// plain Block that finds none at all queues (p.spareWaits) for the next
// slot a Block gives back (endSpare) or an exiting goroutine frees
// (workerExited: TestBlockQueuedForExitingSpare). A spare that is itself
// blocked in a Block (Worker.blocking) is neither taken over nor handed
// on: it could run nothing for the Block that got it. The number of
// slots bounds the compensating goroutines (WithMaxBlocked) as before:
// reclaiming and handing over reuse a slot, they never add one.
const (
	spareFree int32 = iota
	spareRunning
	spareRetiring
	spareExiting
)

// spareWait is a Block queued for a compensating worker (startSpare with
// wait set), blocking w. s is the worker handed to it, nil until then;
// spareMu guards it and p.spareWaits.
type spareWait struct{ w, s *Worker }

// spareLease is the compensation startSpare gives a Block: a compensating
// worker now (s), or a place in the queue for one (q), or nothing.
type spareLease struct {
	s *Worker
	q *spareWait
}

func (l spareLease) held() bool { return l.s != nil || l.q != nil }

// startSpare finds a compensating worker for a Block on w: a free slot,
// whose goroutine it starts, or else, with wait set, a retiring one not
// blocked itself, which it takes over, or else a place in the queue for
// the next slot to come free (endSpare, workerExited): the Block runs
// uncompensated until then. Without wait (Blocking, settleForeign, whose
// worker can help its pool instead), a free slot or an empty lease: a
// retiring worker may be busy with a long task, and taken over it left
// the worker blocked with nobody to run what fn waited for
// (TestRev25BlockingDoesNotTakeOverBusySpare). Invariant: see above.
func (p *Pool) startSpare(w *Worker, wait bool) spareLease {
	p.spareMu.Lock()
	if k := len(p.spares) - 1; k >= 0 {
		s := p.spares[k]
		p.spares = p.spares[:k]
		s.spareState.Store(spareRunning)
		p.spareMu.Unlock()
		p.addLive(1)
		go s.loop()
		return spareLease{s: s}
	}
	if !wait || len(p.workers) == p.parallelism {
		p.spareMu.Unlock()
		return spareLease{}
	}
	for _, s := range p.workers[p.parallelism:] {
		// Only an idle one: one running a task (perhaps a long one)
		// stood in for nobody until that task returned, while the
		// queue would get the next slot to come free
		// (TestRev25BlockDoesNotTakeOverBusySpare).
		if s.idling.Load() && s.blocking.Load() == 0 &&
			s.spareState.CompareAndSwap(spareRetiring, spareRunning) {
			p.spareMu.Unlock()
			// It may sleep, or be about to, after finding no work: the
			// blocked task's forks, published before, are for it.
			p.sleepers.Unpark(s.index)
			return spareLease{s: s}
		}
	}
	q := &spareWait{w: w}
	p.spareWaits = append(p.spareWaits, q)
	p.spareMu.Unlock()
	return spareLease{q: q}
}

// endSpare ends a Block's lease: the compensating worker it holds, if
// any, goes to the oldest Block queued for one, or else retires (exits
// once idle, unless a Block reclaims it first). A queued lease never
// served leaves the queue.
func (p *Pool) endSpare(l spareLease) {
	p.spareMu.Lock()
	s := l.s
	if l.q != nil {
		if s = l.q.s; s == nil {
			for i, q := range p.spareWaits {
				if q == l.q {
					p.spareWaits = append(p.spareWaits[:i], p.spareWaits[i+1:]...)
					break
				}
			}
			p.spareMu.Unlock()
			return
		}
	}
	var q *spareWait
	if s.blocking.Load() == 0 { // else the queue waits for another slot, or for s's exit
		q = p.nextSpareWait(s)
	}
	if q != nil {
		q.s = s // it stays spareRunning, for q's Block now
	} else {
		// s is running, and only the lease's holder moves it on: a
		// running spare stays on a drained pool too (it left, and this
		// retired the worker of the Block that took the freed slot next:
		// TestRev25DrainedPoolSpareStaysForItsBlock). A CAS all the same.
		s.spareState.CompareAndSwap(spareRunning, spareRetiring)
	}
	p.spareMu.Unlock()
	p.sleepers.Unpark(s.index) // retiring, it exits; handed over, it looks for the new Block's tasks
}

// nextSpareWait dequeues the oldest Block waiting for a compensating
// worker, other than one blocking s itself, or returns nil. Called with
// spareMu held.
func (p *Pool) nextSpareWait(s *Worker) *spareWait {
	for i, q := range p.spareWaits {
		if q.w != s {
			p.spareWaits = append(p.spareWaits[:i], p.spareWaits[i+1:]...)
			return q
		}
	}
	return nil
}
