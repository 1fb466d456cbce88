package forkjoin

import "sync/atomic"

// Broadcast runs fn once on each of the pool's Parallelism() workers, with
// that worker as its argument, and returns after every call has returned:
// to warm or reset per-worker state (indexed by w.Index()), as rayon's
// broadcast does. r names the pool as for Run: a *Pool (a nil one, or a
// nil r, means Default()) or the calling task's *Worker. Compensating
// workers that Block may be running are not included.
//
// When each call runs. Each worker runs its call the next time it looks
// for work: at once if it is idle (asleep ones are woken), between two
// tasks if it is busy, or while it waits in a join, between the tasks it
// helps with. Called from one of the pool's tasks, the calling worker runs
// its own call inline first, then waits for the others the way a join
// waits, helping meanwhile; so Broadcast from a task never deadlocks on
// its own worker, and concurrent Broadcasts from tasks on different
// workers each run on the others' while they wait
// (TestBroadcastFromTasks). A worker running a long task, or blocked in
// one (in Block, a channel, a lock), runs its call only when that task
// finishes or waits in a join: Broadcast waits for it, as rayon's does
// for each thread, so a task that blocks until the caller of Broadcast
// goes on deadlocks (TestBroadcastWaitsForBusyWorker). Calls of concurrent
// Broadcasts on one worker run in no particular order.
//
// A panic in fn on any worker is captured; Broadcast re-raises the first
// as a *PanicError after every call has returned. On a closed pool,
// Broadcast panics with ErrClosed and runs nothing, called from outside
// or from inside (a task still draining, a fork never joined, a worker
// hook): once the pool is closed its workers may be exiting. Called from a task,
// fn runs in that task's computation (its forks, joins and w.Context()
// are the caller's); from outside, in a computation of its own, without
// a context. fn must not call runtime.Goexit: a call run on a worker
// waiting in a join would unwind that worker's task too (the price
// waitForeign pays as well); it is reported as a *PanicError with
// ErrGoexit and the other calls still run. A nil *Worker in r panics with
// "forkjoin: Broadcast called with a nil *Worker".
func Broadcast(r Runner, fn func(w *Worker)) {
	var p *Pool
	var caller *Worker // the worker of the calling goroutine, if any
	switch r := r.(type) {
	case *Worker:
		if r == nil {
			panicNilWorker("Broadcast")
		}
		p, caller = r.pool, r
	case *Pool:
		p = orDefault(r, "Broadcast")
	default:
		p = Default()
	}
	if fn == nil {
		panic("forkjoin: Broadcast called with a nil function")
	}
	if caller == nil {
		caller = callingWorker()
	}
	inside := caller != nil && caller.pool == p
	b := &broadcast{fn: fn, pool: p}
	if inside {
		b.comp, b.group = caller.comp, caller.group
	} else {
		b.group = newGlobalGroup()
	}
	// Counted in flight like a submission, so that no worker exits while
	// its share waits (a worker exits only once the pool is closed and
	// inflight is zero); a closed pool refuses it as it refuses Invoke
	// (the same Dekker pair as submitAt: add, then load closed). From
	// inside too: a task need not hold inflight up (a fork never joined
	// outlives its root, and hooks run outside any task), so once the
	// pool is closed other workers may have exited, and a share posted
	// to one would never run (TestBroadcastOnClosedPoolFromInside).
	p.accepted.Add(1)
	if p.closed.Load() {
		p.rootDone()
		panic(ErrClosed)
	}
	n := p.parallelism
	own := -1
	if inside && caller.index < n {
		own = caller.index
	}
	shares := make([]share, n)
	b.pending.Store(int64(n)) // before any share is posted: none can finish first
	for i := range shares {
		shares[i].b = b
		if i != own {
			p.workers[i].post(&shares[i])
		}
	}
	if own >= 0 {
		caller.runOwnShare(&shares[own])
	}
	switch {
	case inside:
		b.settle(caller)
	case caller != nil:
		caller.waitForeign(&b.done) // a task of another pool: keep that pool going
	default:
		b.done.await(nil)
	}
	if pe := b.panic.Load(); pe != nil {
		panic(pe)
	}
}

