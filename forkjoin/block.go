package forkjoin

// Block runs fn, which may block (I/O, a lock, a channel receive, a sleep),
// on behalf of a task running on w, without starving the pool: while fn
// runs, a compensating worker takes w's place, so that the pool keeps
// Parallelism() workers running tasks. The compensating worker retires once
// it finds no work after fn has returned. This is the analogue of Java's
// ForkJoinPool.managedBlock.
//
// At most WithMaxBlocked compensating workers run at once (by default the
// pool's parallelism); beyond that, fn runs without compensation. Use Block
// for waits that are long compared with a task switch (microseconds and
// more); it costs a goroutine start. Compensating workers have indices from
// Parallelism() upwards.
func Block(w *Worker, fn func()) {
	if w == nil {
		panicNilWorker("Block")
	}
	if fn == nil {
		panic("forkjoin: Block called with a nil function")
	}
	p := w.pool
	// Tasks w forked and keeps private would be invisible to the
	// compensating worker for as long as fn blocks, and fn may be waiting
	// for one of them: make them stealable first.
	if w.deque.Publish() && w.sleepers.Any() {
		w.sleepers.WakeOne() // without a spare, only a sleeper can take them
	}
	if spare := p.startSpare(); spare != nil {
		defer p.retireSpare(spare)
	}
	w.own.blocks++
	fn()
}

// Blocking runs fn, which may block, on the calling goroutine, for code
// that has no *Worker at hand (a library called with a *Pool from inside a
// task): on a worker of any pool it is Block on that worker, so that its
// pool keeps its parallelism while fn blocks; on any other goroutine it
// just calls fn. Finding the calling worker costs what OnWorker costs.
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
		Block(w, fn)
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
