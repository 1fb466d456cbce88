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
// pool's parallelism); beyond that, fn runs without compensation. Use Block
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
// submitted ones included, meanwhile.
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
	if spare := p.startSpare(); spare != nil {
		defer p.retireSpare(spare)
	} else if foreign {
		blockForeign(w, fn)
		return
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

// startSpare starts a compensating worker, if one is free.
func (p *Pool) startSpare() *Worker {
	p.spareMu.Lock()
	k := len(p.spares) - 1
	if k < 0 {
		p.spareMu.Unlock()
		return nil
	}
	s := p.spares[k]
	p.spares = p.spares[:k]
	p.spareMu.Unlock()
	s.retire.Store(false)
	p.addLive(1)
	go s.loop()
	return s
}

// retireSpare tells a compensating worker to exit once it is idle. It goes
// back on the spare list when its goroutine has exited (workerExited), so it
// is never started twice.
func (p *Pool) retireSpare(s *Worker) {
	s.retire.Store(true)
	p.sleepers.Unpark(s.index)
}
