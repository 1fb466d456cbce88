package forkjoin_test

// Review rev24: a submission a Join ran ahead of its turn, still in the
// queue behind an earlier one, must not count as a take when it reaches
// the front (injector.go, peek).

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestRev24ClaimedSlotNotTimed: a Submit that a task joins (and so runs
// at once) while it waits in the queue behind an earlier submission
// leaves the queue only when the takes reach it; its slot was then timed
// as if the task had waited until that take. Here the only timed
// submission (the 8th of its level) is run by the join within
// microseconds, while the take of its slot comes after the joining task
// has held the only worker for 20ms: Stats must not count it as a queue
// wait (no timed task waited), as it does not when the slot is at the
// front at the join (injector.dropClaimed).
func TestRev24ClaimedSlotNotTimed(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	var done sync.WaitGroup
	done.Add(1)
	// Slot 0: the holding task; slots 1-6 and 7 are submitted by it.
	require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
		defer done.Done()
		for range 6 {
			done.Add(1)
			assert.NoError(t, p.Execute(func(*forkjoin.Worker) { done.Done() }))
		}
		f := forkjoin.Submit(p, func(*forkjoin.Worker) int { return 7 }) // slot 7, timed
		assert.Equal(t, 7, f.Join(w))                                    // run here, behind slot 1
		time.Sleep(20 * time.Millisecond)
	}))
	within(t, "the tasks", done.Wait)
	waitUntil(t, "every submission completed", func() bool { s := p.Stats(); return s.Completed == 8 && s.QueuedNormal == 0 })
	s := p.Stats()
	t.Logf("%v", s)
	require.Zero(t, s.QueueWaits, "a submission run by a Join was timed as waiting until its slot's take: max %v", s.QueueWaitMax)
}

// TestRev24ClaimedSlotCostsNoAgingRound: on one worker with aging k = 4,
// Background holds a Submit that a task joined while it was not at the
// front (so it stayed in the queue, already run), and then b3, submitted
// by the Background task b1 ahead of them, while Urgent tasks flood. The
// stale slot reaches the front after b1; it must leave the queue without
// counting as a take, so that b3 is passed over at most k+1 times (the
// bound of "Priorities"). Counted as a take, it cost b3 a whole aging
// round: 2k Urgent tasks started between b3's submission and its start.
func TestRev24ClaimedSlotCostsNoAgingRound(t *testing.T) {
	const k, urgent = 4, 40
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPriorityAging(k))
	defer closePool(t, p)
	var (
		log  startOrder
		done sync.WaitGroup
	)
	record := log.record
	held, futs := make(chan struct{}), make(chan *forkjoin.Future[int], 1)
	done.Add(1)
	require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
		defer done.Done()
		close(held)
		(<-futs).Join(w) // claims c2, queued behind b1: it stays in the queue
	}))
	<-held
	done.Add(2 + urgent)
	require.NoError(t, p.ExecutePriority(forkjoin.Background, func(*forkjoin.Worker) {
		record("b1")
		assert.NoError(t, p.ExecutePriority(forkjoin.Background, func(*forkjoin.Worker) { record("b3"); done.Done() }))
		record("b3 submitted")
		done.Done()
	}))
	c2 := forkjoin.SubmitPriority(p, forkjoin.Background, func(*forkjoin.Worker) int { record("c2"); return 2 })
	for range urgent {
		require.NoError(t, p.ExecutePriority(forkjoin.Urgent, func(*forkjoin.Worker) { record("U"); done.Done() }))
	}
	futs <- c2
	within(t, "the tasks", done.Wait)
	order := log.get()
	from, to := -1, -1
	for i, s := range order {
		switch s {
		case "b3 submitted":
			from = i
		case "b3":
			to = i
		}
	}
	require.Equal(t, "c2", order[0], "%v", order)
	require.True(t, from >= 0 && to > from, "%v", order)
	started := to - from - 1
	t.Logf("%d Urgent tasks started between b3's submission and its start: %v", started, order)
	require.LessOrEqual(t, started, k+1, "%v", order)
}
