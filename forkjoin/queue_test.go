package forkjoin

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// blockWorkers occupies every worker of p until release is closed.
func blockWorkers(t *testing.T, p *Pool) (release func()) {
	gate := make(chan struct{})
	var started sync.WaitGroup
	started.Add(p.Parallelism())
	for i := 0; i < p.Parallelism(); i++ {
		require.NoError(t, p.Execute(func(*Worker) { started.Done(); <-gate }))
	}
	started.Wait()
	return func() { close(gate) }
}

func TestMaxQueuedFailsFastWhenFull(t *testing.T) {
	p := New(WithParallelism(2), WithMaxQueued(4))
	defer p.Close()
	release := blockWorkers(t, p)
	var ran atomic.Int64
	for i := 0; i < 4; i++ {
		require.NoError(t, p.Execute(func(*Worker) { ran.Add(1) }))
	}
	require.ErrorIs(t, p.Execute(func(*Worker) { ran.Add(1) }), ErrQueueFull)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, p.ExecuteContext(ctx, func(*Worker) {}), context.Canceled)

	release()
	require.Eventually(t, func() bool { return ran.Load() == 4 }, 30*time.Second, time.Millisecond)
	require.NoError(t, p.Execute(func(*Worker) { ran.Add(1) }), "room again once drained")
}

func TestMaxQueuedManySubmittersNothingLostNothingTwice(t *testing.T) {
	const submitters, each = 16, 500
	p := New(WithParallelism(2), WithMaxQueued(8))
	var runs [submitters * each]atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < submitters; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				k := g*each + i
				err := p.ExecuteContext(context.Background(), func(*Worker) { runs[k].Add(1) })
				if err != nil {
					t.Errorf("ExecuteContext: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	p.Close()
	for k := range runs {
		require.Equal(t, int32(1), runs[k].Load(), "task %d", k)
	}
	require.Equal(t, uint64(submitters*each), p.Stats().Submitted)
}

func TestCloseUnderLoadRunsAcceptedRejectsRest(t *testing.T) {
	const submitters = 16
	p := New(WithParallelism(2))
	var accepted, ran, rejected atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := 0; g < submitters; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for {
				err := p.Execute(func(*Worker) { ran.Add(1) })
				if errors.Is(err, ErrClosed) {
					rejected.Add(1)
					return
				}
				if err != nil {
					t.Errorf("Execute: %v", err)
					return
				}
				accepted.Add(1)
			}
		}()
	}
	close(start)
	for p.Stats().Submitted < 2000 {
		time.Sleep(time.Millisecond)
	}
	p.Close()
	wg.Wait()
	require.Equal(t, accepted.Load(), ran.Load(), "every accepted task ran exactly once")
	require.Equal(t, int64(submitters), rejected.Load())
	require.ErrorIs(t, p.Execute(func(*Worker) {}), ErrClosed)
}

func TestShutdownDeadline(t *testing.T) {
	p := New(WithParallelism(1))
	release := blockWorkers(t, p)
	for i := 0; i < 3; i++ {
		require.NoError(t, p.Execute(func(*Worker) {}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := p.Shutdown(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "4 submitted tasks unfinished")
	require.ErrorIs(t, p.Execute(func(*Worker) {}), ErrClosed)

	release()
	require.NoError(t, p.Shutdown(context.Background()), "drains once unblocked")
	require.Equal(t, 0, p.Stats().Workers)
}

func TestSubmitWaitsForRoomAndClosedWakesWaiters(t *testing.T) {
	p := New(WithParallelism(1), WithMaxQueued(1))
	release := blockWorkers(t, p)
	require.NoError(t, p.Execute(func(*Worker) {}))
	errc := make(chan error, 1)
	go func() {
		errc <- p.ExecuteContext(context.Background(), func(*Worker) {})
	}()
	select {
	case err := <-errc:
		t.Fatalf("ExecuteContext returned %v while the queue was full", err)
	case <-time.After(20 * time.Millisecond):
	}
	go func() { time.Sleep(10 * time.Millisecond); release() }()
	p.Close()
	select {
	case err := <-errc:
		// Either it got room before the close or it was woken by it.
		if err != nil {
			require.ErrorIs(t, err, ErrClosed)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a submitter waiting for room was not woken by Close")
	}
}

// TestMaxQueuedOwnTaskWaitsForRoomOnlyOthersMake: a known limit, shown
// (review rev15): a task of the pool that waits for room in the pool's own
// full queue (ExecuteContext here; Submit waits the same way, without a
// deadline) waits for its workers to take queued tasks; when every worker
// is such a task, nothing ever takes one. On one worker with room for one
// task: the queued task cannot start while its submitter's task runs, so
// ExecuteContext returns only with its context's error, and the queued
// task runs after the submitting task has returned.
func TestMaxQueuedOwnTaskWaitsForRoomOnlyOthersMake(t *testing.T) {
	p := New(WithParallelism(1), WithMaxQueued(1))
	defer p.Close()
	var ran atomic.Bool
	var err error
	testenv.Within(t, "ExecuteContext from the pool's own task", func() {
		Invoke(p, func(*Worker) struct{} {
			require.NoError(t, p.Execute(func(*Worker) { ran.Store(true) }))
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			err = p.ExecuteContext(ctx, func(*Worker) {})
			return struct{}{}
		})
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Eventually(t, ran.Load, 30*time.Second, time.Millisecond)
}
