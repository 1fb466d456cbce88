package task

import "github.com/magpie-go/magpie/forkjoin"

// Submissions: a typed task started from outside the pool without waiting
// for it, the counterpart of Java's pool.submit(task). The task is queued
// on the pool's submission queue (forkjoin.SubmitPriority's, same order and
// priorities) and runs on a worker; its outcome, result or
// *forkjoin.PanicError, stays in the returned Future for any number of
// readers (Get from any goroutine, Join from a task of the pool).
// Execute is the fire-and-forget form, Java's pool.execute(task): no
// Future, a panic goes to the pool's panic handler, and the action rides
// in a node the pool recycles (forkjoin.ExecuteTaskPriority).
//
// Invariant: these are forkjoin.SubmitTaskPriority and
// forkjoin.ExecuteTaskPriority with task's messages; a nil task is refused before anything is queued, so the pool never holds
// a task whose Compute cannot be called.

// Submit queues t on p at forkjoin.Normal priority and returns its Future
// at once: call Get(ctx) on it from any goroutine, or Join(w) from a task
// of p. A panic in t is captured as a *forkjoin.PanicError and returned by
// Get (re-panicked by Join); on a closed pool the Future holds
// forkjoin.ErrClosed. A nil p means forkjoin.Default()
// (TestNilPoolMeansDefault). Unlike Invoke, Submit called from one of p's
// own tasks still queues t rather than running it inline: to fork from
// inside a task, use Fork.
func Submit[T any, R RecursiveTask[T]](p *forkjoin.Pool, t R) *forkjoin.Future[T] {
	return submit[T](p, forkjoin.Normal, t, "Submit")
}

// SubmitPriority is Submit at priority prio (see forkjoin.ExecutePriority
// for what a priority buys).
func SubmitPriority[T any, R RecursiveTask[T]](p *forkjoin.Pool, prio forkjoin.Priority, t R) *forkjoin.Future[T] {
	return submit[T](p, prio, t, "SubmitPriority")
}

// submit is Submit and SubmitPriority; fn names the caller in the message
// for a nil task.
func submit[T any, R RecursiveTask[T]](p *forkjoin.Pool, prio forkjoin.Priority, t R, fn string) *forkjoin.Future[T] {
	if any(t) == nil {
		panic("task: " + fn + " called with a nil task")
	}
	return forkjoin.SubmitTaskPriority[T](p, prio, t)
}

// SubmitAction is Submit for a RecursiveAction: the Future's Get returns
// struct{}{} and a nil error once a has run, or its *forkjoin.PanicError.
func SubmitAction[A RecursiveAction](p *forkjoin.Pool, a A) *forkjoin.Future[struct{}] {
	if any(a) == nil {
		panic("task: SubmitAction called with a nil action")
	}
	return forkjoin.SubmitTaskPriority[struct{}](p, forkjoin.Normal, action[A]{a})
}

// Execute queues a on p at forkjoin.Normal priority and returns without
// waiting, the typed form of p.Execute (Java's pool.execute(task)): nobody
// joins a, so a panic in it goes to p's panic handler
// (forkjoin.WithPanicHandler). It returns forkjoin.ErrClosed once Close has
// been called, and forkjoin.ErrQueueFull when p's queue is bounded
// (forkjoin.WithMaxQueued) and full; a is then never run. a is stored
// unboxed in a node the pool recycles, so a stream of Executes allocates
// nothing once warm, whether A is a pointer or a small struct
// (TestExecuteSteadyStateAllocatesNothing). A nil p means
// forkjoin.Default(). It is queued in the order and with the priorities
// of every submission (forkjoin.Pool.Execute).
func Execute[A RecursiveAction](p *forkjoin.Pool, a A) error {
	return execute(p, forkjoin.Normal, a, "Execute")
}

// ExecutePriority is Execute at priority prio (see
// forkjoin.ExecutePriority).
func ExecutePriority[A RecursiveAction](p *forkjoin.Pool, prio forkjoin.Priority, a A) error {
	return execute(p, prio, a, "ExecutePriority")
}

// execute is Execute and ExecutePriority; fn names the caller in the
// message for a nil action.
func execute[A RecursiveAction](p *forkjoin.Pool, prio forkjoin.Priority, a A, fn string) error {
	if any(a) == nil {
		panic("task: " + fn + " called with a nil action")
	}
	return forkjoin.ExecuteTaskPriority(p, prio, a)
}
