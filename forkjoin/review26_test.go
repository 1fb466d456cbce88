package forkjoin_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/stretchr/testify/require"
)

// TestRev26GetOfRootFromNestedComputationAfterCancel: a task of a
// SubmitContext's computation calls InvokeContext inline (a nested
// computation on the same worker) whose fn waits for the root's Future
// (Get or Join). Once the root's ctx is canceled, the root's settle waits
// for the outer task, which waits in InvokeContext for fn, which waits for
// the root's completion. The same with the InvokeContext on another pool
// (foreign), whose computation's task waits for the root.
func TestRev26GetOfRootFromNestedComputationAfterCancel(t *testing.T) {
	for _, tc := range []struct {
		wait    string
		foreign bool
	}{{"join", false}, {"get", false}, {"join", true}, {"get", true}} {
		wait := tc.wait
		t.Run(fmt.Sprintf("%s/foreign=%v", wait, tc.foreign), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxBlocked(8))
			defer closePool(t, p)
			inner := p
			if tc.foreign {
				inner = forkjoin.New(forkjoin.WithParallelism(1))
				defer closePool(t, inner)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var rf atomic.Pointer[forkjoin.Future[int]]
			var started atomic.Int32
			ready := make(chan struct{})
			f := forkjoin.SubmitContext(ctx, p, func(w *forkjoin.Worker) int {
				<-ready
				forkjoin.Fork(w, func(w *forkjoin.Worker) int {
					v, _ := forkjoin.InvokeContext(w.Context(), inner, func(w *forkjoin.Worker) int {
						started.Store(1)
						if wait == "join" {
							return rf.Load().Join(w)
						}
						v, _ := rf.Load().Get(context.Background())
						return v
					})
					return v
				})
				forkjoin.Block(w, func() {
					for started.Load() == 0 {
						time.Sleep(100 * time.Microsecond)
					}
					time.Sleep(time.Millisecond)
				})
				cancel()
				return 7
			})
			rf.Store(f)
			close(ready)
			var err error
			within(t, "Get", func() { _, err = f.Get(context.Background()) })
			require.ErrorIs(t, err, context.Canceled)
		})
	}
}
