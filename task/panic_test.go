package task_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

var errBoom = errors.New("boom")

// tracked runs for a while (a small sequential fib) and panics if it is the
// chosen one. running counts the tasks in flight, so that a test can check
// that none still runs when the panic reaches the caller.
type tracked struct {
	i, bad  int
	running *atomic.Int64
	value   any // what the bad task panics with
}

func (x tracked) Compute(*forkjoin.Worker) int {
	x.running.Add(1)
	defer x.running.Add(-1)
	r := fibSeq(12)
	if x.i == x.bad {
		panic(x.value)
	}
	return r
}

func (x tracked) action() trackedAction { return trackedAction(x) }

type trackedAction tracked

func (x trackedAction) Compute(w *forkjoin.Worker) { tracked(x).Compute(w) }

// recoverPanic runs fn and returns what it panicked with, and the number of
// tasks still running at the moment the panic reached us.
func recoverPanic(running *atomic.Int64, fn func()) (v any, inFlight int64) {
	defer func() {
		v = recover()
		inFlight = running.Load()
	}()
	fn()
	return nil, 0
}

func requirePanicError(t *testing.T, v any, want any) {
	t.Helper()
	err, ok := v.(error)
	require.True(t, ok, "panic value %T is not an error", v)
	var pe *forkjoin.PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, want, pe.Value, "the original panic value is kept")
	require.NotEmpty(t, pe.Stack)
}

func TestInvokeAllPanicPropagates(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *forkjoin.Pool) {
		for _, n := range []int{1, 2, 3, 17} {
			for _, bad := range []int{0, n / 2, n - 1} {
				t.Run(fmt.Sprintf("n=%d/bad=%d", n, bad), func(t *testing.T) {
					var running atomic.Int64
					ts := make([]task.RecursiveTask[int], n)
					typed := make([]tracked, n)
					as := make([]task.RecursiveAction, n)
					for i := range n {
						typed[i] = tracked{i, bad, &running, "bad task"}
						ts[i] = typed[i]
						as[i] = typed[i].action()
					}
					calls := map[string]func(w *forkjoin.Worker){
						"InvokeAll":        func(w *forkjoin.Worker) { task.InvokeAll(w, ts...) },
						"InvokeSlice":      func(w *forkjoin.Worker) { task.InvokeSlice(w, typed) },
						"InvokeAllActions": func(w *forkjoin.Worker) { task.InvokeAllActions(w, as...) },
					}
					for name, call := range calls {
						within(t, func() {
							// Recover inside the task, where InvokeAll itself
							// re-panics, and check that no sibling still runs.
							got := forkjoin.Invoke(p, func(w *forkjoin.Worker) [2]any {
								v, inFlight := recoverPanic(&running, func() { call(w) })
								return [2]any{v, inFlight}
							})
							requirePanicError(t, got[0], "bad task")
							require.Zero(t, got[1], "%s: a task still ran when the panic surfaced", name)
						})
					}
				})
			}
		}
	})
}

// TestInvokeAllPanicRepeated repeats a panic in the middle of nine tasks,
// where the halving forks on both sides of it, and checks that the error
// unwraps to the original.
func TestInvokeAllPanicRepeated(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *forkjoin.Pool) {
		for range 20 {
			var running atomic.Int64
			typed := make([]tracked, 9)
			for i := range typed {
				typed[i] = tracked{i, 4, &running, errBoom}
			}
			within(t, func() {
				got := forkjoin.Invoke(p, func(w *forkjoin.Worker) [2]any {
					v, inFlight := recoverPanic(&running, func() { task.InvokeSlice(w, typed) })
					return [2]any{v, inFlight}
				})
				requirePanicError(t, got[0], errBoom)
				require.Zero(t, got[1], "tasks in flight when the panic surfaced")
				require.ErrorIs(t, got[0].(error), errBoom, "PanicError unwraps to the error")
			})
		}
	})
}

func TestForkJoinPanicPropagates(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *forkjoin.Pool) {
		var running atomic.Int64
		within(t, func() {
			got := forkjoin.Invoke(p, func(w *forkjoin.Worker) any {
				f := task.Fork(w, tracked{1, 1, &running, 42})
				v, _ := recoverPanic(&running, func() { f.Join(w) })
				return v
			})
			requirePanicError(t, got, 42)

			got = forkjoin.Invoke(p, func(w *forkjoin.Worker) any {
				f := task.ForkAction(w, tracked{1, 1, &running, errBoom}.action())
				v, _ := recoverPanic(&running, func() { f.Join(w) })
				return v
			})
			requirePanicError(t, got, errBoom)

			got = forkjoin.Invoke(p, func(w *forkjoin.Worker) any {
				v, inFlight := recoverPanic(&running, func() {
					task.InvokeBoth(w, tracked{0, 1, &running, nil}, tracked{1, 1, &running, "b"})
				})
				require.Zero(t, inFlight)
				return v
			})
			requirePanicError(t, got, "b")
		})
		// From outside: Invoke re-panics the task's panic.
		v, _ := recoverPanic(&running, func() { task.Invoke(p, tracked{0, 0, &running, "root"}) })
		requirePanicError(t, v, "root")
		v, _ = recoverPanic(&running, func() { task.InvokeAction(p, tracked{0, 0, &running, "act"}.action()) })
		requirePanicError(t, v, "act")
		// A panic deep in a recursion surfaces once, with its value.
		v, _ = recoverPanic(&running, func() { task.Invoke(p, panicAt{10, 3}) })
		requirePanicError(t, v, "deep")
		// The pool is still usable afterwards.
		require.Equal(t, 55, task.Invoke(p, Fib{10}))
	})
}

// panicAt recurses like fib and panics at depth n == at.
type panicAt struct{ n, at int }

func (x panicAt) Compute(w *forkjoin.Worker) int {
	if x.n == x.at {
		panic("deep")
	}
	if x.n < 2 {
		return x.n
	}
	r := task.InvokeAll(w, panicAt{x.n - 1, x.at}, panicAt{x.n - 2, x.at})
	return r[0] + r[1]
}

// panicker panics with errBoom.
type panicker struct{}

func (panicker) Compute(*forkjoin.Worker) int { panic(errBoom) }

// TestInvokeFromInsideWrapsPanic: task.Invoke on the pool a task runs in
// (which runs the task inline) re-raises a panic as a
// *forkjoin.PanicError, exactly as from outside (the panic table in
// package forkjoin's documentation).
func TestInvokeFromInsideWrapsPanic(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	check := func(v any) {
		pe, ok := v.(*forkjoin.PanicError)
		require.True(t, ok, "got %T %v", v, v)
		require.ErrorIs(t, pe, errBoom)
	}
	var running atomic.Int64
	v, _ := recoverPanic(&running, func() { task.Invoke[int](p, panicker{}) })
	check(v)
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
		v, _ := recoverPanic(&running, func() { task.Invoke[int](w.Pool(), panicker{}) })
		check(v)
		return 0
	})
}
