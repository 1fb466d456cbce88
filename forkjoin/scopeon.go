package forkjoin

// ScopeOn is RunScope opened from any Runner: on a *Worker (the calling
// task's) it is RunScope; on a *Pool it runs the scope as Invoke runs a
// function, from outside the pool (the caller waits), inline from one of
// the pool's own tasks, or while helping its own pool from a task of
// another pool; a nil r, or a nil *Pool, means Default(). It returns once
// body and every task spawned in the scope, directly or from other spawned
// tasks, has finished. A panic in any of them is re-raised, after all have
// finished, as the first *PanicError, as Invoke does; on a closed pool
// ScopeOn panics with ErrClosed, as Invoke does. A nil *Worker in r panics
// with "forkjoin: ScopeOn called with a nil *Worker".
//
// TestScopeOnFromEveryRunner, TestScopeOnPanicAfterAllFinish,
// TestScopeOnClosedPool, and the ScopeOn rows of TestNilPoolMeansDefault
// and TestNilWorkerOneMessage prove each claim.
func ScopeOn(r Runner, body func(s *Scope, w *Worker)) {
	w, onWorker := r.(*Worker)
	if onWorker && w == nil {
		panicNilWorker("ScopeOn")
	}
	if body == nil {
		panic("forkjoin: ScopeOn called with a nil body")
	}
	if onWorker {
		RunScope(w, body)
		return
	}
	p, _ := r.(*Pool) // a nil Runner leaves p nil: Default()
	Invoke(orDefault(p, "ScopeOn"), func(w *Worker) struct{} {
		RunScope(w, body)
		return struct{}{}
	})
}
