package forkjoin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestNilPoolMeansDefault: every function that takes a *Pool runs its task
// on Default() when given a nil one, from outside a pool, and inline on the
// calling worker when called from a task of Default() (nil is resolved
// before the inline test). Before, Invoke, InvokeContext, Submit,
// SubmitTask (now SubmitTaskPriority) and SubmitContext dereferenced the
// nil pool.
func TestNilPoolMeansDefault(t *testing.T) {
	var nilPool *forkjoin.Pool
	bg := context.Background()
	calls := map[string]func(fn func(*forkjoin.Worker) int) int{
		"Invoke": func(fn func(*forkjoin.Worker) int) int { return forkjoin.Invoke(nilPool, fn) },
		"InvokePriority": func(fn func(*forkjoin.Worker) int) int {
			return forkjoin.InvokePriority(nilPool, forkjoin.Urgent, fn)
		},
		"InvokeContext": func(fn func(*forkjoin.Worker) int) int {
			v, err := forkjoin.InvokeContext(bg, nilPool, fn)
			require.NoError(t, err)
			return v
		},
		"Submit": func(fn func(*forkjoin.Worker) int) int {
			v, err := forkjoin.Submit(nilPool, fn).Get(bg)
			require.NoError(t, err)
			return v
		},
		"SubmitPriority": func(fn func(*forkjoin.Worker) int) int {
			v, err := forkjoin.SubmitPriority(nilPool, forkjoin.Background, fn).Get(bg)
			require.NoError(t, err)
			return v
		},
		"SubmitTaskPriority/Normal": func(fn func(*forkjoin.Worker) int) int {
			v, err := forkjoin.SubmitTaskPriority[int](nilPool, forkjoin.Normal, funcComputer(fn)).Get(bg)
			require.NoError(t, err)
			return v
		},
		"SubmitTaskPriority": func(fn func(*forkjoin.Worker) int) int {
			v, err := forkjoin.SubmitTaskPriority[int](nilPool, forkjoin.Urgent, funcComputer(fn)).Get(bg)
			require.NoError(t, err)
			return v
		},
		"SubmitContext": func(fn func(*forkjoin.Worker) int) int {
			v, err := forkjoin.SubmitContext(bg, nilPool, fn).Get(bg)
			require.NoError(t, err)
			return v
		},
		"Run(nil *Pool)": func(fn func(*forkjoin.Worker) int) int { return forkjoin.Run(nilPool, fn) },
		"Run(nil)":       func(fn func(*forkjoin.Worker) int) int { return forkjoin.Run(nil, fn) },
		"ScopeOn(nil *Pool)": func(fn func(*forkjoin.Worker) int) (v int) {
			forkjoin.ScopeOn(nilPool, func(_ *forkjoin.Scope, w *forkjoin.Worker) { v = fn(w) })
			return v
		},
		"ScopeOn(nil)": func(fn func(*forkjoin.Worker) int) (v int) {
			forkjoin.ScopeOn(nil, func(_ *forkjoin.Scope, w *forkjoin.Worker) { v = fn(w) })
			return v
		},
	}
	def := forkjoin.Default()
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			var got *forkjoin.Pool
			within(t, name, func() {
				require.Equal(t, 7, call(func(w *forkjoin.Worker) int { got = w.Pool(); return 7 }))
			})
			require.Same(t, def, got, "ran on Default()")
		})
		if name == "Submit" || name == "SubmitPriority" || name == "SubmitTaskPriority/Normal" ||
			name == "SubmitTaskPriority" || name == "SubmitContext" {
			continue // a submission from a task is queued, not run inline
		}
		t.Run(name+"/inside-Default", func(t *testing.T) {
			var outer, inner *forkjoin.Worker
			within(t, name, func() {
				forkjoin.Invoke(def, func(w *forkjoin.Worker) int {
					outer = w
					return call(func(w *forkjoin.Worker) int { inner = w; return 7 })
				})
			})
			require.Same(t, outer, inner, "ran inline on the calling worker of Default()")
		})
	}
}

// funcComputer is a typed task made of a function.
type funcComputer func(*forkjoin.Worker) int

func (f funcComputer) Compute(w *forkjoin.Worker) int { return f(w) }

// TestNilWorkerOneMessage: every function of the package that takes a
// *Worker (or a Runner holding one) panics with the same message for a nil
// one, "forkjoin: <name> called with a nil *Worker". Before, the wording
// differed from function to function (Fork and Join shared one naming
// neither, Block and RunScope did not tell a nil *Worker from a nil
// function).
func TestNilWorkerOneMessage(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	var nilWorker *forkjoin.Worker
	one := func(*forkjoin.Worker) int { return 1 }
	submitted := forkjoin.Submit(p, one)
	_, err := submitted.Get(context.Background())
	require.NoError(t, err)
	var scope *forkjoin.Scope
	var spawnPanic, spawnTaskPanic any
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
		forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
			scope = s
			spawnPanic = recoverPanic(func() { s.Spawn(nilWorker, func(*forkjoin.Worker) {}) })
			spawnTaskPanic = recoverPanic(func() { forkjoin.SpawnTask(s, nilWorker, goexitTask{}) })
		})
		return 0
	})
	require.NotNil(t, scope)
	calls := map[string]func(){
		"Fork":      func() { forkjoin.Fork(nilWorker, one) },
		"ForkTask":  func() { forkjoin.ForkTask[int](nilWorker, funcComputer(one)) },
		"Join":      func() { forkjoin.Join(nilWorker, one, one) },
		"JoinTasks": func() { forkjoin.JoinTasks[int, int](nilWorker, funcComputer(one), funcComputer(one)) },
		"Future.Join": func() {
			submitted.Join(nilWorker)
		},
		"Block":       func() { forkjoin.Block(nilWorker, func() {}) },
		"RunScope":    func() { forkjoin.RunScope(nilWorker, func(*forkjoin.Scope, *forkjoin.Worker) {}) },
		"Scope.Spawn": func() { panic(spawnPanic) },
		"SpawnTask":   func() { panic(spawnTaskPanic) },
		"Run":         func() { forkjoin.Run[int](nilWorker, one) },
		"ScopeOn":     func() { forkjoin.ScopeOn(nilWorker, func(*forkjoin.Scope, *forkjoin.Worker) {}) },
		"Broadcast":   func() { forkjoin.Broadcast(nilWorker, func(*forkjoin.Worker) {}) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			require.PanicsWithValue(t, "forkjoin: "+name+" called with a nil *Worker", call)
		})
	}
}
