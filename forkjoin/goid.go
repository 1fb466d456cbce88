package forkjoin

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Go has no goroutine-local storage, yet Invoke and Close must know whether
// they are called from a worker (blocking there could deadlock a pool), and
// of which pool. Workers register their goroutine id; the id of the caller
// is parsed from runtime.Stack, which costs about a microsecond, so
// callingWorker first rules out the common case for free: when no worker of
// any pool is running a task, the caller is not one.

var (
	workerByGoroutine sync.Map // goroutine id -> *Worker

	// runningWorkers counts the workers of every pool that are out of
	// their scheduling loop's idle phase: a worker counts itself before it
	// runs a task and until it is idle again, so a worker that calls
	// callingWorker from a task always sees at least its own count.
	runningWorkers atomic.Int64
)

func registerGoroutine(w *Worker) { workerByGoroutine.Store(goid(), w) }
func unregisterGoroutine()        { workerByGoroutine.Delete(goid()) }

// callingWorker returns the worker, of any pool, running on the calling
// goroutine, or nil if the caller is not a worker.
func callingWorker() *Worker {
	if runningWorkers.Load() == 0 {
		return nil // no worker is running a task, so none is calling us
	}
	if w, ok := workerByGoroutine.Load(goid()); ok {
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

// goid returns the calling goroutine's id from the first line of its stack
// trace, "goroutine 123 [running]:".
func goid() uint64 {
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
