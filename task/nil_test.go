package task_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// whichPool is a task that reports the pool it ran on.
type whichPool struct{ got **forkjoin.Pool }

func (x whichPool) Compute(w *forkjoin.Worker) int { *x.got = w.Pool(); return 7 }

// whichPoolAction is whichPool as a RecursiveAction.
type whichPoolAction struct{ got **forkjoin.Pool }

func (x whichPoolAction) Compute(w *forkjoin.Worker) { *x.got = w.Pool() }

// TestNilPoolMeansDefault: Invoke, InvokeAction, Submit, SubmitPriority
// and SubmitAction run on forkjoin.Default() when given a nil pool.
func TestNilPoolMeansDefault(t *testing.T) {
	var nilPool *forkjoin.Pool
	var got *forkjoin.Pool
	ctx := t.Context()
	calls := map[string]func(){
		"Invoke":       func() { require.Equal(t, 7, task.Invoke[int](nilPool, whichPool{&got})) },
		"InvokeAction": func() { task.InvokeAction(nilPool, whichPoolAction{&got}) },
		"Submit": func() {
			v, err := task.Submit[int](nilPool, whichPool{&got}).Get(ctx)
			require.NoError(t, err)
			require.Equal(t, 7, v)
		},
		"SubmitPriority": func() {
			v, err := task.SubmitPriority[int](nilPool, forkjoin.Urgent, whichPool{&got}).Get(ctx)
			require.NoError(t, err)
			require.Equal(t, 7, v)
		},
		"SubmitAction": func() {
			_, err := task.SubmitAction(nilPool, whichPoolAction{&got}).Get(ctx)
			require.NoError(t, err)
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			got = nil
			within(t, call)
			require.Same(t, forkjoin.Default(), got)
		})
	}
}

// TestNilWorkerOneMessage: every function of the package that takes a
// *Worker panics with the same message for a nil one, "task: <name>
// called with a nil *Worker", the wording of package forkjoin. Fork and
// ForkAction, one-line wrappers that must stay within the inlining budget
// (so that their Future stays on the caller's stack), leave the check to
// forkjoin.ForkTask and give its message; InvokeBoth and Spawn, which must
// inline so that they cost no call more than forkjoin.JoinTasks and
// forkjoin.SpawnTask, give those functions' messages. Before, InvokeAll's message
// carried a hint the others lacked.
func TestNilWorkerOneMessage(t *testing.T) {
	var w *forkjoin.Worker
	var n atomic.Int64
	calls := map[string]func(){
		"InvokeAll":         func() { task.InvokeAll[int](w, Fib{1}) },
		"InvokeSlice":       func() { task.InvokeSlice(w, []Fib{{1}}) },
		"InvokeAllActions":  func() { task.InvokeAllActions(w, countAction{&n}) },
		"InvokeBothActions": func() { task.InvokeBothActions(w, countAction{&n}, countAction{&n}) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			require.PanicsWithValue(t, "task: "+name+" called with a nil *Worker", call)
		})
	}
	const forkTask = "forkjoin: ForkTask called with a nil *Worker"
	require.PanicsWithValue(t, forkTask, func() { task.Fork[int](w, Fib{1}) })
	require.PanicsWithValue(t, forkTask, func() { task.ForkAction(w, countAction{&n}) })
	require.PanicsWithValue(t, "forkjoin: JoinTasks called with a nil *Worker", func() { task.InvokeBoth(w, Fib{1}, Fib{2}) })
	require.PanicsWithValue(t, "forkjoin: SpawnTask called with a nil *Worker", func() { task.Spawn(someScope(t), w, countAction{&n}) })
	require.Zero(t, n.Load(), "no action ran")
}

// someScope returns a *Scope whose RunScope has returned: the functions
// that take a Scope check their other arguments before its state, so any
// non-nil *Scope will do for a test of their messages.
func someScope(t *testing.T) *forkjoin.Scope {
	var s *forkjoin.Scope
	within(t, func() {
		forkjoin.Invoke(nil, func(w *forkjoin.Worker) int {
			forkjoin.RunScope(w, func(scope *forkjoin.Scope, _ *forkjoin.Worker) { s = scope })
			return 0
		})
	})
	return s
}

// TestNilTaskMessages: a typed task that is a nil interface value is
// refused by Submit, SubmitPriority and SubmitAction with a message naming
// the function of package task that was called, before anything is queued;
// Spawn, which inlines to forkjoin.SpawnTask, gives SpawnTask's messages
// for a nil *Scope or a nil action, before anything is spawned.
func TestNilTaskMessages(t *testing.T) {
	var nilTask task.RecursiveTask[int]
	var nilAction task.RecursiveAction
	var n atomic.Int64
	outside := map[string]func(){
		"task: Submit called with a nil task":         func() { task.Submit[int](nil, nilTask) },
		"task: SubmitPriority called with a nil task": func() { task.SubmitPriority[int](nil, forkjoin.Urgent, nilTask) },
		"task: SubmitAction called with a nil action": func() { task.SubmitAction(nil, nilAction) },
	}
	for want, call := range outside {
		t.Run(want, func(t *testing.T) { require.PanicsWithValue(t, want, call) })
	}
	scope := someScope(t)
	inside := map[string]func(w *forkjoin.Worker){
		"forkjoin: SpawnTask called with a nil *Scope": func(w *forkjoin.Worker) { task.Spawn(nil, w, countAction{&n}) },
		"forkjoin: SpawnTask called with a nil task":   func(w *forkjoin.Worker) { task.Spawn(scope, w, nilAction) },
	}
	for want, call := range inside {
		t.Run(want, func(t *testing.T) {
			var got any
			within(t, func() {
				forkjoin.Invoke(nil, func(w *forkjoin.Worker) int {
					got = recoverValue(func() { call(w) })
					return 0
				})
			})
			require.Equal(t, want, got)
		})
	}
	require.Zero(t, n.Load(), "no action ran")
}
