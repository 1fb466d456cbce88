package forkjoin_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestForkBelongsToItsComputation: a fork belongs to the computation it
// was forked in, also when its Future leaves that computation and is
// joined from another one (an InvokeContext that returns the Future of a
// fork it did not join, to a task outside it). Its task sees that
// computation's context, and once that context is done the task is skipped
// if it has not started, and its Join re-panics with a *PanicError
// wrapping ctx.Err(), Java's CancellationException from the join of a
// cancelled task: whichever worker runs it, the forking one in its Join or
// a thief. Before the fix the forking worker's Join ran the task inline in
// the joiner's computation: it saw the outer context, ran although its
// computation had been canceled, and returned normally, while the same
// program with the fork stolen was skipped (p=1 failed every time).
func TestForkBelongsToItsComputation(t *testing.T) {
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		for _, typed := range []bool{false, true} {
			for _, cancelIt := range []bool{false, true} {
				outer, stopOuter := context.WithCancel(context.Background())
				inner, cancel := context.WithCancel(outer)
				var ran, wrong atomic.Int64
				task := compTask{inner, &ran, &wrong}
				var got, v any
				within(t, "join of a fork from another computation", func() {
					_, _ = forkjoin.InvokeContext(outer, p, func(w *forkjoin.Worker) int {
						var f *forkjoin.Future[int]
						_, _ = forkjoin.InvokeContext(inner, p, func(w *forkjoin.Worker) int {
							if typed {
								f = forkjoin.ForkTask[int](w, task)
							} else {
								f = forkjoin.Fork(w, task.Compute)
							}
							if cancelIt {
								cancel()
								for w.Err() == nil { // the cancellation arrives asynchronously
									runtime.Gosched()
								}
							}
							return 0
						})
						v = recoverPanic(func() { got = f.Join(w) })
						return 0
					})
				})
				stopOuter()
				cancel()
				require.Zero(t, wrong.Load(), "the fork ran outside its computation (typed %v, canceled %v)", typed, cancelIt)
				if !cancelIt || ran.Load() == 1 { // a thief may start it before the cancel
					require.Nil(t, v)
					require.Equal(t, 1, got)
					require.Equal(t, int64(1), ran.Load())
					continue
				}
				pe, ok := v.(*forkjoin.PanicError)
				require.True(t, ok, "Join of a skipped fork of a canceled computation (typed %v): got %v", typed, v)
				require.ErrorIs(t, pe, context.Canceled)
			}
		}
		requireHealthy(t, p)
	})
}

// compTask is a typed task that records whether it ran in the computation
// of want (w.Context() is want), and returns 1.
type compTask struct {
	want       context.Context
	ran, wrong *atomic.Int64
}

func (c compTask) Compute(w *forkjoin.Worker) int {
	c.ran.Add(1)
	if w.Context() != c.want {
		c.wrong.Add(1)
	}
	return 1
}
