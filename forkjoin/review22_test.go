package forkjoin_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// Review rev22: adversarial tests of a canceled computation's settle.

// A root that forks a task, has its context canceled and returns without
// joining it: the fork, still queued on the root's worker when the call
// returns, starts after the cancellation and must be skipped, however late
// the context's AfterFunc runs (late: lateCtx, whose AfterFunc runs only
// when released; the lateAfterFuncCtx this test used before embedded a
// cancelCtx, which context.AfterFunc registers with directly, so that it
// delayed nothing: review rev35). On main the skip relied on
// computation.canceled alone, which the AfterFunc sets asynchronously:
// the fork ran after InvokeContext had returned ctx.Err().
func TestRev22ForkStartedAfterCanceledRootIsSkipped(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	for _, late := range []bool{false, true} {
		for range 50 {
			base, cancelBase := context.WithCancel(context.Background())
			var ctx context.Context = base
			cancel := cancelBase
			var lctx *lateCtx // review35_test.go
			if late {
				lctx = newLateCtx()
				ctx, cancel = lctx, lctx.cancel
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
			cancelBase()
			if lctx != nil {
				lctx.release()
			}
		}
	}
}

// A fork of a computation joined, by its owner, from a task of another
// computation runs inline on the owner (taskCell.runInline), not through
// Worker.run. Started before the cancel, it still runs when the canceled
// root settles: the root must wait for it, as for a stolen fork. On main
// runInline did not count it in computation.running, and SubmitContext's
// Future completed while the fork ran.
//
// The arrangement: D, a plain submitted task, waits in waitForeign (a
// Join of a Future of another pool), where its worker runs A, a fork of
// the root R; A forks F, hands F's Future over and returns; D then joins
// F, which is on top of its worker's deque: runInline. R spins (it must
// not publish or steal) until F runs, cancels, and unwinds at a fork.
func TestRev22ForkJoinedInlineFromAnotherComputationIsWaitedFor(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxBlocked(8))
	defer closePool(t, p)
	p2 := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p2)
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		var fRunning, fStarted, rStarted, dWaiting atomic.Int32
		var shared atomic.Pointer[forkjoin.Future[int]]
		var otherDone atomic.Pointer[forkjoin.Future[int]]
		release := make(chan struct{})
		other := forkjoin.Submit(p2, func(*forkjoin.Worker) int { <-release; return 0 })
		otherDone.Store(other)
		rootFn := func(w *forkjoin.Worker) int {
			rStarted.Store(1)
			for dWaiting.Load() == 0 {
				runtime.Gosched()
			}
			a := forkjoin.Fork(w, func(w *forkjoin.Worker) int {
				f := forkjoin.Fork(w, func(w *forkjoin.Worker) int {
					fRunning.Add(1)
					defer fRunning.Add(-1)
					fStarted.Store(1)
					<-ctx.Done()
					time.Sleep(30 * time.Millisecond)
					return 1
				})
				shared.Store(f)
				close(release)
				for !otherDone.Load().Done() {
					runtime.Gosched()
				}
				return 0
			})
			_ = a // never joined
			for fStarted.Load() == 0 {
				runtime.Gosched()
			}
			cancel()
			forkjoin.Fork(w, func(*forkjoin.Worker) int { return 2 }) // panics: canceled
			return 0
		}
		var dErr error
		var dWG sync.WaitGroup
		dWG.Add(1)
		var err error
		within(t, "arrangement", func() {
			rf := forkjoin.SubmitContext(ctx, p, rootFn)
			for rStarted.Load() == 0 {
				time.Sleep(100 * time.Microsecond)
			}
			go func() {
				defer dWG.Done()
				_, dErr = forkjoin.Submit(p, func(w *forkjoin.Worker) int {
					dWaiting.Store(1)
					other.Join(w) // waitForeign: runs A
					f := shared.Load()
					if f == nil {
						return -1
					}
					defer func() { _ = recover() }() // F's outcome is not the point
					return f.Join(w)
				}).Get(context.Background())
			}()
			_, err = rf.Get(context.Background())
		})
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, fRunning.Load(), "a fork of the canceled computation still runs after its Future completed")
		within(t, "D", dWG.Wait)
		require.NoError(t, dErr)
	}
}
