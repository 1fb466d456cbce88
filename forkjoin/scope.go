package forkjoin

import "sync/atomic"

// Scope is a set of tasks spawned dynamically, any number of times and from
// any of them, that completes when all of them have. It is the shape for
// irregular work whose task count is not known in advance (tree and graph
// traversals, work lists), where pairwise Join does not fit.
type Scope struct {
	node                               // done when pending reaches zero
	pending atomic.Int64               // spawned tasks not yet finished, plus one for the body
	panic   atomic.Pointer[PanicError] // the first panic, re-raised by RunScope
	waiter  atomic.Pointer[Worker]     // the worker blocked in RunScope, to wake at completion
}

// RunScope runs body on w with a new Scope and returns once body and every
// task spawned in the scope, directly or from other spawned tasks, has
// finished. While it waits, w helps run them (and any other work of the
// pool). If any of them panicked, RunScope re-panics with the first
// *PanicError after all have finished.
func RunScope(w *Worker, body func(s *Scope, w *Worker)) {
	if w == nil || body == nil {
		panic("forkjoin: RunScope called with a nil *Worker or body")
	}
	s := &Scope{}
	s.job = s
	s.pending.Store(1) // the body: the count cannot reach zero while it runs
	func() {
		finished := false
		defer func() {
			if !finished {
				s.recordPanic(capturePanic(recover()))
			}
			s.finishOne()
		}()
		body(s, w)
		finished = true
	}()
	if !s.isDone() {
		s.waiter.Store(w)
		w.helpUntilDone(&s.node)
	}
	if pe := s.panic.Load(); pe != nil {
		panic(pe)
	}
}

// Spawn forks fn into the scope from a task running on w (the scope body
// or a task spawned in the scope). It returns at once; fn runs on some worker
// of w's pool before RunScope returns. Each spawn allocates one small node.
func (s *Scope) Spawn(w *Worker, fn func(w *Worker)) {
	if w == nil || fn == nil {
		panic("forkjoin: Scope.Spawn called with a nil *Worker or function")
	}
	w.checkCanceled()
	if s.pending.Add(1) == 1 {
		panic("forkjoin: Scope.Spawn called after its RunScope returned")
	}
	t := &scopeTask{scope: s, fn: fn}
	t.job = t
	w.push(&t.node)
}

func (s *Scope) recordPanic(pe *PanicError) { s.panic.CompareAndSwap(nil, pe) }

// finishOne retires one task of the scope; the last one completes it.
func (s *Scope) finishOne() {
	if s.pending.Add(-1) != 0 {
		return
	}
	w := s.waiter.Load()
	if s.state.Swap(done) == waiting && w != nil {
		w.sleepers.Unpark(w.index)
	}
}

// The scope's node is never executed: it only carries the completion state
// that helpUntilDone waits for.
func (s *Scope) execute(*Worker) {}

func (s *Scope) addWaiter(*Worker) { s.state.CompareAndSwap(pending, waiting) }

// scopeTask is one spawned task.
type scopeTask struct {
	node
	scope *Scope
	fn    func(*Worker)
}

func (t *scopeTask) execute(w *Worker) {
	s := t.scope
	finished := false
	defer func() {
		if !finished {
			s.recordPanic(capturePanic(recover()))
		}
		t.state.Store(done)
		s.finishOne()
	}()
	w.checkCanceled()
	t.fn(w)
	finished = true
}

// A spawned task is never joined individually.
func (t *scopeTask) addWaiter(*Worker) {}
