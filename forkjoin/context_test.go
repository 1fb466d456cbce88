package forkjoin

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func fibCancelable(w *Worker, n int) int {
	if n < 2 {
		return n
	}
	a, b := JoinTasks[int, int](w, fibTask(n-1), fibTask(n-2))
	return a + b
}

func TestInvokeContextCancelStopsComputation(t *testing.T) {
	p := New(WithParallelism(2))
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var canceledAt time.Time
	go func() {
		time.Sleep(20 * time.Millisecond)
		canceledAt = time.Now()
		cancel()
	}()
	// fib(45) forking at every level would take minutes: it can only
	// return early through cancellation.
	_, err := InvokeContext(ctx, p, func(w *Worker) int { return fibCancelable(w, 45) })
	returned := time.Since(canceledAt)
	require.ErrorIs(t, err, context.Canceled)
	t.Logf("InvokeContext returned %v after cancel", returned)

	// The computation unwinds: the pool becomes idle and serves new work.
	require.Eventually(t, func() bool { return p.Stats().Idle == 2 }, 30*time.Second, time.Millisecond)
	require.Equal(t, 55, Invoke(p, func(w *Worker) int { return fibTask(10).Compute(w) }))
}

func TestWorkerErrObservesCancel(t *testing.T) {
	p := New(WithParallelism(2))
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var spins atomic.Int64
	started := make(chan struct{})
	go func() { <-started; cancel() }()
	_, err := InvokeContext(ctx, p, func(w *Worker) int {
		require.NoError(t, w.Err())
		require.Equal(t, ctx, w.Context())
		close(started)
		for w.Err() == nil {
			spins.Add(1)
		}
		return 0
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Eventually(t, func() bool { return p.Stats().Idle == 2 }, 30*time.Second, time.Millisecond)
}

func TestInvokeContextResultsAndPanics(t *testing.T) {
	p := New(WithParallelism(2))
	defer p.Close()
	v, err := InvokeContext(context.Background(), p, func(w *Worker) int {
		require.Nil(t, w.Err())
		return fibTask(15).Compute(w)
	})
	require.NoError(t, err)
	require.Equal(t, 610, v)

	boom := errors.New("boom")
	_, err = InvokeContext(context.Background(), p, func(w *Worker) int { panic(boom) })
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, boom)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = InvokeContext(ctx, p, func(w *Worker) int { return 1 })
	require.ErrorIs(t, err, context.Canceled)

	// Nested inside a task: runs inline in a scope of its own.
	got := Invoke(p, func(w *Worker) int {
		r, err := InvokeContext(context.Background(), p, func(w *Worker) int { return 3 })
		require.NoError(t, err)
		require.Nil(t, w.Err())
		return r
	})
	require.Equal(t, 3, got)
}

func TestSubmitContextDeadline(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	f := SubmitContext(ctx, p, func(w *Worker) int {
		for w.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		return -1
	})
	// The task returned normally after seeing the deadline: the deadline
	// passed before the computation completed, so Get reports it, as Java's
	// get() reports a cancellation.
	v, err := f.Get(context.Background())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Zero(t, v)

	f2 := SubmitContext(ctx, p, func(w *Worker) int { return fibCancelable(w, 40) })
	_, err = f2.Get(context.Background())
	require.ErrorIs(t, err, context.DeadlineExceeded)
}
