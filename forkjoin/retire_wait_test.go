package forkjoin_test

// Batched retirement (scope.go) against the code that runs after a wait:
// a worker that helped with tasks of a scope while it waited for something
// else goes back to a task that is not part of that scope, and that task
// may block until the scope's RunScope returns. The batch it picked up
// while helping must not go with it.

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestHelpedScopeRetiredBeforeJoinReturns: on 3 workers, a task R forks Q
// and Y (RunScope of a scope s whose body spawns one task T), each taken
// by another worker, then joins Q. T can only be run by R's worker, while
// it helps in that join; T lasts until Q has completed, so the join
// returns right after T. R then blocks (Block) until Y's RunScope has
// returned. T's retirement must reach s's count before R blocks: on
// 669f692 it stayed in R's worker's batch (waitUntil returned without
// flushing), s never finished and R gave up after hangTimeout.
func TestHelpedScopeRetiredBeforeJoinReturns(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(3))
	defer closePool(t, p)
	waitAsleep(t, p, 3)
	var yStarted, qStarted, tStarted atomic.Bool
	var tRanOnR, failed atomic.Bool
	var fQ atomic.Pointer[forkjoin.Future[int]]
	scopeDone := make(chan struct{})
	within(t, "a join that helped a scope, then a block on that scope", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			rIndex := w.Index()
			fQ.Store(forkjoin.Fork(w, func(*forkjoin.Worker) int {
				qStarted.Store(true)
				failed.CompareAndSwap(false, !holdUntil(tStarted.Load))
				return 0
			}))
			if !holdUntil(qStarted.Load) {
				failed.Store(true)
			}
			fY := forkjoin.Fork(w, func(w *forkjoin.Worker) int {
				yStarted.Store(true)
				forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
					s.Spawn(w, func(w *forkjoin.Worker) {
						tStarted.Store(true)
						tRanOnR.Store(w.Index() == rIndex)
						// Last until Q has completed: the join then
						// returns as soon as T does.
						failed.CompareAndSwap(false, !holdUntil(func() bool {
							f := fQ.Load()
							return f != nil && f.Done()
						}))
					})
					// Only R's worker is free to take T (Q's holds): the
					// body waits for that, neither helping nor joining.
					failed.CompareAndSwap(false, !holdUntil(tStarted.Load))
				})
				close(scopeDone)
				return 0
			})
			if !holdUntil(yStarted.Load) {
				failed.Store(true)
			}
			fQ.Load().Join(w) // helps: runs T
			forkjoin.Block(w, func() {
				select {
				case <-scopeDone:
				case <-time.After(hangTimeout):
					failed.Store(true)
				}
			})
			fY.Join(w)
			return 0
		})
	})
	require.True(t, tRanOnR.Load(), "T ran on another worker than R's: the scenario did not happen")
	require.False(t, failed.Load(), "RunScope did not return while the worker that ran its task blocked after a join")
}
