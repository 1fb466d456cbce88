package forkjoin_test

// Review rev36: scopes, spawned tasks (blocks, batched retirement) and
// Broadcast.

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestRev36GoexitInSpawnedTaskFlushesBatch: a worker runs tasks of a
// scope to their end (retired in its batch, not yet from the count), then
// a task of the scope that calls runtime.Goexit. Its goroutine unwinds and
// the worker's exit hook runs on it; the hook here waits until RunScope
// has returned. The batch must leave the count before the unwinding runs
// any user code (a hook, or a defer of a task below on the stack): held
// there, RunScope's count never reached zero and both waited for ever.
//
// Set-up, on 2 workers: worker B is held in a plain blocking task (it
// asks for no work), so the body's spawns on worker A after the first fill
// one private block, G oldest; the body then Blocks, which publishes the
// block, and the compensating worker takes it whole and runs the 8 others,
// then G.
func TestRev36GoexitInSpawnedTaskFlushesBatch(t *testing.T) {
	for round := range 5 {
		rev36GoexitRound(t, round)
	}
}

func rev36GoexitRound(t *testing.T, round int) {
	wait, rescue := rescuer()
	scopeReturned := make(chan struct{})
	var armed atomic.Bool
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithWorkerHooks(nil, func(int) {
		if armed.Load() {
			wait(scopeReturned)
		}
	}))
	defer closePool(t, p)
	defer close(rescue)
	holding, release := make(chan struct{}), make(chan struct{})
	require.NoError(t, p.Execute(func(*forkjoin.Worker) {
		close(holding)
		wait(release)
	}))
	<-holding
	var ran atomic.Int64
	within(t, "RunScope after a batch and a Goexit", func() {
		v := recoverPanic(func() {
			forkjoin.ScopeOn(p, func(s *forkjoin.Scope, w *forkjoin.Worker) {
				gStarted := make(chan struct{})
				// A first spawn serves a request B may have left before it
				// took its task: it publishes, and the next ones fill a
				// private block.
				s.Spawn(w, func(*forkjoin.Worker) { ran.Add(1) })
				s.Spawn(w, func(*forkjoin.Worker) { // the oldest: runs last
					armed.Store(true)
					close(gStarted)
					runtime.Goexit()
				})
				for range 8 {
					s.Spawn(w, func(*forkjoin.Worker) { ran.Add(1) })
				}
				forkjoin.Block(w, func() { wait(gStarted) })
			})
		})
		close(scopeReturned)
		close(release)
		var pe *forkjoin.PanicError
		require.True(t, errors.As(v.(error), &pe), "round %d: %v", round, v)
		require.ErrorIs(t, pe, forkjoin.ErrGoexit)
		require.EqualValues(t, 9, ran.Load())
	})
}
