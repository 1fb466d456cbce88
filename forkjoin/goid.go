package forkjoin

import (
	"runtime"
	"sync"
)

// Go has no goroutine-local storage, yet Invoke and Close must know whether
// they are called from one of the pool's own workers (blocking there would
// deadlock the pool). Workers register their goroutine id; the id of the
// caller is parsed from runtime.Stack, which costs about a microsecond, so
// callerWorker first rules out the common case of an idle pool for free.

var workerByGoroutine sync.Map // goroutine id -> *Worker

func registerGoroutine(w *Worker) { workerByGoroutine.Store(goid(), w) }
func unregisterGoroutine()        { workerByGoroutine.Delete(goid()) }

// callerWorker returns the worker of p running on the calling goroutine, or
// nil if the caller is not one of p's workers.
func callerWorker(p *Pool) *Worker {
	if live, idle := splitCounts(p.counts.Load()); idle == live {
		return nil // every worker is idle at this instant, so none is calling us
	}
	if w, ok := workerByGoroutine.Load(goid()); ok && w.(*Worker).pool == p {
		return w.(*Worker)
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
