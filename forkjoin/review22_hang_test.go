package forkjoin_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// A fork that joins its own root's Future (a SubmitContext's), the root
// returning without joining the fork. Canceled, the root's settle waits
// for the fork, which waited, in Future.joinOther, for the root's
// completion, which comes only after the settle: it passed on 00836d8
// (before rev21's settle) and hung on 2fcfc74. The fork now waits for the
// computation's ended latch, which the settle sets, and unwinds (its Join
// would re-panic with ctx.Err() anyway). Not canceled, the fork's Join
// returns the root's result, as before.
//
// The same with Get (wait=get) in place of Join: the fork's Get waited on
// the root's latch, which only the settle's end sets, and hung on de64c83.
// A Get on a worker running a task of the root's own computation now waits
// for ended as Join does, and unwinds the same way once canceled.
func TestRev22ForkJoiningItsRootAfterCancel(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxBlocked(8))
	defer closePool(t, p)
	for _, wait := range []string{"join", "get"} {
		for _, canceled := range []bool{true, false} {
			for range 5 {
				ctx, cancel := context.WithCancel(context.Background())
				var rf atomic.Pointer[forkjoin.Future[int]]
				var started, joined atomic.Int32
				var got atomic.Int64
				ready := make(chan struct{})
				f := forkjoin.SubmitContext(ctx, p, func(w *forkjoin.Worker) int {
					<-ready
					forkjoin.Fork(w, func(w *forkjoin.Worker) int {
						started.Store(1)
						defer func() {
							if recover() == nil {
								joined.Store(1)
							}
						}()
						if wait == "join" {
							got.Store(int64(rf.Load().Join(w)))
							return 0
						}
						v, err := rf.Load().Get(context.Background())
						if err != nil {
							return 0 // counted as joined below: a canceled fork must unwind, as at a fork
						}
						got.Store(int64(v))
						return 0
					})
					forkjoin.Block(w, func() {
						for started.Load() == 0 {
							time.Sleep(100 * time.Microsecond)
						}
						time.Sleep(time.Millisecond) // the fork is waiting in its Join by now, most likely
					})
					if canceled {
						cancel()
					}
					return 7
				})
				rf.Store(f)
				close(ready)
				var v int
				var err error
				within(t, "Get", func() { v, err = f.Get(context.Background()) })
				if canceled {
					require.ErrorIs(t, err, context.Canceled)
					require.Zero(t, joined.Load(), "the fork's Join of its canceled root returned")
				} else {
					require.NoError(t, err)
					require.Equal(t, 7, v)
					waitUntil(t, "the fork's Join", func() bool { return joined.Load() == 1 })
					require.Equal(t, int64(7), got.Load())
				}
				cancel()
			}
		}
	}
}
