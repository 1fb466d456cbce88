package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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

// TestSourcePanicAfterStopFailsNothingElse: a source sequence that panics
// after its yield returned false (a deferred cleanup that panics, or an
// iterator that goes on calling yield, which the runtime turns into a
// panic) while the run stops for another reason must not crash the
// program: Run returns the error that stopped it, or the panic as a
// *forkjoin.PanicError if the context was canceled first. On main the source
// goroutine had already marked itself finished when the loop body
// returned, so the panic went unrecovered on that goroutine and killed
// the process. The runs happen in a child process so that a crash is a
// failure of this test and not of the whole binary.
func TestSourcePanicAfterStopFailsNothingElse(t *testing.T) {
	if os.Getenv("PIPELINE_SOURCE_PANIC_CHILD") == "1" {
		sourcePanicAfterStopChild()
		return
	}
	for _, how := range []string{"cleanup", "yieldAgain"} {
		var out []byte
		var err error
		within(t, "child process", func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSourcePanicAfterStopFailsNothingElse$", "-test.v")
			cmd.Env = append(os.Environ(), "PIPELINE_SOURCE_PANIC_CHILD=1", "PIPELINE_SOURCE_PANIC_HOW="+how)
			out, err = cmd.CombinedOutput()
		})
		require.NoError(t, err, "%s: the child process failed:\n%s", how, out)
		require.Contains(t, string(out), "CHILD-OK", how)
	}
}

var errStopRun = errors.New("sink stops the run")

func sourcePanicAfterStopChild() {
	how := os.Getenv("PIPELINE_SOURCE_PANIC_HOW")
	seq := func(yield func(int) bool) {
		if how == "cleanup" {
			defer func() { panic("cleanup after stop") }()
		}
		for i := 0; ; i++ {
			if !yield(i) && how == "cleanup" {
				return
			}
			// yieldAgain: ignores false and yields again, which the
			// runtime reports as a panic.
		}
	}
	for _, cancelFirst := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		err := pipeline.Run(ctx, pipeline.From(seq), func(v int) error {
			if v == 3 {
				if cancelFirst {
					cancel()
					return nil
				}
				return errStopRun
			}
			return nil
		})
		cancel()
		// The sink's error came first; with the context canceled first,
		// the panic is the only error (as From's doc says).
		var pe *forkjoin.PanicError
		if (!cancelFirst && !errors.Is(err, errStopRun)) || (cancelFirst && !errors.As(err, &pe)) {
			fmt.Printf("CHILD-FAIL: %s cancelFirst=%v: Run returned %v\n", how, cancelFirst, err)
			os.Exit(2)
		}
		fmt.Printf("%s cancelFirst=%v: %v\n", how, cancelFirst, err)
	}
	fmt.Println("CHILD-OK")
}
