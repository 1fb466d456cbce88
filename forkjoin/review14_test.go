package forkjoin_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestGetOfOwnForkInsideTaskPublishes: Future.Get called inside a task
// blocks the worker without helping (its doc), so a task it waits for must
// be one that another worker can take. On 2 workers the task forks A
// (published: the deque starts empty, or the other worker has asked), then
// X (private: A is public), waits until the other worker has taken A and
// asked for more (it asks as it takes the last public element), and then
// calls X.Get. Only the other worker can run X, and it can see X only if
// Get publishes the waiting worker's private tasks first, as Block does.
// A round in which the other worker asked before X was forked (X then
// published and stolen) proves nothing and is run again. On main X stayed
// private behind the blocked worker and Get returned only at its deadline
// (3 runs of 4 failed; one drew only such rounds).
func TestGetOfOwnForkInsideTaskPublishes(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	waitAsleep(t, p, 2)
	var scenario, failed atomic.Bool
	var got int
	var err error
	within(t, "Get of a private fork", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			for range 50 {
				var aStarted, xStarted atomic.Bool
				a := forkjoin.Fork(w, func(*forkjoin.Worker) int { aStarted.Store(true); return 1 })
				x := forkjoin.Fork(w, func(*forkjoin.Worker) int { xStarted.Store(true); return 42 })
				if !holdUntil(aStarted.Load) || !holdUntil(func() bool { return forkjoin.Asked(w) }) {
					failed.Store(true)
					return 0
				}
				if forkjoin.PublicLen(w) != 0 || xStarted.Load() {
					x.Join(w) // X was published: the round proves nothing
					a.Join(w)
					continue
				}
				scenario.Store(true)
				ctx, cancel := context.WithTimeout(context.Background(), hangTimeout/2)
				defer cancel()
				got, err = x.Get(ctx)
				a.Join(w)
				return 0
			}
			return 0
		})
	})
	require.False(t, failed.Load(), "the other worker never took A")
	require.True(t, scenario.Load(), "X was published before Get in every round: the scenario did not happen")
	require.NoError(t, err, "Get of a fork kept private by its blocked owner")
	require.Equal(t, 42, got)
}

// TestFIFOPollWakesForPublishedTasks: in async (FIFO) mode the scheduling
// loop takes its own tasks with Deque.Poll, which first publishes the
// private part. Published tasks need a wake-up when a worker sleeps
// (internal/park: the producer publishes, then wakes). On 2 FIFO workers a
// submitted task R forks A (published: the deque starts empty), B and C
// (private: A is public), holds until the other worker has run A, asked
// for more and gone to sleep, and returns. The loop then polls: it
// publishes B and C and runs B, the oldest, which holds until C has
// started: only the sleeping worker can start C. A round in which B or C
// was published before R returned (the other worker asked in between)
// proves nothing and is run again on a fresh pool. On main Poll woke
// nobody and B's hold ran out at the hang limit.
func TestFIFOPollWakesForPublishedTasks(t *testing.T) {
	for round := range 10 {
		if fifoPollRound(t) {
			return
		}
		t.Logf("round %d: B or C was published before R returned; again", round)
	}
	t.Fatal("B or C was published before R returned in every round: the scenario did not happen")
}

// fifoPollRound is one round of TestFIFOPollWakesForPublishedTasks; it
// reports whether the scenario happened.
func fifoPollRound(t *testing.T) bool {
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMode(forkjoin.FIFO))
	defer closePool(t, p)
	waitAsleep(t, p, 2)
	var aDone, bStarted, cStarted, scenario, failed atomic.Bool
	done := make(chan struct{})
	require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
		forkjoin.Fork(w, func(*forkjoin.Worker) int { aDone.Store(true); return 0 })
		forkjoin.Fork(w, func(*forkjoin.Worker) int {
			bStarted.Store(true)
			failed.Store(!holdUntil(cStarted.Load))
			close(done)
			return 0
		})
		forkjoin.Fork(w, func(*forkjoin.Worker) int { cStarted.Store(true); return 0 })
		if !holdUntil(aDone.Load) || !holdUntil(func() bool { return forkjoin.Asked(w) && forkjoin.SleepersOf(p) == 1 }) {
			failed.Store(true)
		}
		scenario.Store(forkjoin.PublicLen(w) == 0 && !bStarted.Load() && !cStarted.Load())
	}))
	select { // B's hold is bounded by the hang limit: this only guards against B never running
	case <-done:
	case <-time.After(2 * hangTimeout):
		t.Fatalf("B did not run; stats: %v", p.Stats())
	}
	if !scenario.Load() {
		return false
	}
	require.False(t, failed.Load(), "a task published by Poll stayed in the deque while the other worker slept")
	return true
}

// TestUnpushedScopeTaskRetiredBeforeJoinRunsB: batched retirement
// (scope.go) against a Join's unpush, which runs the tasks above b on its
// way to b. On 2 workers a task R forks Y, which the other worker takes:
// Y's RunScope body publishes its scope s and holds until b has started
// (so that it steals nothing from R's worker meanwhile).
// R then joins (a, b): a spawns T into s (a private node above b), so the
// unpush runs T inline before it reaches b, and b blocks (Block) until Y's
// RunScope has returned. T's retirement must reach s's count before b
// runs: b is not a task of s. On main it stayed in R's worker's batch
// (unpushAfter found b and returned without flushing), s never finished,
// and b gave up at the hang limit.
func TestUnpushedScopeTaskRetiredBeforeJoinRunsB(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	waitAsleep(t, p, 2)
	var sp atomic.Pointer[forkjoin.Scope]
	var bStarted, tRanOnR, bRanOnR, failed atomic.Bool
	scopeDone := make(chan struct{})
	within(t, "a join whose unpush ran a scope's task, then a block on that scope", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			rIndex := w.Index()
			fY := forkjoin.Fork(w, func(w *forkjoin.Worker) int {
				forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
					sp.Store(s)
					failed.CompareAndSwap(false, !holdUntil(bStarted.Load))
				})
				close(scopeDone)
				return 0
			})
			if !holdUntil(func() bool { return sp.Load() != nil }) {
				failed.Store(true)
				return 0
			}
			forkjoin.Join(w, func(w *forkjoin.Worker) int {
				sp.Load().Spawn(w, func(w *forkjoin.Worker) {
					tRanOnR.Store(w.Index() == rIndex)
				})
				return 0
			}, func(w *forkjoin.Worker) int {
				bRanOnR.Store(w.Index() == rIndex)
				bStarted.Store(true)
				forkjoin.Block(w, func() {
					select {
					case <-scopeDone:
					case <-time.After(hangTimeout / 2): // within the hang limit of the whole test
						failed.Store(true)
					}
				})
				return 0
			})
			fY.Join(w)
			return 0
		})
	})
	require.True(t, tRanOnR.Load() && bRanOnR.Load(), "T or b ran on another worker than R's: the scenario did not happen")
	require.False(t, failed.Load(), "RunScope did not return while the worker that ran its task blocked in a Join's b")
}
