package forkjoin_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestPanicHandlerGoexitLosesNothing: a panic handler that calls
// runtime.Goexit (t.FailNow in a test's handler, say) ends its own call
// and nothing else. The handler ran on the goroutine that had the panic to
// report, in the middle of the runtime's bookkeeping: for an Execute that
// panicked, the Goexit skipped the task's completion, so the pool counted
// it in flight for ever and Close hung; for a panic that AllOf drops, it
// unwound the firing of the completed Future's callbacks, so AllOf's
// Future and a Then on the same Future never completed, and the
// submission's completion was skipped too (Close hung again).
func TestPanicHandlerGoexitLosesNothing(t *testing.T) {
	var reported atomic.Int64
	handler := forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {
		reported.Add(1)
		runtime.Goexit()
	})
	t.Run("Execute", func(t *testing.T) {
		reported.Store(0)
		p := forkjoin.New(forkjoin.WithParallelism(1), handler)
		require.NoError(t, p.Execute(func(*forkjoin.Worker) { panic("boom") }))
		within(t, "the pool after the handler's Goexit", func() {
			require.Equal(t, 5, forkjoin.Invoke(p, func(*forkjoin.Worker) int { return 5 }))
		})
		within(t, "Close", p.Close)
		require.EqualValues(t, 1, reported.Load())
	})
	t.Run("AllOf", func(t *testing.T) {
		reported.Store(0)
		p := forkjoin.New(forkjoin.WithParallelism(1), handler)
		second := forkjoin.Submit(p, func(*forkjoin.Worker) int { panic("second") })
		_, err := second.Get(context.Background())
		require.Error(t, err)
		gate := make(chan struct{})
		first := forkjoin.Submit(p, func(*forkjoin.Worker) int { <-gate; panic("first") })
		all := forkjoin.AllOf(first, second) // first's completion drops second's panic
		then := forkjoin.Then(p, first, func(_ *forkjoin.Worker, v int) int { return v })
		close(gate)
		var allErr, thenErr error
		within(t, "AllOf and Then complete", func() {
			_, allErr = all.Get(context.Background())
			_, thenErr = then.Get(context.Background())
		})
		_, firstErr := first.Get(context.Background())
		require.Equal(t, firstErr, allErr)
		require.Equal(t, firstErr, thenErr)
		within(t, "Close", p.Close)
		require.EqualValues(t, 1, reported.Load(), "second's panic, dropped by AllOf")
	})
}
