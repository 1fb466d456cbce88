package forkjoin

// Slow-task reports (WithSlowTaskHandler): the "health check" of a task
// server, which must see a stuck task while it is still running, not only
// once it returns. A watchdog goroutine, started by New only when the
// option is set, looks at every worker each quarter of the threshold and
// reports a submitted task that has run longer than the threshold, once
// per task.
//
// Invariant: a worker's slowStart is nonzero exactly while it runs a
// submitted task (the innermost one, if it runs one inside another while
// waiting on another pool), and slowTask then names that task (a number
// the worker gives each submitted task it starts; restored with the start
// when a nested one ends). slowSeq, a sequence lock around every change of
// the pair, is odd during one, so that the watchdog reads a consistent
// pair; it reports a task number at most once, so a task is reported once
// even if it runs nested submissions. Only the worker writes them; without
// the option none is touched and no clock is read.

import "time"

// slowWatch is the watchdog's state; nil without the option. Set by New
// before the workers and the watchdog start; read-only after.
type slowWatch struct {
	threshold time.Duration
	handler   func(p *Pool, worker int, running time.Duration)
	done      chan struct{} // closed when the watchdog has exited
}

// slowState is what beginRoot saves of the task w was running.
type slowState struct {
	start int64
	task  uint64
}

// beginRoot records that w starts a submitted task and returns the state
// of the task it runs inside (start 0 if none), for endRoot.
func (w *Worker) beginRoot() (saved slowState) {
	saved = slowState{w.slowStart.Load(), w.slowTask.Load()}
	// slowTasks is an owner-only count, never read by another goroutine;
	// a start of 0 would mean idle.
	w.slowTasks++
	w.setSlow(slowState{max(nanotime(), 1), w.slowTasks})
	return saved
}

// endRoot records that the task begun by beginRoot has ended: the outer
// task, if any, is running again, under its own number, so the watchdog
// does not report it a second time.
func (w *Worker) endRoot(saved slowState) { w.setSlow(saved) }

// setSlow changes slowStart and slowTask under a sequence lock: slowSeq
// is odd while the change is in progress, so that the watchdog never pairs
// a start with the wrong task. Only w writes them.
func (w *Worker) setSlow(s slowState) {
	q := w.slowSeq.Load()
	w.slowSeq.Store(q + 1)
	w.slowStart.Store(s.start)
	w.slowTask.Store(s.task)
	w.slowSeq.Store(q + 2)
}

// watch is the watchdog goroutine: it exits once every worker has.
func (p *Pool) watch(s *slowWatch) {
	defer close(s.done)
	period := max(s.threshold/4, time.Millisecond)
	tick := time.NewTicker(period)
	defer tick.Stop()
	reported := make([]uint64, len(p.workers)) // number of the task last reported, per worker
	for {
		select {
		case <-p.stopped:
			return
		case <-tick.C:
		}
		now := nanotime()
		for i, w := range p.workers {
			seq := w.slowSeq.Load()
			start, task := w.slowStart.Load(), w.slowTask.Load()
			if seq%2 == 1 || seq != w.slowSeq.Load() || start == 0 || task == reported[i] {
				continue // changing under us, idle, or reported
			}
			if d := time.Duration(now - start); d >= s.threshold {
				reported[i] = task
				p.reportSlow(s, i, d)
			}
		}
	}
}

// reportSlow calls the handler and returns once it has; a panic in it is
// dropped so that it cannot kill the watchdog. As reportPanic does, it
// runs the handler on a goroutine of its own, registered as awaited by p
// (awaitedByGoroutine) while the handler runs: a runtime.Goexit in the
// handler (t.FailNow in a test's) ends that goroutine alone, where on the
// watchdog's it ended the watchdog, so that no slow task was reported
// again (TestSlowTaskHandlerGoexitKeepsWatching); and Close and Shutdown
// called from the handler return at once, as from a task of the pool,
// where they waited for the watchdog, which waited for the handler: a
// deadlock (TestSlowTaskHandlerCanClose). One goroutine per report: the
// reports are rare, at most one per slow task.
func (p *Pool) reportSlow(s *slowWatch, worker int, d time.Duration) {
	runHandler([]*Pool{p}, func() { s.handler(p, worker, d) })
}
