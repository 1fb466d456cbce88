package forkjoin

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/magpie-go/magpie/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShutdownDeadlineBoundsWatchdogWait: Shutdown gives up when its
// context is done, whatever it waits for; a slow-task handler still
// running (blocked, say, on a report to a remote service) held Shutdown
// past its deadline after the workers had exited (review rev17).
func TestShutdownDeadlineBoundsWatchdogWait(t *testing.T) {
	release, inHandler, hold := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(hold)
	p := New(WithParallelism(1), WithSlowTaskHandler(time.Millisecond, func(*Pool, int, time.Duration) {
		close(inHandler)
		<-hold
	}))
	require.NoError(t, p.Execute(func(*Worker) { <-release }))
	<-inHandler
	close(release)
	var err error
	testenv.Within(t, "Shutdown with a deadline while the slow-task handler blocks", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err = p.Shutdown(ctx)
	})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestBlockingForeignPanicIsTheTasks: with no compensating worker free,
// Blocking runs fn on a goroutine of its own and raises its panic again
// on the worker. A runtime error in fn (a user's nil map) and a
// runtime.Goexit in fn (t.FailNow in a test's blocking wait) were raised
// again from blockForeign's own frame, the Goexit as panic(nil), which Go
// turns into a *runtime.PanicNilError: a runtime error raised in forkjoin's
// code, which CapturePanic takes for a bug in magpie and ends the program
// with (review rev17). Each now reaches the task as a *PanicError: the
// runtime error with the stack of fn, the Goexit as ErrGoexit.
func TestBlockingForeignPanicIsTheTasks(t *testing.T) {
	p := New(WithParallelism(1), WithMaxBlocked(-1)) // no compensating worker: fn runs off the worker
	defer p.Close()
	var m map[int]int
	cases := map[string]struct {
		fn    func()
		check func(t *testing.T, pe *PanicError)
	}{
		"runtime error": {func() { m[1] = 1 }, func(t *testing.T, pe *PanicError) {
			_, ok := pe.Value.(runtime.Error)
			assert.True(t, ok, "%T", pe.Value)
			assert.Contains(t, string(pe.Stack), "TestBlockingForeignPanicIsTheTasks", "the stack of fn")
		}},
		"Goexit": {runtime.Goexit, func(t *testing.T, pe *PanicError) {
			assert.ErrorIs(t, pe, ErrGoexit)
		}},
		"panic": {func() { panic("boom") }, func(t *testing.T, pe *PanicError) {
			assert.Equal(t, "boom", pe.Value)
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var err error
			testenv.Within(t, "Blocking off the worker", func() {
				_, err = InvokeContext(context.Background(), p, func(*Worker) int {
					Blocking(c.fn)
					return 0
				})
			})
			var pe *PanicError
			require.ErrorAs(t, err, &pe)
			c.check(t, pe)
		})
	}
}

// TestSlowHandlerGoexitKeepsWatchdog: a slow-task handler that calls
// runtime.Goexit (t.FailNow in a test's handler) ended the watchdog
// goroutine, and no stuck task was reported again, silently; the watchdog
// now carries on in a fresh goroutine, as a worker does after a task's
// Goexit, and Close still waits for it (goleak) (review rev17).
func TestSlowHandlerGoexitKeepsWatchdog(t *testing.T) {
	reports := make(chan int, 8)
	var calls atomic.Int32
	p := New(WithParallelism(1), WithSlowTaskHandler(time.Millisecond, func(*Pool, int, time.Duration) {
		reports <- int(calls.Add(1))
		runtime.Goexit()
	}))
	for i := 1; i <= 3; i++ {
		release := make(chan struct{})
		require.NoError(t, p.Execute(func(*Worker) { <-release }))
		testenv.Within(t, "a report of a stuck task after a handler's Goexit", func() {
			assert.Equal(t, i, <-reports)
		})
		close(release)
	}
	testenv.Within(t, "Close", p.Close)
}
