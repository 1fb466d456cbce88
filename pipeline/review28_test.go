package pipeline_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/pipeline"
)

// TestSourceGoexitAfterStopFailsRun: a source sequence that calls
// runtime.Goexit after its yield returned false (a cleanup that calls
// t.FailNow, say) fails the run exactly as a panic there does
// (TestSourcePanicAfterStopFailsNothingElse): Run returns the error that
// stopped the run if one came first, and otherwise, the context canceled
// first, the Goexit as a *forkjoin.PanicError holding forkjoin.ErrGoexit,
// as From's documentation says. On main (ea2d076) the source goroutine
// took the Goexit for the normal return of a stopped sequence (both reach
// its deferred call with nothing to recover) and the Goexit was lost: Run
// returned context.Canceled.
func TestSourceGoexitAfterStopFailsRun(t *testing.T) {
	seq := func(yield func(int) bool) {
		for i := 0; ; i++ {
			if !yield(i) {
				runtime.Goexit() // a cleanup after the stop
			}
		}
	}
	for _, cancelFirst := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var err error
		within(t, "Run", func() {
			err = pipeline.Run(ctx, pipeline.From(seq), func(v int) error {
				if v == 3 {
					if cancelFirst {
						cancel()
						return nil
					}
					return errStopRun
				}
				return nil
			})
		})
		cancel()
		if !cancelFirst {
			require.ErrorIs(t, err, errStopRun, "the sink's error came first")
			continue
		}
		var pe *forkjoin.PanicError
		require.True(t, errors.As(err, &pe), "cancelFirst: Run returned %v, not the source's Goexit", err)
		require.ErrorIs(t, err, forkjoin.ErrGoexit)
	}
}

// TestSourceStoppedSequenceIsNoFailure is the other side of the rule
// above: a sequence that returns once its yield returned false, as it
// should, fails nothing, so a canceled run returns ctx.Err() and a sink
// error the sink's error. A check that the source and stages leave no
// goroutine behind is TestMain's (goleak).
func TestSourceStoppedSequenceIsNoFailure(t *testing.T) {
	for _, cancelFirst := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var err error
		within(t, "Run", func() {
			err = pipeline.Run(ctx, pipeline.From(count(1<<30)), func(v int) error {
				if v == 3 {
					if cancelFirst {
						cancel()
						return nil
					}
					return errStopRun
				}
				return nil
			})
		})
		cancel()
		if cancelFirst {
			require.ErrorIs(t, err, context.Canceled)
			var pe *forkjoin.PanicError
			require.False(t, errors.As(err, &pe), "a stopped sequence that returned is no failure: %v", err)
		} else {
			require.ErrorIs(t, err, errStopRun)
		}
	}
}

// TestNilArgumentMessages: every nil argument is refused where it is
// passed, with a message naming the function, before anything starts. On
// main (ea2d076) a nil *Pipe given to Map was accepted and surfaced later,
// inside Run, as a nil pointer dereference; given to Run it was one too.
func TestNilArgumentMessages(t *testing.T) {
	pool := forkjoin.New(forkjoin.WithParallelism(1))
	defer pool.Close()
	id := func(_ context.Context, _ *forkjoin.Worker, v int) (int, error) { return v, nil }
	src := pipeline.From(count(3))
	cases := map[string]func(){
		"pipeline: From called with a nil iter.Seq":    func() { pipeline.From[int](nil) },
		"pipeline: FromChan called with a nil channel": func() { pipeline.FromChan[int](nil) },
		"pipeline: Map called with a nil *Pipe":        func() { pipeline.Map(nil, pool, id) },
		"pipeline: Map called with a nil function": func() {
			pipeline.Map[int, int](src, pool, nil)
		},
		"pipeline: Run called with a nil *Pipe": func() {
			_ = pipeline.Run(context.Background(), (*pipeline.Pipe[int])(nil), func(int) error { return nil })
		},
		"pipeline: Run called with a nil sink": func() { _ = pipeline.Run(context.Background(), src, nil) },
	}
	for want, call := range cases {
		within(t, want, func() { require.PanicsWithValue(t, want, call) })
	}
}
