package forkjoin

import (
	"slices"
	"sync"
	"sync/atomic"
)

// latch is the runtime's one completion mechanism: a one-shot flag that a
// task sets when it completes and that workers and goroutines wait on. Every
// node embeds one (cells of Join, JoinTasks, Fork and Submit, Execute's
// nodes, scopes), and every wait in the runtime is a wait for a latch:
// Worker.waitUntil for a worker (which helps while it waits), latch.await
// for a goroutine outside the pool.
//
// # Invariant
//
// state moves unset → sleepy → set, or unset → set, and never back while
// anyone other than the owner of a recycled cell can see the latch (reset).
// sleepy means that a waiter may be registered: whoever sets the latch then
// takes mu and wakes every registered waiter. Registration happens under mu
// and only while the latch is not set, and set clears the registrations in
// the same critical section that stores set, so every waiter registered
// before set is woken and none can register after it.
//
// A callback (onSet, for continuations: then.go) is a registration like a
// waiter's, under the same rule: it is appended under mu only while the
// latch is not set, and the set that takes the wait list runs it. So it
// runs exactly once: either its registration marked the latch sleepy,
// and set's slow path (which must take mu after it) finds it, or set's
// fast path won, onSet reports false and its caller runs it.
//
// A callback runs on the goroutine that sets the latch; it may set other
// latches, whose callbacks then queue on the same firing instead of
// running nested (setIn), so that a chain of any length completes in a
// loop on one frame, never in recursion.
//
// A callback may become moot before the latch is set (a ThenContext stage
// canceled first: running it would do nothing). onSet drops moot
// callbacks when the list is full, before it grows, so that a latch that
// stays unset for long holds a bounded multiple of its live callbacks, not
// one record per canceled chain (Java's CompletableFuture.cleanStack;
// TestCanceledStagesDoNotPileUpOnPendingSource).
//
// The fast path of set is one CAS (unset → set) and that of probe one load.
// The fields guarded by mu are touched only on the slow paths.
type latch struct {
	state atomic.Uint32
	mu    sync.Mutex
	wait  *waitList // guarded by mu; nil unless someone registered
}

// The states of a latch.
const (
	latchUnset  uint32 = iota
	latchSleepy        // unset, and a waiter may be registered: set must wake it
	latchSet
)

// waitList is who waits for a latch.
type waitList struct {
	ch      chan struct{} // closed at set; made by the first goroutine that waits outside the pool
	workers []*Worker     // workers parked in waitUntil, woken by a park token
	then    []callback    // callbacks registered by onSet, run by set
}

// callback is one registration of onSet: fire runs it; moot, if not nil,
// reports (once true, for good) that fire would do nothing, so that the
// registration may be dropped unrun.
type callback struct {
	fire func(*firing)
	moot *atomic.Bool
}

// firing is the callbacks still to run of the latches set by one set and
// by the callbacks it ran. Only the goroutine of that set touches it.
type firing struct{ pending []callback }

// drain runs q's callbacks, and those they queue, in order.
func (q *firing) drain() {
	for i := 0; i < len(q.pending); i++ {
		fn := q.pending[i].fire
		q.pending[i] = callback{} // let the GC have what it holds
		fn(q)
	}
}

// fireNow runs fn, and every callback it queues, on the calling goroutine.
func fireNow(fn func(*firing)) {
	q := &firing{}
	fn(q)
	q.drain()
}

// probe reports whether l is set. A true answer orders everything the setter
// wrote before set before whatever the caller does next.
func (l *latch) probe() bool { return l.state.Load() == latchSet }

// set sets l and wakes every registered waiter. It is called once, by the
// goroutine that completes the latch's task. The moment l is set, the
// owner of a recycled cell may reuse it; so on the slow path set takes the
// wait list in the same critical section that stores set, and touches
// nothing of l's afterwards but the mutex it releases (whose next user, if
// any, waits for that release).
func (l *latch) set() {
	if l.state.CompareAndSwap(latchUnset, latchSet) {
		return // nobody registered: nobody to wake (the fast path, inlined)
	}
	l.setIn(nil)
}

// setIn is set from inside a callback of q: l's own callbacks go on q
// rather than running nested. With q nil they run before setIn returns.
func (l *latch) setIn(q *firing) {
	if l.state.CompareAndSwap(latchUnset, latchSet) {
		return // nobody registered: nobody to wake
	}
	l.mu.Lock()
	wl := l.wait
	l.wait = nil
	l.state.Store(latchSet)
	l.mu.Unlock()
	wl.wake()
	if wl != nil && len(wl.then) > 0 {
		if q != nil {
			q.pending = append(q.pending, wl.then...)
		} else {
			(&firing{pending: wl.then}).drain()
		}
	}
}

