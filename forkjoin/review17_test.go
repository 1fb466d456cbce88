package forkjoin

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/magpie-go/magpie/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlowHandlerCanCloseItsPool: the slow-task handler is given the pool,
// and a server's natural reaction to a stuck task is to shut the pool down
// from there. Close (and Shutdown once the work is done) waited for the
// watchdog to exit, and the watchdog was the caller: a hang, past any
// deadline given to Shutdown (review rev17).
func TestSlowHandlerCanCloseItsPool(t *testing.T) {
	for _, name := range []string{"Close", "Shutdown"} {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			var returned atomic.Bool
			var shutdownErr error
			handlerDone := make(chan struct{})
			p := New(WithParallelism(1), WithSlowTaskHandler(time.Millisecond, func(p *Pool, _ int, _ time.Duration) {
				defer close(handlerDone)
				close(release) // the task may finish: Close can drain
				if name == "Close" {
					p.Close()
				} else {
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					defer cancel()
					shutdownErr = p.Shutdown(ctx)
				}
				returned.Store(true)
			}))
			require.NoError(t, p.Execute(func(*Worker) { <-release }))
			testenv.Within(t, name+" from the slow-task handler", func() { <-handlerDone })
			assert.True(t, returned.Load())
			assert.NoError(t, shutdownErr)
			testenv.Within(t, "Close after the handler's", p.Close)
		})
	}
}

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
