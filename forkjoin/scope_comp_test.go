package forkjoin_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// ctxTask is a typed spawned task that records whether it ran in the
// computation of want: w.Context() is want and w.Err() is nil.
type ctxTask struct {
	want       context.Context
	ran, wrong *atomic.Int64
}

func (c ctxTask) Compute(w *forkjoin.Worker) {
	c.ran.Add(1)
	if w.Context() != c.want || w.Err() != nil {
		c.wrong.Add(1)
	}
}

// TestSpawnIntoOuterScopeOutlivesInnerCancel: a task spawned into a scope
// belongs to the scope's computation (the one RunScope was called in),
// whichever computation the spawning task runs in. A scope body that calls
// InvokeContext and, inside it, spawns into the outer scope, then cancels
// the inner context: the tasks are the outer scope's, so they all run, in
// the outer computation, and the outer RunScope does not fail with the
// inner computation's cancellation. Before the fix the spawned node took
// the spawner's computation: the tasks were skipped as canceled and
// RunScope re-panicked with a *PanicError wrapping context.Canceled (on a
// FIFO pool a ticket carried the spawner's cancellation but ran the
// scope's oldest task, skipping a task the body spawned outside).
func TestSpawnIntoOuterScopeOutlivesInnerCancel(t *testing.T) {
	const spawns = 40 // more than one spawn block of closures
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		outerCtx, stopOuter := context.WithCancel(context.Background())
		defer stopOuter()
		var ran, wrong atomic.Int64
		var innerErr, outerErr error
		var v any
		within(t, "spawns into an outer scope from a canceled computation", func() {
			v = recoverPanic(func() {
				_, outerErr = forkjoin.InvokeContext(outerCtx, p, func(w *forkjoin.Worker) int {
					forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
						forkjoin.SpawnTask(s, w, ctxTask{outerCtx, &ran, &wrong}) // the outer computation's own
						ctx, cancel := context.WithCancel(outerCtx)
						_, innerErr = forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
							for i := range spawns {
								if i%2 == 0 {
									forkjoin.SpawnTask(s, w, ctxTask{outerCtx, &ran, &wrong})
								} else {
									s.Spawn(w, ctxTask{outerCtx, &ran, &wrong}.Compute)
								}
							}
							cancel()             // before any of them starts on one worker
							for w.Err() == nil { // the cancellation reaches the computation asynchronously
								runtime.Gosched()
							}
							return 0
						})
						forkjoin.SpawnTask(s, w, ctxTask{outerCtx, &ran, &wrong})
					})
					return 0
				})
			})
		})
		require.Nil(t, v, "the outer RunScope failed with the inner computation's cancellation")
		require.NoError(t, outerErr)
		require.ErrorIs(t, innerErr, context.Canceled)
		require.Equal(t, int64(spawns+2), ran.Load(), "every task of the outer scope runs")
		require.Zero(t, wrong.Load(), "a task of the outer scope ran in the inner computation")
		requireHealthy(t, p)
	})
}