// broadcast is one call of Broadcast. fn, pool, comp and group are set
// before any share is posted (the inbox's CAS publishes them) and are
// read-only after.
type broadcast struct {
	fn      func(*Worker)
	pool    *Pool
	comp    *computation // the caller's cancellation scope, nil from outside
	group   uint64       // the caller's computation, or a fresh one from outside
	pending atomic.Int64 // shares not yet finished; the last one sets done
	done    latch
	panic   atomic.Pointer[PanicError] // the first panic of fn, re-raised by Broadcast
}

// share is one worker's call of a broadcast, posted on its inbox.
type share struct {
	b *broadcast
	// next is the share posted before it. Plain: the poster writes it
	// before the CAS that publishes the share, and nobody writes it after;
	// the worker reads it after the load that found the share.
	next *share
}

// post puts s on w's inbox and wakes w. The token Unpark leaves is kept
// if w is not asleep, so whatever w is doing, its next Sleep returns at
// once and it looks at its inbox again: no wake-up can be lost. Any
// goroutine may post.
func (w *Worker) post(s *share) {
	for {
		old := w.inbox.Load()
		s.next = old // s is not published yet: nobody else reads it
		if w.inbox.CompareAndSwap(old, s) {
			break
		}
	}
	w.sleepers.Unpark(w.index)
}

// runShares runs the shares posted on w's inbox, and reports whether
// there were any. Only w's goroutine takes from the inbox, one share at a
// time (a CAS of the head, free of ABA: shares are never reused, and only
// this goroutine removes them), so a Goexit in fn loses no other share.
func (w *Worker) runShares() bool {
	w.flushRetired() // before user code that may wait (scope.go)
	ran := false
	for {
		s := w.inbox.Load()
		if s == nil {
			return ran
		}
		if !w.inbox.CompareAndSwap(s, s.next) {
			continue // another share was posted meanwhile
		}
		ran = true
		w.runShare(s)
	}
}

// runShare runs one share on w, in its broadcast's computation, capturing
// a panic, and counts it finished.
func (w *Worker) runShare(s *share) {
	b := s.b
	w.own.broadcasts++
	savedComp, savedGroup := w.comp, w.group
	w.comp, w.group = b.comp, b.group
	finished := false
	defer func() {
		if !finished {
			b.panic.CompareAndSwap(nil, CapturePanic(recover()))
		}
		w.comp, w.group = savedComp, savedGroup
		b.finishOne()
	}()
	b.fn(w)
	finished = true
}

// runOwnShare runs the calling worker's share inline. If fn calls
// runtime.Goexit, the caller still waits for the other shares before its
// goroutine unwinds further, so that no share runs on after the frames
// of the caller are gone.
func (w *Worker) runOwnShare(s *share) {
	goexit := true
	defer func() {
		if goexit {
			s.b.settle(w)
		}
	}()
	w.runShare(s)
	goexit = false
}

// settle waits for b's shares on w, the worker of the calling task,
// helping the caller's computation meanwhile (untilSettled sets it). A
// task it runs may call runtime.Goexit, which unwinds the wait;
// untilSettled then waits on, so that Broadcast never unwinds while a
// share still runs (TestBroadcastGoexitInWaitWaitsForShares failed on
// 89bb899). runOwnShare calls it too, when the caller's own share called
// runtime.Goexit.
func (b *broadcast) settle(w *Worker) {
	w.untilSettled(b.comp, b.group, func() { w.waitUntil(&b.done, nil) })
}

// finishOne counts one share finished; the last one releases the pool's
// count of work in flight and wakes the caller.
func (b *broadcast) finishOne() {
	if b.pending.Add(-1) == 0 {
		b.pool.rootDone()
		b.done.set()
	}
}
