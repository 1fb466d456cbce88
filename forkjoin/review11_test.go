package forkjoin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// Review rev11: attacks on compensating workers, the submission queue, the
// panic handler path and Stats. Each test here failed on 301e773 (see its
// comment) or records an attack that held.

// TestOtherPoolsHandlerCanCloseReporterPool: a panic that AllOf drops is
// reported to the handler of the pool it came from (b) by the goroutine
// that completes AllOf's last Future, here a worker of pool a, which waits
// for b's handler. A Close of a from that handler must then return at once,
// as a Close from a's own handler does (TestPanicHandlerCanClose): it
// waited for a's workers to exit, among them the one waiting for the
// handler, and both hung on 301e773.
func TestOtherPoolsHandlerCanCloseReporterPool(t *testing.T) {
	a := forkjoin.New(forkjoin.WithParallelism(1))
	closedFromHandler := make(chan struct{})
	b := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {
		a.Close()
		close(closedFromHandler)
	}))
	defer closePool(t, b)
	defer closePool(t, a)
	fb1 := forkjoin.Submit(b, func(*forkjoin.Worker) int { panic("delivered") })
	fb2 := forkjoin.Submit(b, func(*forkjoin.Worker) int { panic("dropped") })
	waitUntil(t, "b's tasks done", func() bool { return fb1.Done() && fb2.Done() })
	release := make(chan struct{})
	fa := forkjoin.Submit(a, func(*forkjoin.Worker) int { <-release; return 1 })
	all := forkjoin.AllOf(fb1, fb2, fa) // fa arrives last, on a's worker
	close(release)
	within(t, "b's handler closing a, reported from a's worker", func() { <-closedFromHandler })
	within(t, "AllOf", func() {
		_, err := all.Get(context.Background())
		require.Error(t, err)
	})
}
