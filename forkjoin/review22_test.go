package forkjoin_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// Review rev22: adversarial tests of a canceled computation's settle.

// lateAfterFuncCtx is a context whose AfterFunc (which context.AfterFunc
// uses when the context has one) runs its functions only when release is
// called: the delay the runtime may put between a cancel and the goroutine
// context.AfterFunc starts, made deterministic. ctx.Err() is non-nil from
// the cancel on, as for any context.
type lateAfterFuncCtx struct {
	context.Context
	mu      sync.Mutex
	pending []func()
}

func (c *lateAfterFuncCtx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, f)
	return func() bool { return false }
}

func (c *lateAfterFuncCtx) release() {
	c.mu.Lock()
	fs := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, f := range fs {
		go f()
	}
}

// A root that forks a task, has its context canceled and returns without
// joining it: the fork, still queued on the root's worker when the call
// returns, starts after the cancellation and must be skipped, however late
// the context's AfterFunc runs. On main the skip relied on
// computation.canceled alone, which the AfterFunc sets asynchronously:
// the fork ran after InvokeContext had returned ctx.Err().
func TestRev22ForkStartedAfterCanceledRootIsSkipped(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	for _, late := range []bool{false, true} {
		for range 50 {
			base, cancel := context.WithCancel(context.Background())
			var ctx context.Context = base
			var lctx *lateAfterFuncCtx
			if late {
				lctx = &lateAfterFuncCtx{Context: base}
				ctx = lctx
			}
			var ran atomic.Bool
			var err error
			within(t, "InvokeContext", func() {
				_, err = forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
					forkjoin.Fork(w, func(*forkjoin.Worker) int { ran.Store(true); return 1 })
					cancel()
					return 0
				})
				// The fork is on the only worker's deque, run or skipped
				// before this later submission.
				forkjoin.Invoke(p, func(*forkjoin.Worker) int { return 0 })
			})
			require.ErrorIs(t, err, context.Canceled)
			require.False(t, ran.Load(), "late=%v: a fork started after the cancellation ran after the call returned", late)
			if lctx != nil {
				lctx.release()
			}
		}
	}
}
