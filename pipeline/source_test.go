package pipeline_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/pipeline"
)

// runReturns runs Run on a goroutine and reports whether it returned
// within the hang limit, and the channel its error arrives on.
func runReturns[T any](ctx context.Context, p *pipeline.Pipe[T]) (done chan error, returned bool) {
	done = make(chan error, 1)
	go func() { done <- pipeline.Run(ctx, p, func(T) error { return nil }) }()
	select {
	case err := <-done:
		done <- err
		return done, true
	case <-time.After(hangTimeout):
		return done, false
	}
}

// TestFromChanStopsWhileChannelIdle: a run fed by FromChan stops when its
// context is canceled, or when a stage fails, while the channel is open and
// idle: Run returns without waiting for the producer. Before the fix the
// source sat in a range over the channel, which watches no context, and
// Run hung until the producer sent again or closed it (found by review).
func TestFromChanStopsWhileChannelIdle(t *testing.T) {
	pool := forkjoin.New(forkjoin.WithParallelism(1))
	defer pool.Close()
	identity := func(_ context.Context, _ *forkjoin.Worker, v int) (int, error) { return v, nil }

	idle := make(chan int)
	defer close(idle)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done, ok := runReturns(ctx, pipeline.Map(pipeline.FromChan(idle), pool, identity))
	require.True(t, ok, "Run did not return after its context was canceled")
	require.ErrorIs(t, <-done, context.Canceled)

	boom := errors.New("boom")
	fed := make(chan int, 1)
	defer close(fed)
	fed <- 1
	done, ok = runReturns(context.Background(), pipeline.Map(pipeline.FromChan(fed), pool,
		func(context.Context, *forkjoin.Worker, int) (int, error) { return 0, boom }))
	require.True(t, ok, "Run did not return after a stage failed")
	require.ErrorIs(t, <-done, boom)
}

// TestSourceGoexitFailsRun: a source whose sequence calls runtime.Goexit
// (t.FailNow in a test's iterator) fails the run with forkjoin.ErrGoexit
// instead of ending the stream as if it were complete (found by review:
// Run returned nil on the truncated stream).
func TestSourceGoexitFailsRun(t *testing.T) {
	pool := forkjoin.New(forkjoin.WithParallelism(1))
	defer pool.Close()
	src := pipeline.From(func(yield func(int) bool) {
		if yield(1) {
			runtime.Goexit()
		}
	})
	p := pipeline.Map(src, pool, func(_ context.Context, _ *forkjoin.Worker, v int) (int, error) { return v, nil })
	var err error
	within(t, "Run", func() { err = pipeline.Run(context.Background(), p, func(int) error { return nil }) })
	require.ErrorIs(t, err, forkjoin.ErrGoexit)
}
