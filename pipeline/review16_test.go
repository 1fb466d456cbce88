package pipeline_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/pipeline"
)

// count yields 0, 1, ... until stopped, n items at most.
func count(n int) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

// TestStageGoexitFailsRun: a stage function that calls runtime.Goexit
// (t.FailNow in a test's stage) fails the run with forkjoin.ErrGoexit,
// ordered or not, and the pool goes on.
func TestStageGoexitFailsRun(t *testing.T) {
	pool := forkjoin.New(forkjoin.WithParallelism(2))
	defer pool.Close()
	for _, unordered := range []bool{false, true} {
		var opts []pipeline.Option
		if unordered {
			opts = append(opts, pipeline.WithUnordered())
		}
		p := pipeline.Map(pipeline.From(count(1000)), pool, func(_ context.Context, _ *forkjoin.Worker, v int) (int, error) {
			if v == 17 {
				runtime.Goexit()
			}
			return v, nil
		}, opts...)
		var err error
		within(t, "Run", func() { err = pipeline.Run(context.Background(), p, func(int) error { return nil }) })
		require.ErrorIs(t, err, forkjoin.ErrGoexit)
		var pe *forkjoin.PanicError
		require.ErrorAs(t, err, &pe)
	}
	// The pool still runs tasks.
	require.NoError(t, pool.Execute(func(*forkjoin.Worker) {}))
}

// TestRunWaitsForStagesIgnoringCtx: when the sink fails (or panics), Run
// returns (or re-raises) only after every stage call it started has
// returned, even calls that ignore the context and take a while.
func TestRunWaitsForStagesIgnoringCtx(t *testing.T) {
	pool := forkjoin.New(forkjoin.WithParallelism(2))
	defer pool.Close()
	errSink := errors.New("sink")
	for _, how := range []string{"error", "panic"} {
		var started, ended atomic.Int64
		slow := func(_ context.Context, _ *forkjoin.Worker, v int) (int, error) {
			started.Add(1)
			defer ended.Add(1)
			if v > 0 {
				time.Sleep(20 * time.Millisecond) // deaf to ctx
			}
			return v, nil
		}
		p := pipeline.Map(pipeline.Map(pipeline.From(count(100)), pool, slow, pipeline.WithLimit(4)), pool, slow, pipeline.WithLimit(3))
		var err error
		var recovered any
		within(t, "Run", func() {
			defer func() { recovered = recover() }()
			err = pipeline.Run(context.Background(), p, func(int) error {
				if how == "panic" {
					panic(errSink)
				}
				return errSink
			})
		})
		require.Equal(t, started.Load(), ended.Load(), "%s: a stage call still ran after Run returned", how)
		if how == "panic" {
			require.Equal(t, errSink, recovered)
		} else {
			require.ErrorIs(t, err, errSink)
		}
	}
}
