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

import (
	"sync/atomic"
	"time"
)

// slowWatch is the watchdog's state; nil without the option.
type slowWatch struct {
	threshold time.Duration
	handler   func(p *Pool, worker int, running time.Duration)
	done      chan struct{} // closed when the watchdog has exited
	// key is the watchdog goroutine's goroutineKey, stored first thing in
	// watch: Close and Shutdown called from the handler, on that
	// goroutine, must not wait for it (watchdogDone). Atomic: Close from
	// any goroutine reads it. A key left after the watchdog exited names
	// no live goroutine but, after reuse, one that finds done closed; one
	// ended by a handler's Goexit clears it first (0 names no goroutine).
	key atomic.Uint64
	// reported[i] is the number of the task of worker i last reported.
	// Plain: only the watchdog goroutine touches it, and a fresh one
	// after a handler's Goexit (watch) starts after the old one's last
	// access (the go statement orders them).
	reported []uint64
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

// watch is the watchdog goroutine: it exits once every worker has. A
// handler that calls runtime.Goexit, which no recover stops, ends the
// goroutine: the watchdog then carries on in a fresh one, as a worker
// does after a task's Goexit, with the tasks reported so far (s.reported),
// so that later stuck tasks are still reported and none twice; only the
// exit once the workers have gone closes done
// (TestSlowHandlerGoexitKeepsWatchdog).
func (p *Pool) watch(s *slowWatch) {
	s.key.Store(goroutineKey())
	exited := false
	defer func() {
		if !exited {
			// The handler called Goexit. This goroutine's g may be reused
			// once it has gone, before the fresh one stores its key: a
			// Close there must still wait.
			s.key.Store(0)
			go p.watch(s)
			return
		}
		close(s.done)
	}()
	period := max(s.threshold/4, time.Millisecond)
	tick := time.NewTicker(period)
	defer tick.Stop()
	if s.reported == nil {
		s.reported = make([]uint64, len(p.workers))
	}
	reported := s.reported
	for {
		select {
		case <-p.stopped:
			exited = true
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

// reportSlow calls the handler; a panic in it is dropped so that it cannot
// kill the watchdog (a Goexit: see watch).
func (p *Pool) reportSlow(s *slowWatch, worker int, d time.Duration) {
	defer func() { _ = recover() }()
	s.handler(p, worker, d)
}
