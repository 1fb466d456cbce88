package task

import "github.com/magpie-go/magpie/forkjoin"

// InvokeAll runs every task, potentially in parallel, and returns their
// results in argument order, like Java's ForkJoinTask.invokeAll. It forks
// all tasks but one, computes that one on w, and joins the rest, helping
// with other work while a stolen one runs. The tasks are split by recursive
// halving, so thieves take half the remaining tasks at a time and no node
// beyond the result slice is allocated (the nodes are recycled per worker).
//
// If a task panics, InvokeAll waits until every other task has finished or
// been removed unrun from the deque, then re-panics with a
// *forkjoin.PanicError holding the original value and stack (the first in
// argument order among those that panicked, as far as the halving can
// tell). The panic drops the tasks still waiting where the panicking
// task's worker forked them: each join on the way up removes its
// un-stolen half unrun, as Java's invokeAll cancels the rest. A half that
// another worker has stolen runs on to its end, its tasks that had not
// started when the sibling panicked included, and InvokeAll waits for it
// (TestInvokeAllStolenHalfRunsOn; rayon's join runs both sides always).
// w must be the worker running the calling task.
//
// The variadic parameter is an interface, so the caller boxes each task
// (an allocation for most struct types) and mixed task types are allowed.
// For many tasks of one type use InvokeSlice, for two use InvokeBoth: both
// keep the tasks unboxed.
func InvokeAll[T any](w *forkjoin.Worker, ts ...RecursiveTask[T]) []T {
	checkWorker(w, "InvokeAll")
	for _, t := range ts {
		if t == nil {
			panic("task: InvokeAll called with a nil task")
		}
	}
	return invokeSlice(w, ts)
}

// InvokeSlice is InvokeAll for a slice of tasks of one type R, which it
// keeps unboxed: it allocates the result slice and nothing else. Like
// InvokeAll it returns the results in the order of ts and re-panics a task
// panic only after every task has finished or been abandoned unrun.
func InvokeSlice[T any, R RecursiveTask[T]](w *forkjoin.Worker, ts []R) []T {
	checkWorker(w, "InvokeSlice")
	for _, t := range ts {
		if any(t) == nil { // R an interface type: a nil one cannot be computed
			panic("task: InvokeSlice called with a nil task")
		}
	}
	return invokeSlice(w, ts)
}

// invokeSlice is InvokeSlice once w and the tasks are known not to be nil.
func invokeSlice[T any, R RecursiveTask[T]](w *forkjoin.Worker, ts []R) []T {
	out := make([]T, len(ts))
	switch len(ts) {
	case 0:
	case 1:
		// No join is involved; wrap a panic ourselves so that callers see
		// a *forkjoin.PanicError whatever the number of tasks.
		out[0] = computeWrapped[T](w, ts[0])
	default:
		allTasks[T, R]{ts, out}.Compute(w)
	}
	return out
}

// InvokeAllActions runs every action, potentially in parallel, and returns
// when all have completed; panics as in InvokeAll. Like InvokeAll it boxes
// each action into the interface; InvokeBothActions does not.
func InvokeAllActions(w *forkjoin.Worker, as ...RecursiveAction) {
	checkWorker(w, "InvokeAllActions")
	for _, a := range as {
		if a == nil {
			panic("task: InvokeAllActions called with a nil action")
		}
	}
	switch len(as) {
	case 0:
	case 1:
		computeWrapped[struct{}](w, action[RecursiveAction]{as[0]})
	default:
		allActions[RecursiveAction]{as}.Compute(w)
	}
}

// InvokeBoth runs a and b, potentially in parallel, and returns both
// results: the two-task invokeAll of Java, and the cheapest way to fork.
// It forks b unboxed into a node recycled per worker, computes a on w, then
// joins b (inline if nobody stole it), so an un-stolen call allocates
// nothing. A panic in either re-panics as a *forkjoin.PanicError after the
// other has finished or been removed unrun (a's if both panicked).
//
// InvokeBoth is forkjoin.JoinTasks and nothing more, so that it inlines
// into its caller and costs no call of its own: a check of w here would
// put its shaped body over the inlining budget (83 against 80, Go 1.26;
// scripts/check-escape checks it). A nil w therefore panics with
// JoinTasks's message, as Fork's does with ForkTask's
// (TestNilWorkerOneMessage).
func InvokeBoth[A, B any, RA RecursiveTask[A], RB RecursiveTask[B]](w *forkjoin.Worker, a RA, b RB) (A, B) {
	return forkjoin.JoinTasks[A, B](w, a, b)
}

// InvokeBothActions is InvokeBoth for two actions.
func InvokeBothActions[A, B RecursiveAction](w *forkjoin.Worker, a A, b B) {
	checkWorker(w, "InvokeBothActions")
	if any(a) == nil || any(b) == nil { // wrapped in action, JoinTasks would not see it
		panic("task: InvokeBothActions called with a nil action")
	}
	forkjoin.JoinTasks[struct{}, struct{}](w, action[A]{a}, action[B]{b})
}

// allTasks computes ts[i] into out[i] by recursive halving: it forks the
// upper half and recurses into the lower one, so the first task runs
// inline and a thief always takes the biggest remaining block. It is a
// struct of two slices stored unboxed in the join node: no allocation.
type allTasks[T any, R RecursiveTask[T]] struct {
	ts  []R
	out []T // same length as ts; each index written by exactly one task
}

func (x allTasks[T, R]) Compute(w *forkjoin.Worker) struct{} {
	switch len(x.ts) {
	case 1:
		x.out[0] = x.ts[0].Compute(w)
	case 2:
		x.out[0], x.out[1] = forkjoin.JoinTasks[T, T](w, x.ts[0], x.ts[1])
	default:
		m := len(x.ts) / 2
		forkjoin.JoinTasks[struct{}, struct{}](w,
			allTasks[T, R]{x.ts[:m], x.out[:m]}, allTasks[T, R]{x.ts[m:], x.out[m:]})
	}
	return struct{}{}
}

// allActions is allTasks for actions.
type allActions[A RecursiveAction] struct{ as []A }

func (x allActions[A]) Compute(w *forkjoin.Worker) struct{} {
	if len(x.as) == 1 {
		x.as[0].Compute(w)
		return struct{}{}
	}
	m := len(x.as) / 2
	forkjoin.JoinTasks[struct{}, struct{}](w, allActions[A]{x.as[:m]}, allActions[A]{x.as[m:]})
	return struct{}{}
}

// computeWrapped runs t on w and re-panics a panic as a
// *forkjoin.PanicError, as a join would. runtime.Goexit passes through.
func computeWrapped[T any, R RecursiveTask[T]](w *forkjoin.Worker, t R) (r T) {
	finished := false
	defer func() {
		if finished {
			return
		}
		// nil is runtime.Goexit (panic(nil) recovers as
		// *runtime.PanicNilError since Go 1.21): let it continue unwinding.
		// A *PanicError of a nested join passes unchanged.
		if v := recover(); v != nil {
			panic(forkjoin.CapturePanic(v))
		}
	}()
	r = t.Compute(w)
	finished = true
	return r
}

// checkWorker panics with the package's one message for a nil *Worker
// (the same wording as package forkjoin's): fn names the function.
// TestNilWorkerOneMessage walks every function that takes a *Worker.
func checkWorker(w *forkjoin.Worker, fn string) {
	if w == nil {
		panic("task: " + fn + " called with a nil *Worker")
	}
}
