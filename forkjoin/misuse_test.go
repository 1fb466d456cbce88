package forkjoin

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMisuseInsideTaskIsAUsageError: calling a method on a nil *Worker,
// *Scope or *Future, or forking a typed task that is a nil interface value,
// panics with a message naming the call, never with a runtime error raised
// in the runtime's own frames, which would read as a bug in magpie and end
// the program (internalerr.go). Before, each of these dereferenced nil.
func TestMisuseInsideTaskIsAUsageError(t *testing.T) {
	p := New(WithParallelism(2))
	defer p.Close()
	var (
		nw *Worker
		ns *Scope
		nf *Future[int]
		nc computer[int]
		na interface{ Compute(*Worker) }
	)
	one := funcTask[int](func(*Worker) int { return 1 })
	misuses := map[string]func(w *Worker){
		"forkjoin: Worker.Index called with a nil *Worker":                              func(*Worker) { nw.Index() },
		"forkjoin: Worker.Pool called with a nil *Worker":                               func(*Worker) { nw.Pool() },
		"forkjoin: Worker.Surplus called with a nil *Worker":                            func(*Worker) { nw.Surplus() },
		"forkjoin: Worker.Err called with a nil *Worker":                                func(*Worker) { _ = nw.Err() },
		"forkjoin: Worker.Context called with a nil *Worker":                            func(*Worker) { nw.Context() },
		"forkjoin: Scope.Spawn called with a nil *Scope":                                func(w *Worker) { ns.Spawn(w, func(*Worker) {}) },
		"forkjoin: Join called on a nil *Future or a Future not made by Fork or Submit": func(w *Worker) { nf.Join(w) },
		"forkjoin: ForkTask called with a nil task":                                     func(w *Worker) { ForkTask[int](w, nc).Join(w) },
		"forkjoin: JoinTasks called with a nil task":                                    func(w *Worker) { JoinTasks[int, int](w, one, nc) },
		"forkjoin: SpawnTask called with a nil task": func(w *Worker) {
			var done *Scope // checked before the scope's state: any non-nil *Scope will do
			RunScope(w, func(s *Scope, _ *Worker) { done = s })
			SpawnTask(done, w, na)
		},
		"forkjoin: SpawnTask called with a nil *Scope": func(w *Worker) { SpawnTask(ns, w, funcAction(func(*Worker) {})) },
		"forkjoin: SubmitTaskPriority called with a nil task": func(*Worker) {
			SubmitTaskPriority[int](p, Normal, nc)
		},
	}
	for want, misuse := range misuses {
		t.Run(want, func(t *testing.T) {
			got := Invoke(p, func(w *Worker) any { return recoverValue(func() { misuse(w) }) })
			assert.Equal(t, want, got)
			// Through the task's boundary: the task's own *PanicError.
			v := recoverValue(func() { Invoke(p, func(w *Worker) int { misuse(w); return 0 }) })
			var pe *PanicError
			require.ErrorAs(t, v.(error), &pe)
			assert.Equal(t, want, pe.Value)
		})
	}
}

// TestNilPoolMethodsMeanDefault: a nil *Pool's methods act on Default(), as
// every function that takes a *Pool does; Close and Shutdown do nothing, as
// they do on Default().
func TestNilPoolMethodsMeanDefault(t *testing.T) {
	var p *Pool
	d := Default()
	assert.Equal(t, d.Parallelism(), p.Parallelism())
	assert.Equal(t, d.MaxWorkers(), p.MaxWorkers())
	assert.Equal(t, d.Mode(), p.Mode())
	assert.Len(t, p.WorkerStats(), d.MaxWorkers())
	ran := make(chan *Pool, 2)
	require.NoError(t, p.Execute(func(w *Worker) { ran <- w.Pool() }))
	require.NoError(t, p.ExecuteContext(context.Background(), func(w *Worker) { ran <- w.Pool() }))
	assert.Same(t, d, <-ran)
	assert.Same(t, d, <-ran)
	assert.GreaterOrEqual(t, p.Stats().Executed+p.Stats().Completed, uint64(0))
	p.Close()
	require.NoError(t, p.Shutdown(context.Background()))
	require.NoError(t, Default().Execute(func(*Worker) {}), "Default still runs")
}
