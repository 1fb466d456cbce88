package forkjoin

// Review rev34 of batched takes (takebatch.go, injector.take): wake-ups
// and order when a take serves a ring other than the one it was woken
// for. Internal: a task fills its own worker's ring, under the take lock,
// as that worker's take would.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// ringTasks returns n exec nodes running task, counted in flight as
// accepted submissions, at positions first, first+1, ... of level l, as a
// take puts them in a ring.
func ringTasks(p *Pool, l int, first uint64, n int, task func(*Worker)) []*node {
	xs := make([]*node, n)
	for i := range xs {
		p.accepted.Add(1)
		e := &execNode{pool: p}
		e.job = e
		e.root, e.solo = true, true
		e.act, e.group = funcAction(task), groupOf(first+uint64(i), l)
		xs[i] = &e.node
	}
	return xs
}

// fillOwnRing puts xs, at level l, in the ring of w, the worker running
// the caller (its owner), as a take of w fills it, and wakes one idle
// sleeper as that take's "more" does (Pool.pollSubmission).
func fillOwnRing(w *Worker, l int, xs []*node) {
	q := w.pool.inj
	q.lockTake()
	w.fillBatch(l, xs)
	q.unlockTake()
	if w.sleepers.Any() {
		w.sleepers.WakeIdle()
	}
}

// TestRev34LastStealPassesWakeUpOn: four workers asleep; a task on worker
// A fills A's ring with three tasks and blocks, waking one sleeper, S1, as
// a fill's take does. S1 takes the older half of A's ring (runs x1, keeps
// x2) and wakes S2, since its ring holds a task. S2 takes the last task of
// one ring, A's (x3) or S1's (x2), and reported more work only if that
// victim's ring still held some: the other ring's task, whose owner's
// task blocks, waited while the fourth worker slept. Every task waits
// until all four have started, so A, S1 and S2 waited for good.
func TestRev34LastStealPassesWakeUpOn(t *testing.T) {
	for range 5 { // S2's choice of ring is random on some paths: both ways
		func() {
			p := New(WithParallelism(4))
			defer p.Close()
			giveUp := make(chan struct{})
			defer close(giveUp)
			task, all := barrierTasks(4, giveUp)
			allAsleep(t, p, 4, "the workers asleep")
			nl := Normal.level()
			require.NoError(t, p.Execute(func(w *Worker) {
				fillOwnRing(w, nl, ringTasks(p, nl, 1<<40, 3, task))
				task(w)
			}))
			testenv.Within(t, "4 tasks started on 4 workers", func() { <-all })
		}()
	}
}
