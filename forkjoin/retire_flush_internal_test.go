package forkjoin

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// The flushes of batched retirement (scope.go), each forced on one worker
// so that the order of the tasks is fixed: each test fails when the flush
// it names is removed.

// pendingSeen waits, bounded, until s's count reaches zero and returns the
// count it saw last: the task calling it holds its worker meanwhile, so
// only a flush already made can bring the count down.
func pendingSeen(s *Scope) int64 {
	deadline := time.Now().Add(200 * time.Millisecond)
	for s.pending.Load() != 0 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	return s.pending.Load()
}

// TestRetiredFlushedBeforeOtherScopesTask: a task of scope s2 that starts
// on a worker holding a batch of s1 finds s1's count already down: it could
// be waiting for s1. On one worker, s2's body spawns T2 and then runs a
// scope s1 of three tasks; s1's wait runs them (their retirements go to
// the batch) and then T2, below them on the deque, which reads s1's count.
// It reads 0; with runSpawned's flush of another scope's batch removed it
// reads 3 (the mutation run on this commit's parent).
func TestRetiredFlushedBeforeOtherScopesTask(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	var seen int64 = -1
	testenv.Within(t, "nested scopes on one worker", func() {
		Invoke(p, func(w *Worker) int {
			var s1 *Scope
			RunScope(w, func(s2 *Scope, w *Worker) {
				s2.Spawn(w, func(*Worker) { seen = pendingSeen(s1) })
				RunScope(w, func(s *Scope, w *Worker) {
					s1 = s
					for range 3 {
						s.Spawn(w, func(*Worker) {})
					}
				})
			})
			return 0
		})
	})
	require.Equal(t, int64(0), seen, "s1's count when a task of s2 started after s1's tasks")
}

// TestRetiredFlushedBeforeBroadcastShare: a worker holding a batch of a
// scope flushes it before it runs a Broadcast's share, which may wait for
// that scope. On 2 workers, the body spawns two tasks and publishes them;
// the other worker takes one, T, and before T returns a Broadcast posts
// its share and the body returns. That worker then finds the share before
// anything else; its part waits until RunScope has returned, which needs
// T's retirement (and the other task, which the body's worker runs). With
// runShares' flush removed, T's retirement stays in the batch of a worker
// that waits in the share: RunScope does not return and the share gives
// up after its hang limit (the mutation run on this commit's parent).
func TestRetiredFlushedBeforeBroadcastShare(t *testing.T) {
	p := New(WithParallelism(2))
	defer p.Close()
	var tWorker atomic.Pointer[Worker]
	var bodyDone, scopeDone, gaveUp atomic.Bool
	broadcastDone := make(chan struct{})
	testenv.Within(t, "a share after a batch", func() {
		Invoke(p, func(w *Worker) int {
			RunScope(w, func(s *Scope, bw *Worker) {
				task := func(w *Worker) {
					if w == bw || !tWorker.CompareAndSwap(nil, w) {
						return
					}
					go func() {
						defer close(broadcastDone)
						Broadcast(p, func(w *Worker) {
							if w != tWorker.Load() {
								return
							}
							deadline := time.Now().Add(testenv.HangTimeout / 2) // a hang limit, not a speed bound
							for !scopeDone.Load() && time.Now().Before(deadline) {
								time.Sleep(time.Millisecond)
							}
							gaveUp.Store(!scopeDone.Load())
						})
					}()
					holdWhile(func() bool { return w.inbox.Load() == nil || !bodyDone.Load() })
				}
				s.Spawn(bw, task)
				s.Spawn(bw, task)
				bw.deque.Publish() // for the other worker, while this one holds
				holdWhile(func() bool { return tWorker.Load() == nil })
				bodyDone.Store(true)
			})
			scopeDone.Store(true)
			return 0
		})
		<-broadcastDone
	})
	require.NotNil(t, tWorker.Load(), "no task of the scope ran on the other worker")
	require.False(t, gaveUp.Load(), "RunScope did not return while the worker that ran T ran a Broadcast share")
}

// holdWhile yields while cond holds, up to testenv.HangTimeout.
func holdWhile(cond func() bool) {
	deadline := time.Now().Add(testenv.HangTimeout)
	for cond() && time.Now().Before(deadline) {
		runtime.Gosched()
	}
}
