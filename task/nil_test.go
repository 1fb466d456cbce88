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

// TestNilPoolMeansDefault: Invoke and InvokeAction run on
// forkjoin.Default() when given a nil pool.
func TestNilPoolMeansDefault(t *testing.T) {
	var nilPool *forkjoin.Pool
	var got *forkjoin.Pool
	within(t, func() { require.Equal(t, 7, task.Invoke[int](nilPool, whichPool{&got})) })
	require.Same(t, forkjoin.Default(), got)
	got = nil
	within(t, func() { task.InvokeAction(nilPool, whichPoolAction{&got}) })
	require.Same(t, forkjoin.Default(), got)
}

// TestNilWorkerOneMessage: every function of the package that takes a
// *Worker panics with the same message for a nil one, "task: <name>
// called with a nil *Worker", the wording of package forkjoin. Fork and
// ForkAction, one-line wrappers that must stay within the inlining budget
// (so that their Future stays on the caller's stack), leave the check to
// forkjoin.ForkTask and give its message. Before, InvokeAll's message
// carried a hint the others lacked.
func TestNilWorkerOneMessage(t *testing.T) {
	var w *forkjoin.Worker
	var n atomic.Int64
	calls := map[string]func(){
		"InvokeAll":         func() { task.InvokeAll[int](w, Fib{1}) },
		"InvokeSlice":       func() { task.InvokeSlice(w, []Fib{{1}}) },
		"InvokeAllActions":  func() { task.InvokeAllActions(w, countAction{&n}) },
		"InvokeBoth":        func() { task.InvokeBoth(w, Fib{1}, Fib{2}) },
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
	require.Zero(t, n.Load(), "no action ran")
}
