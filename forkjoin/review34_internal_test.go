package forkjoin

// Review rev34 of batched takes (takebatch.go, injector.take): wake-ups
// and order when a take serves a ring other than the one it was woken
// for. Internal: a task fills its own worker's ring, under the take lock,
// as that worker's take would.

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

// TestRev34RingsBoundedStress: three workers with a take batch of 4 and
// aging 2 (so that takes choose the ring with the oldest front and steal
// one task at a time into a ring that holds tasks) drain bursts at random
// priorities from two submitters, some tasks blocking unmanaged (their
// owner's ring waits) and some in Block (compensating workers take one at
// a time). Each task, under the take lock, checks what the order bound K
// = (P-1)·b rests on: every ring holds at most b-1 tasks, all rings hold
// one level, and the ring of the worker starting a task holds no earlier
// task of its level (review rev34; holds on 12c1c49; fails with
// batchWanted's clamp to b removed; the levels' check is not reached by
// removing ringsHoldOther, which oldestBatch's look under the lock makes
// redundant: a ring of another level puts that level in the candidates).
func TestRev34RingsBoundedStress(t *testing.T) {
	const b, rounds = 4, 150
	p := New(WithParallelism(3), WithTakeBatch(b), WithPriorityAging(2))
	defer p.Close()
	q := p.inj
	var (
		checked, inRings, ownLater atomic.Int64
		done                       sync.WaitGroup
	)
	check := func(w *Worker) {
		mine := w.group // the task's: run sets it to its node's (groupOf)
		q.lockTake()
		defer q.unlockTake()
		level := -1
		for _, v := range p.workers[:p.parallelism] {
			n := v.subs.Len()
			if !assert.LessOrEqual(t, n, b-1, "a ring's tasks") || n == 0 {
				continue
			}
			l := int(v.subsLevel.Load())
			if level >= 0 {
				assert.Equal(t, level, l, "the rings' levels")
			}
			level = l
			inRings.Add(1)
		}
		if !w.spare && mine%NumPriorities == uint64(w.subsLevel.Load()) {
			if x := w.subs.Peek(); x != nil {
				assert.Greater(t, x.group, mine, "w's ring holds an earlier task of the level it starts")
				ownLater.Add(1)
			}
		}
		checked.Add(1)
	}
	prios := []Priority{Urgent, Normal, Background}
	testenv.Concurrently(t, "the submitters", 2, func(g int) {
		rng := rand.New(rand.NewPCG(uint64(g), 34))
		for i := range rounds {
			prio := prios[rng.IntN(3)]
			for j := range 24 {
				done.Add(1)
				kind := (i + j) % 9
				assert.NoError(t, p.ExecutePriority(prio, func(w *Worker) {
					defer done.Done()
					check(w)
					switch kind {
					case 2:
						time.Sleep(50 * time.Microsecond) // unmanaged: w's ring waits
					case 5:
						Block(w, func() { time.Sleep(50 * time.Microsecond) })
					}
				}))
			}
			if i%10 == 0 {
				time.Sleep(200 * time.Microsecond) // let the rings drain at times
			}
		}
	})
	testenv.Within(t, "every task", done.Wait)
	t.Logf("%d tasks checked; %d rings seen holding tasks, %d own rings of the task's level", checked.Load(), inRings.Load(), ownLater.Load())
}
