package forkjoin_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestCloseRunsEverythingOnce submits 10,000 tasks, each forking a child it
// never joins, closes the pool at once and checks that every task and every
// child ran exactly once, and that no worker goroutine is left.
func TestCloseRunsEverythingOnce(t *testing.T) {
	const n = 10000
	for _, par := range []int{1, 2, 4} {
		for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
			before := goleak.IgnoreCurrent()
			p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(mode))
			ran := make([]atomic.Int32, n)
			children := make([]atomic.Int32, n)
			for i := 0; i < n; i++ {
				var err error
				if i%2 == 0 {
					err = p.Execute(func(w *forkjoin.Worker) {
						ran[i].Add(1)
						forkjoin.Fork(w, func(*forkjoin.Worker) int { children[i].Add(1); return 0 })
					})
				} else {
					forkjoin.Submit(p, func(w *forkjoin.Worker) int {
						ran[i].Add(1)
						forkjoin.Fork(w, func(*forkjoin.Worker) int { children[i].Add(1); return 0 })
						return 0
					})
				}
				require.NoError(t, err)
			}
			within(t, "Close", p.Close)
			for i := range ran {
				require.EqualValues(t, 1, ran[i].Load(), "p=%d %v: task %d", par, mode, i)
				require.EqualValues(t, 1, children[i].Load(), "p=%d %v: child of task %d", par, mode, i)
			}
			s := p.Stats()
			require.Zero(t, s.Workers)
			require.Zero(t, s.Queued)
			require.EqualValues(t, n, s.Submitted)
			goleak.VerifyNone(t, before)
		}
	}
}

// TestCloseWaitsForRunningTasks closes while slow tasks are running: Close
// returns only after they have finished.
func TestCloseWaitsForRunningTasks(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	var finished atomic.Int32
	var started sync.WaitGroup
	started.Add(2)
	for i := 0; i < 2; i++ {
		require.NoError(t, p.Execute(func(*forkjoin.Worker) {
			started.Done()
			time.Sleep(20 * time.Millisecond)
			finished.Add(1)
		}))
	}
	started.Wait()
	within(t, "Close", p.Close)
	require.EqualValues(t, 2, finished.Load())
}

func TestAfterClose(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	require.Equal(t, 3, forkjoin.Invoke(p, func(*forkjoin.Worker) int { return 3 }))
	within(t, "Close", p.Close)

	require.ErrorIs(t, p.Execute(func(*forkjoin.Worker) {}), forkjoin.ErrClosed)

	f := forkjoin.Submit(p, func(*forkjoin.Worker) int { return 1 })
	require.True(t, f.Done(), "a Submit to a closed pool is done at once")
	v, err := f.Get(context.Background())
	require.ErrorIs(t, err, forkjoin.ErrClosed)
	require.Zero(t, v)

	r := recoverPanic(func() { forkjoin.Invoke(p, func(*forkjoin.Worker) int { return 1 }) })
	require.NotNil(t, r, "Invoke on a closed pool must panic")
	err, ok := r.(error)
	require.True(t, ok, "Invoke panicked with %T, want an error", r)
	require.ErrorIs(t, err, forkjoin.ErrClosed)

	r = recoverPanic(func() { forkjoin.Run(p, func(*forkjoin.Worker) int { return 1 }) })
	require.NotNil(t, r, "Run on a closed pool must panic")

	require.Equal(t, forkjoin.Stats{Workers: 0, Submitted: 1, Executed: 1, Completed: 1}, onlyCounts(p.Stats()))
}

// onlyCounts zeroes the Stats fields that depend on scheduling.
func onlyCounts(s forkjoin.Stats) forkjoin.Stats {
	s.Steals, s.Helped, s.Parks, s.Idle = 0, 0, 0, 0
	s.QueueWaits, s.QueueWaitTotal, s.QueueWaitMax = 0, 0, 0 // sampled timings
	return s
}

// TestCloseIdempotentAndConcurrent closes a busy pool from many goroutines
// at once, then again: every call returns only once the workers are gone.
func TestCloseIdempotentAndConcurrent(t *testing.T) {
	for round := 0; round < 20; round++ {
		p := forkjoin.New(forkjoin.WithParallelism(3))
		var ran atomic.Int32
		for i := 0; i < 100; i++ {
			require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
				fibJoin(w, 10)
				ran.Add(1)
			}))
		}
		var wg sync.WaitGroup
		var workersLeft atomic.Int32
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.Close()
				workersLeft.Add(int32(p.Stats().Workers))
			}()
		}
		within(t, "concurrent Close", wg.Wait)
		require.Zero(t, workersLeft.Load(), "a Close returned before the workers were gone")
		require.EqualValues(t, 100, ran.Load())
		within(t, "Close again", p.Close)
	}
}

