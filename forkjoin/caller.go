package forkjoin

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Which worker is calling. Go has no goroutine-local storage, yet Invoke and
// Close must know whether they are called from a worker (blocking there could
// deadlock a pool), and of which pool; so must the helpers built on them
// (magpie.For called from a task with the outer *Pool). Workers register
// their goroutine's key (goroutineKey: the address of the runtime's g on
// amd64 and arm64, a few nanoseconds; the id parsed from runtime.Stack
// elsewhere, a stack trace) for exactly their lifetime, and a caller looks
// its own key up. The check is exact: a key in the registry belongs to a
// live worker goroutine, and the caller's own key is found if and only if
// the caller is that worker.
//
// Code that has the *Worker passes it instead (a Runner, ForW's body), and
// callingWorker first rules out the common case for free: when no worker of
// any pool is running a task, the caller is not one.

var (
	workerByGoroutine sync.Map // goroutineKey() -> *Worker

	// runningWorkers counts the workers of every pool that are out of
	// their scheduling loop's idle phase: a worker counts itself before it
	// runs a task and until it is idle again, so a worker that calls
	// callingWorker from a task always sees at least its own count.
	runningWorkers atomic.Int64
)

// registerGoroutine and unregisterGoroutine bracket a worker goroutine's
// scheduling loop, on every way out of it (worker.go's loop).
func registerGoroutine(w *Worker) { workerByGoroutine.Store(goroutineKey(), w) }
func unregisterGoroutine()        { workerByGoroutine.Delete(goroutineKey()) }

// callingWorker returns the worker, of any pool, running on the calling
// goroutine, or nil if the caller is not a worker.
func callingWorker() *Worker {
	if runningWorkers.Load() == 0 {
		return nil // no worker is running a task, so none is calling us
	}
	if w, ok := workerByGoroutine.Load(goroutineKey()); ok {
		return w.(*Worker)
	}
	return nil
}

// callerWorker returns the worker of p running on the calling goroutine, or
// nil if the caller is not one of p's workers.
func callerWorker(p *Pool) *Worker {
	if w := callingWorker(); w != nil && w.pool == p {
		return w
	}
	return nil
}

// awaitedByGoroutine maps the key of a goroutine that some worker waits
// for without running it, to the pools of those workers (waitersOf), for
// as long as the goroutine runs what is awaited: a pool's panic handler
// (reportPanic), and the function of Blocking run off the worker
// (blockForeign). Close and Shutdown of one of those pools called there
// cannot wait for its workers to exit (cannotWaitFor).
var awaitedByGoroutine sync.Map // goroutineKey() -> []*Pool

// waitersOf returns the pools a goroutine that the caller is about to wait
// for must not wait for: p (for a panic report, the handler's pool, whose
// worker usually reports; for Blocking, the waiting worker's); the pool of
// the calling worker, if any (a worker of another pool that completed
// AllOf's last Future reports the panic AllOf drops, and waits); and those
// of the caller itself, if it is awaited (a report made from a handler:
// the reporter waits for it, and its waiters for the reporter).
func waitersOf(p *Pool) []*Pool {
	pools := []*Pool{p}
	if w := callingWorker(); w != nil && w.pool != p {
		pools = append(pools, w.pool)
	}
	if h, ok := awaitedByGoroutine.Load(goroutineKey()); ok {
		pools = append(pools, h.([]*Pool)...)
	}
	return pools
}

// runHandler runs a user's handler (the panic handler, the slow-task
// handler) on a goroutine of its own, registered as awaited by pools, and
// returns once it has: a runtime.Goexit in it ends that goroutine alone,
// a panic in it is dropped, and Close or Shutdown of those pools called
// from it returns at once (see awaitedByGoroutine).
func runHandler(pools []*Pool, handler func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }()
		defer awaited(pools)()
		handler()
	}()
	<-done
}

// awaited registers the calling goroutine as awaited by pools' workers
// (see awaitedByGoroutine) until the returned function is called, on the
// same goroutine.
func awaited(pools []*Pool) (done func()) {
	k := goroutineKey()
	awaitedByGoroutine.Store(k, pools)
	return func() { awaitedByGoroutine.Delete(k) }
}

// cannotWaitFor reports whether the caller must not wait for p's workers
// to exit: it is one of them, or a goroutine one of them may be waiting
// for (awaitedByGoroutine). Close and Shutdown return at once then.
func cannotWaitFor(p *Pool) bool {
	if callerWorker(p) != nil {
		return true
	}
	h, ok := awaitedByGoroutine.Load(goroutineKey())
	return ok && slices.Contains(h.([]*Pool), p)
}

// stackGoid returns the calling goroutine's id from the first line of its
// stack trace, "goroutine 123 [running]:". runtime.Stack walks the whole
// stack even into a small buffer, so it costs more the deeper the caller.
func stackGoid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) {
		return 0
	}
	var id uint64
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// OnWorker reports whether the calling goroutine is a worker of some pool
// (running a task, or helping while it waits). Code outside this package
// that would block its goroutine on work it hands to a pool tests it
// first: a worker blocked that way holds up a core of its pool, and every
// worker of a pool blocked that way deadlocks it (package magpie's
// short-loop probe runs inline instead). It costs one atomic load when no
// worker of any pool is running a task, a registry look-up otherwise.
func OnWorker() bool { return callingWorker() != nil }