// onSet registers fn to run once l is set, on the goroutine that sets it
// (see firing), and reports true; or, if l is set already, registers
// nothing and reports false: the caller runs fn itself. Once moot (if not
// nil) is true, fn would do nothing, and the registration may be dropped
// unrun (see pruneMoot). Only cells that are never recycled (submissions
// and promises) take callbacks: reset drops registrations.
func (l *latch) onSet(fn func(*firing), moot *atomic.Bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.state.Load()
	if s == latchSet {
		return false
	}
	if l.wait == nil {
		l.wait = &waitList{}
	}
	if then := l.wait.then; len(then) == cap(then) && len(then) >= pruneMin {
		l.wait.then = pruneMoot(then)
	}
	l.wait.then = append(l.wait.then, callback{fn, moot})
	// As in addWaiter: only set's fast path changes the state without mu.
	// If it won since the load, it took no list: unregister, and the
	// caller runs fn.
	if s == latchUnset && !l.state.CompareAndSwap(latchUnset, latchSleepy) {
		l.wait.then[len(l.wait.then)-1] = callback{}
		l.wait.then = l.wait.then[:len(l.wait.then)-1]
		return false
	}
	return true
}

// pruneMin is the length below which onSet does not look for moot
// callbacks: most latches take one or two.
const pruneMin = 16

// pruneMoot drops the moot callbacks of then, which is full, keeping the
// others in order, and returns the list to append to. If more than half
// remain, it returns a list with room for as many again, so that the next
// pruning comes only after that many registrations: pruning costs O(1)
// per registration, amortized, and the list holds at most twice the live
// callbacks plus those that became moot since the last pruning. Called
// with mu held; a moot flag only goes from false to true, so a callback
// dropped here would have done nothing.
func pruneMoot(then []callback) []callback {
	live := then[:0]
	for _, cb := range then {
		if cb.moot == nil || !cb.moot.Load() {
			live = append(live, cb)
		}
	}
	clear(then[len(live):]) // let the GC have the dropped ones
	if len(live) > cap(then)/2 {
		return slices.Grow(live, len(live))
	}
	return live
}

func (wl *waitList) wake() {
	if wl == nil {
		return
	}
	if wl.ch != nil {
		close(wl.ch)
	}
	for _, w := range wl.workers {
		w.sleepers.Unpark(w.index)
	}
}

// addWaiter registers a waiter and marks l sleepy, so that set will wake
// it: the worker w, or, with w nil, a goroutine outside the pool, for which
// it returns the channel that set closes. It reports false if l is set
// already (nothing to wait for). A waiter that stops waiting before l is
// set stays registered; that costs set a spurious wake-up, never a missed
// one. The CAS (a full fence) orders the registration before any load the
// caller makes next: a caller that re-checks its condition after addWaiter
// either sees the condition or is seen by whoever establishes it and then
// sets l (see Future.settle).
func (l *latch) addWaiter(w *Worker) (ch chan struct{}, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.state.Load()
	if s == latchSet {
		return nil, false
	}
	if l.wait == nil {
		l.wait = &waitList{}
	}
	if w != nil {
		if !slices.Contains(l.wait.workers, w) {
			l.wait.workers = append(l.wait.workers, w)
		}
	} else if l.wait.ch == nil {
		l.wait.ch = make(chan struct{})
	}
	// Only set's fast path changes the state without mu: if it did since
	// the load, the CAS fails and there is nothing to wait for.
	if s == latchUnset && !l.state.CompareAndSwap(latchUnset, latchSleepy) {
		return nil, false
	}
	return l.wait.ch, true
}

// await blocks the calling goroutine, which is not a worker (a worker uses
// waitUntil and helps meanwhile), until l is set or done is closed; it
// reports whether l was set.
func (l *latch) await(done <-chan struct{}) bool {
	for !l.probe() {
		ch, ok := l.addWaiter(nil)
		if !ok {
			break
		}
		select {
		case <-ch:
		case <-done:
			return l.probe()
		}
	}
	return true
}

// reset makes a set (or registered-on) latch unset again, for the owner of a
// recycled cell. The owner calls it only when no other goroutine can look
// at the cell any more (see cellList), so the plain store of wait races
// with nothing; the state is stored atomically because it is read
// atomically everywhere.
func (l *latch) reset() {
	if l.state.Load() != latchUnset {
		l.state.Store(latchUnset)
	}
	if l.wait != nil { // no goroutine can see l (see above)
		l.wait = nil
	}
}