// TestCloseFromInsideTask calls Close from a task of the pool being closed:
// it must not deadlock. The pool stops accepting work, the tasks in flight
// (including what the closing task forks afterwards) complete, and an outside
// Close then waits for the workers.
func TestCloseFromInsideTask(t *testing.T) {
	for _, par := range []int{1, 2} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var execErr error
		var got int
		within(t, "Close inside Invoke", func() {
			got = forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				p.Close()
				execErr = p.Execute(func(*forkjoin.Worker) {})
				return fibJoin(w, 15) // forking still works in the closing task
			})
		})
		require.Equal(t, fibSeq(15), got)
		require.ErrorIs(t, execErr, forkjoin.ErrClosed)
		within(t, "Close outside", p.Close)
		require.Zero(t, p.Stats().Workers)

		// The same from an Execute task nobody waits for.
		p = forkjoin.New(forkjoin.WithParallelism(par))
		closed := make(chan struct{})
		require.NoError(t, p.Execute(func(*forkjoin.Worker) {
			p.Close()
			close(closed)
		}))
		within(t, "Close inside Execute", func() { <-closed })
		within(t, "Close outside", p.Close)
		require.Zero(t, p.Stats().Workers)
	}
}

// TestShutdownFromInsideSaysItDidNotWait: Shutdown called where it cannot
// wait for the pool's work (in one of its tasks, or in its panic handler,
// which a worker waits for) returns at once, as Close does, but not nil,
// which means that the work has finished and the workers have exited: an
// error that errors.Is ErrInsidePool and counts the unfinished tasks. It
// returned nil on 7010b7a. Afterwards the pool still drains and closes.
func TestShutdownFromInsideSaysItDidNotWait(t *testing.T) {
	t.Run("task", func(t *testing.T) {
		p := forkjoin.New(forkjoin.WithParallelism(1))
		var err error
		within(t, "Shutdown inside Invoke", func() {
			forkjoin.Invoke(p, func(*forkjoin.Worker) int {
				err = p.Shutdown(context.Background())
				return 0
			})
		})
		require.ErrorIs(t, err, forkjoin.ErrInsidePool)
		require.ErrorContains(t, err, "1 submitted tasks unfinished")
		within(t, "Close outside", p.Close)
		require.Zero(t, p.Stats().Workers)
	})
	t.Run("handler", func(t *testing.T) {
		var p *forkjoin.Pool
		errs := make(chan error, 1)
		p = forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {
			errs <- p.Shutdown(context.Background())
		}))
		require.NoError(t, p.Execute(func(*forkjoin.Worker) { panic("boom") }))
		var err error
		within(t, "the handler's Shutdown", func() { err = <-errs })
		require.ErrorIs(t, err, forkjoin.ErrInsidePool)
		within(t, "Close outside", p.Close)
		require.Zero(t, p.Stats().Workers)
	})
}

// TestShutdownAcrossPoolsWaits documents Close's known limit: from a task
// of pool q that a worker of p waits for (p's task invoked q), p's Close
// would wait for that worker, which waits for the task: Shutdown with a
// deadline shows the wait (it gives up with the deadline's error), and
// the chain then completes.
func TestShutdownAcrossPoolsWaits(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	q := forkjoin.New(forkjoin.WithParallelism(1))
	defer q.Close()
	var err error
	within(t, "Shutdown of p from q's task", func() {
		forkjoin.Invoke(p, func(*forkjoin.Worker) int {
			return forkjoin.Invoke(q, func(*forkjoin.Worker) int {
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				err = p.Shutdown(ctx)
				return 0
			})
		})
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, forkjoin.ErrInsidePool)
	within(t, "Close outside", p.Close)
}

// TestCloseEmptyPool closes pools that never ran anything, at once and
// after their workers went to sleep.
func TestCloseEmptyPool(t *testing.T) {
	before := goleak.IgnoreCurrent()
	p := forkjoin.New(forkjoin.WithParallelism(4))
	within(t, "Close at once", p.Close)
	p = forkjoin.New(forkjoin.WithParallelism(4))
	waitUntil(t, "workers parked", func() bool { return p.Stats().Parks >= 4 })
	within(t, "Close parked", p.Close)
	goleak.VerifyNone(t, before)
}

// TestPoolClosed: Closed is false until Close or Shutdown begins and true
// from then on, also seen from a task the closing pool still runs, which
// may go on forking and calling Invoke (inline); the Default pool is
// never closed.
func TestPoolClosed(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	require.False(t, p.Closed())
	release := make(chan struct{})
	f := forkjoin.Submit(p, func(w *forkjoin.Worker) int {
		<-release
		if !p.Closed() {
			return -1 // Closed false inside the drain
		}
		return forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibFork(w, 15) })
	})
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	waitUntil(t, "Close begun", p.Closed)
	require.ErrorIs(t, p.Execute(func(*forkjoin.Worker) {}), forkjoin.ErrClosed)
	close(release)
	var v int
	var err error
	within(t, "the task on the closing pool", func() { v, err = f.Get(context.Background()) })
	require.NoError(t, err)
	require.Equal(t, fibSeq(15), v)
	within(t, "Close", func() { <-closed })
	require.True(t, p.Closed())

	q := forkjoin.New(forkjoin.WithParallelism(1))
	require.NoError(t, q.Shutdown(context.Background()))
	require.True(t, q.Closed())

	forkjoin.Default().Close()
	require.False(t, forkjoin.Default().Closed())
	var nilPool *forkjoin.Pool
	require.False(t, nilPool.Closed(), "nil means Default()")
}
