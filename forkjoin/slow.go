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
// waiting on another pool); slowSeq, a sequence lock around every change
// of slowStart, is odd during one and names the state otherwise, so that
// the watchdog reads a consistent start and reports a state at most once.
// Only the worker writes them; without the option neither is touched and
// no clock is read.

import "time"

// slowWatch is the watchdog's state; nil without the option.
type slowWatch struct {
	threshold time.Duration
	handler   func(p *Pool, worker int, running time.Duration)
	done      chan struct{} // closed when the watchdog has exited
}

// beginRoot records that w starts a submitted task and returns the start
// of the task it runs inside (0 if none), for endRoot.
func (w *Worker) beginRoot() (saved int64) {
	saved = w.slowStart.Load()
	w.setSlowStart(nanotime())
	return saved
}

// endRoot records that the task begun by beginRoot has ended. The outer
// task, if any, is a new state for the watchdog, which may report it once
// more.
func (w *Worker) endRoot(saved int64) { w.setSlowStart(saved) }

// setSlowStart changes slowStart under a sequence lock: slowSeq is odd
// while the change is in progress, so that the watchdog never pairs a
// start with the wrong task. Only w writes either.
func (w *Worker) setSlowStart(t int64) {
	s := w.slowSeq.Load()
	w.slowSeq.Store(s + 1)
	w.slowStart.Store(t)
	w.slowSeq.Store(s + 2)
}

// watch is the watchdog goroutine: it exits once every worker has.
func (p *Pool) watch(s *slowWatch) {
	defer close(s.done)
	period := max(s.threshold/4, time.Millisecond)
	tick := time.NewTicker(period)
	defer tick.Stop()
	reported := make([]uint64, len(p.workers)) // slowSeq of the task last reported, per worker
	for {
		select {
		case <-p.stopped:
			return
		case <-tick.C:
		}
		now := nanotime()
		for i, w := range p.workers {
			seq := w.slowSeq.Load()
			start := w.slowStart.Load()
			if seq%2 == 1 || seq != w.slowSeq.Load() || start == 0 || seq == reported[i] {
				continue // changing under us, idle, or reported
			}
			if d := time.Duration(now - start); d >= s.threshold {
				reported[i] = seq
				p.reportSlow(s, i, d)
			}
		}
	}
}

// reportSlow calls the handler; a panic in it is dropped so that it cannot
// kill the watchdog.
func (p *Pool) reportSlow(s *slowWatch, worker int, d time.Duration) {
	defer func() { _ = recover() }()
	s.handler(p, worker, d)
}
