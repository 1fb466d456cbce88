package task

import "github.com/magpie-go/magpie/forkjoin"

// RecursiveTask is a divide-and-conquer task that returns a result of type
// T, like Java's RecursiveTask<T>. Compute runs on the worker it is given
// and may fork subtasks on it. It is magpie's one named interface for a
// typed task with a result: package forkjoin's typed layer (forkjoin's
// typed.go), which this package is built on, takes any type with such a
// Compute method and names no interface of its own.
//
// Prefer small struct types with a value receiver: the functions of this
// package take the task's own type as a type parameter and store the value
// unboxed in the forked node, so forking one allocates nothing of its own.
type RecursiveTask[T any] interface {
	Compute(w *forkjoin.Worker) T
}

// RecursiveAction is a divide-and-conquer task that returns nothing, like
// Java's RecursiveAction: it works by side effect, for example on a
// disjoint range of a shared slice.
type RecursiveAction interface {
	Compute(w *forkjoin.Worker)
}

// Fork schedules t to run on w's pool, possibly on another worker, and
// returns its Future: compute something else, then call Join(w) on it, as
// with Java's fork/compute/join idiom. t is stored unboxed (R is the task's
// own type) in a node that w recycles, and the Future is a small handle
// that lives on the caller's stack unless it escapes (is stored or passed
// to another goroutine), so the usual fork, compute, join allocates
// nothing (see forkjoin.Future). InvokeBoth and InvokeSlice, which hand out
// no handle, are cheaper still. w must be the worker running the calling
// task.
func Fork[T any, R RecursiveTask[T]](w *forkjoin.Worker, t R) *forkjoin.Future[T] {
	return forkjoin.ForkTask[T](w, t)
}

// ForkAction is Fork for a RecursiveAction; the Future's Join returns
// struct{}{} once a has run and re-panics its panic. a is stored unboxed.
func ForkAction[A RecursiveAction](w *forkjoin.Worker, a A) *forkjoin.Future[struct{}] {
	return forkjoin.ForkTask[struct{}](w, action[A]{a})
}

// Invoke runs t on p and waits for its result, like Java's pool.invoke. A
// panic in t, or in any task it joins, is re-raised here as a
// *forkjoin.PanicError; on a closed pool Invoke panics with
// forkjoin.ErrClosed. A nil p means forkjoin.Default(). Called from inside
// one of p's tasks it runs t inline on the calling worker; inside a task,
// calling t.Compute(w) directly says the same thing more plainly.
func Invoke[T any, R RecursiveTask[T]](p *forkjoin.Pool, t R) T {
	if any(t) == nil { // t.Compute would dereference it here
		panic("task: Invoke called with a nil task")
	}
	return forkjoin.Run(p, t.Compute)
}

// InvokeAction is Invoke for a RecursiveAction.
func InvokeAction[A RecursiveAction](p *forkjoin.Pool, a A) {
	if any(a) == nil { // refused before the pool holds an action it cannot run
		panic("task: InvokeAction called with a nil action")
	}
	forkjoin.Run(p, action[A]{a}.Compute)
}

// action adapts a RecursiveAction to a RecursiveTask[struct{}], for the
// forkjoin functions that need a result. It is a struct over the action's
// own type, so the action stays unboxed.
type action[A RecursiveAction] struct{ a A }

func (x action[A]) Compute(w *forkjoin.Worker) struct{} {
	x.a.Compute(w)
	return struct{}{}
}
