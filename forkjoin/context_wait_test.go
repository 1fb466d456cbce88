package forkjoin_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestInvokeContextWaitsForItsTasks: once InvokeContext returns, no task
// of its computation writes to the caller's memory again, canceled or not:
// a task that ignores the context (it sleeps, then writes) and one that
// cooperates (it polls w.Err(), then writes) both finish their writes
// before InvokeContext returns ctx.Err(). Each is forked and joined, and
// each also runs as the root. (Before the fix InvokeContext returned on
// cancel while the tasks still ran, and the checker saw later writes.)
func TestInvokeContextWaitsForItsTasks(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	tasks := map[string]func(w *forkjoin.Worker, out *atomic.Int64){
		"ignores": func(w *forkjoin.Worker, out *atomic.Int64) {
			time.Sleep(30 * time.Millisecond)
			out.Add(1)
		},
		"cooperates": func(w *forkjoin.Worker, out *atomic.Int64) {
			for w.Err() == nil {
				time.Sleep(100 * time.Microsecond)
			}
			out.Add(1)
		},
	}
	for name, task := range tasks {
		for _, forked := range []bool{false, true} {
			t.Run(name, func(t *testing.T) {
				var writes atomic.Int64
				ctx, cancel := context.WithCancel(context.Background())
				started := make(chan struct{})
				go func() { <-started; time.Sleep(2 * time.Millisecond); cancel() }()
				var err error
				within(t, "InvokeContext", func() {
					_, err = forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
						close(started)
						if !forked {
							task(w, &writes)
							return 1
						}
						a, b := forkjoin.Join(w,
							func(w *forkjoin.Worker) int { task(w, &writes); return 1 },
							func(w *forkjoin.Worker) int { task(w, &writes); return 1 })
						return a + b
					})
				})
				require.ErrorIs(t, err, context.Canceled)
				after := writes.Load()
				want := int64(1)
				if forked {
					want = 2
				}
				require.Equal(t, want, after, "every task finished its write before InvokeContext returned")
				time.Sleep(50 * time.Millisecond)
				require.Equal(t, after, writes.Load(), "no write after InvokeContext returned")
			})
		}
	}
}

// TestSubmitContextReportsCancel: a task that sees the cancellation and
// returns normally still makes Get report ctx.Err(): the context was done
// before the computation completed (Java's get() throws
// CancellationException).
func TestSubmitContextReportsCancel(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	f := forkjoin.SubmitContext(ctx, p, func(w *forkjoin.Worker) int {
		for w.Err() == nil {
			time.Sleep(100 * time.Microsecond)
		}
		return 7
	})
	cancel()
	v, err := f.Get(context.Background())
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, v)
	require.True(t, f.Done())
}
