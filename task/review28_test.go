package task_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// exiting is tracked with runtime.Goexit (t.FailNow in a test's task) in
// place of the panic.
type exiting struct {
	i, bad  int
	running *atomic.Int64
	ran     *atomic.Int64
}

func (x exiting) Compute(*forkjoin.Worker) int {
	x.running.Add(1)
	defer x.running.Add(-1)
	x.ran.Add(1)
	r := fibSeq(12)
	if x.i == x.bad {
		runtime.Goexit()
	}
	return r
}

type exitingAction exiting

func (x exitingAction) Compute(w *forkjoin.Worker) { exiting(x).Compute(w) }

// TestInvokeAllGoexitLeavesNothingRunning (review rev28; passed on
// ea2d076, kept as a regression test): a task of InvokeAll, InvokeSlice or
// InvokeAllActions that calls runtime.Goexit, wherever it sits, ends the
// root with forkjoin.ErrGoexit, and no sibling still runs when Invoke
// reports it, as for a panic (TestInvokeAllPanicPropagates): every
// JoinTasks of the halving settles its fork on the way out of a Goexit
// (abandonJoin), and one that was stolen reports the thief's Goexit as a
// *PanicError, which the halving above settles in turn. Every task either
// ran or was removed unrun; none runs twice.
func TestInvokeAllGoexitLeavesNothingRunning(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *forkjoin.Pool) {
		for _, n := range []int{1, 2, 3, 17} {
			for _, bad := range []int{0, n / 2, n - 1} {
				t.Run(fmt.Sprintf("n=%d/bad=%d", n, bad), func(t *testing.T) {
					var running, ran atomic.Int64
					typed := make([]exiting, n)
					ts := make([]task.RecursiveTask[int], n)
					as := make([]task.RecursiveAction, n)
					for i := range n {
						typed[i] = exiting{i, bad, &running, &ran}
						ts[i] = typed[i]
						as[i] = exitingAction(typed[i])
					}
					calls := map[string]func(w *forkjoin.Worker){
						"InvokeAll":        func(w *forkjoin.Worker) { task.InvokeAll(w, ts...) },
						"InvokeSlice":      func(w *forkjoin.Worker) { task.InvokeSlice(w, typed) },
						"InvokeAllActions": func(w *forkjoin.Worker) { task.InvokeAllActions(w, as...) },
					}
					for name, call := range calls {
						ran.Store(0)
						var got any
						var inFlight int64
						within(t, func() {
							defer func() {
								got = recover()
								inFlight = running.Load()
							}()
							forkjoin.Invoke(p, func(w *forkjoin.Worker) int { call(w); return 0 })
						})
						err, ok := got.(error)
						require.True(t, ok, "%s: Invoke gave %v, not an error", name, got)
						require.True(t, errors.Is(err, forkjoin.ErrGoexit), "%s: %v", name, err)
						require.Zero(t, inFlight, "%s: a task still ran when the Goexit surfaced", name)
						require.LessOrEqual(t, ran.Load(), int64(n), "%s: a task ran twice", name)
						require.GreaterOrEqual(t, ran.Load(), int64(1), name)
					}
				})
			}
		}
	})
}
