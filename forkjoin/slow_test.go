package forkjoin_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestSlowTaskHandlerReportsStuckTask: with a 100 ms threshold, a submitted
// task held past it is reported while it still runs, once, with its
// worker's index and a running time of at least the threshold; 200 quick
// tasks are never reported; Close waits for the watchdog (goleak checks).
func TestSlowTaskHandlerReportsStuckTask(t *testing.T) {
	const threshold = 100 * time.Millisecond
	type report struct {
		p       *forkjoin.Pool
		worker  int
		running time.Duration
	}
	var mu sync.Mutex
	var reports []report
	p := forkjoin.New(forkjoin.WithParallelism(2),
		forkjoin.WithSlowTaskHandler(threshold, func(p *forkjoin.Pool, worker int, running time.Duration) {
			mu.Lock()
			reports = append(reports, report{p, worker, running})
			mu.Unlock()
		}))
	defer closePool(t, p)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(reports) }

	var quick sync.WaitGroup
	quick.Add(200)
	for range 200 {
		require.NoError(t, p.Execute(func(*forkjoin.Worker) { quick.Done() }))
	}
	within(t, "quick tasks", quick.Wait)

	release := make(chan struct{})
	index := make(chan int, 1)
	require.NoError(t, p.Execute(func(w *forkjoin.Worker) { index <- w.Index(); <-release }))
	waitUntil(t, "the stuck task's report", func() bool { return count() > 0 })
	time.Sleep(2 * threshold) // more looks of the watchdog: still one report
	close(release)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reports, 1)
	require.Same(t, p, reports[0].p)
	require.Equal(t, <-index, reports[0].worker)
	require.GreaterOrEqual(t, reports[0].running, threshold)
}

// TestSlowTaskHandlerOff: a threshold <= 0 or a nil handler disables the
// reports (a pool with either works as usual).
func TestSlowTaskHandlerOff(t *testing.T) {
	called := false
	for _, opt := range []forkjoin.Option{
		forkjoin.WithSlowTaskHandler(0, func(*forkjoin.Pool, int, time.Duration) { called = true }),
		forkjoin.WithSlowTaskHandler(time.Millisecond, nil),
	} {
		p := forkjoin.New(forkjoin.WithParallelism(1), opt)
		require.Equal(t, 1, forkjoin.Invoke(p, func(*forkjoin.Worker) int { time.Sleep(5 * time.Millisecond); return 1 }))
		closePool(t, p)
	}
	require.False(t, called)
}

// TestSlowTaskReportedOnceAcrossNestedTask: a submitted task past the
// threshold waits on another pool, and meanwhile its worker runs a quick
// queued task of its own pool nested inside it (waitForeign). When the
// nested task ends the outer one is running again, under its own number:
// it is not reported a second time. Before the fix it was (found by
// review; failed 4 of 4).
func TestSlowTaskReportedOnceAcrossNestedTask(t *testing.T) {
	const threshold = 40 * time.Millisecond
	var mu sync.Mutex
	var reports []time.Duration
	a := forkjoin.New(forkjoin.WithParallelism(1),
		forkjoin.WithSlowTaskHandler(threshold, func(_ *forkjoin.Pool, _ int, d time.Duration) {
			mu.Lock()
			reports = append(reports, d)
			mu.Unlock()
		}))
	defer closePool(t, a)
	b := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, b)
	done, innerQueued := make(chan struct{}), make(chan struct{})
	require.NoError(t, a.Execute(func(*forkjoin.Worker) {
		defer close(done)
		<-innerQueued
		time.Sleep(3 * threshold) // reported here
		forkjoin.Invoke(b, func(*forkjoin.Worker) int { time.Sleep(threshold / 2); return 0 })
		time.Sleep(threshold) // running again after the nested task
	}))
	require.NoError(t, a.Execute(func(*forkjoin.Worker) {})) // runs nested, in the Invoke's wait
	close(innerQueued)
	within(t, "outer task", func() { <-done })
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reports, 1, "one slow task, reported %d times: %v", len(reports), reports)
}
