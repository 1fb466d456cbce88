package forkjoin

// Review rev31 of batched takes (takebatch.go): wake-ups around the
// workers' rings. These tests need the queue's internals (a slot reserved
// and not written, the sleepers), so they are internal.

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// barrierTasks returns a task that waits until k tasks made by it have
// started (or giveUp is closed), and the channel closed when they have.
func barrierTasks(k int32, giveUp <-chan struct{}) (task func(*Worker), all <-chan struct{}) {
	var started atomic.Int32
	ch := make(chan struct{})
	return func(*Worker) {
		if started.Add(1) == k {
			close(ch)
		}
		select { // unmanaged: this worker looks for nothing meanwhile
		case <-ch:
		case <-giveUp:
		}
	}, ch
}

// allAsleep waits until every one of p's n workers is registered as a
// sleeper, and stays so for a moment (a worker woken by an earlier wake-up
// re-registers at once).
func allAsleep(t *testing.T, p *Pool, n int, what string) {
	t.Helper()
	for range 3 {
		testenv.WaitUntil(t, what, func() bool { return p.sleepers.Count() == n })
		time.Sleep(20 * time.Millisecond)
	}
	testenv.WaitUntil(t, what, func() bool { return p.sleepers.Count() == n })
}

// TestRev31StealPassesWakeUpOn: a wake-up reaches the workers one at a
// time, each woken worker waking the next while work is left (the chain
// of Pool.pollSubmission). A submitter descheduled between reserving
// slot 0 and writing it holds back the 8 tasks submitted behind it: the 3
// workers look, find the level not ready, and sleep. Its write then wakes
// one worker, W, which takes a batch: slot 0 to run and 2 tasks in its
// ring, 6 left queued, and wakes W2. W2 takes the older half of W's ring,
// one task, on take's lock-free path, which reported more work only if
// W2's own ring held some: the task left in W's ring and the 6 queued
// were not counted, and the third worker slept on. The first 3 tasks wait
// until 3 have started, so W and W2 wait for good (failed on 240b3fa, main
// with batched takes, every run: 2 of 3 started; passes on 7195cb6, before
// them, with the slot written as that version writes it).
func TestRev31StealPassesWakeUpOn(t *testing.T) {
	p := New(WithParallelism(3))
	defer p.Close()
	giveUp := make(chan struct{})
	defer close(giveUp)
	task, all := barrierTasks(3, giveUp)
	allAsleep(t, p, 3, "the workers asleep")

	// Slot 0 reserved, not written: a submitter descheduled in push.
	v := &p.inj.levels[Normal.level()]
	p.accepted.Add(1) // as submitAt counts it
	b := v.tail.Load()
	k := v.pushed.Add(1) - 1
	require.Zero(t, k)
	for range 8 {
		require.NoError(t, p.Execute(task))
	}
	allAsleep(t, p, 3, "the workers asleep behind the reserved slot")
	// Written as push writes it, and woken as submitAt wakes.
	b.slots[0].act = funcAction(task)
	b.slots[0].seq.Store(k + 1)
	if p.sleepers.Any() {
		p.sleepers.WakeIdle()
	}
	testenv.Within(t, "3 tasks started on 3 workers", func() { <-all })
}

// TestRev31WakeIfWorkSeesRings: wakeIfWork is the safety net of the
// paths on which a worker registered as an idle sleeper leaves with the
// wake-up a producer may have given it (a compensating worker retiring,
// a foreign wait returning: see Worker.loop and waitUntil). A batch's
// taker wakes one idle sleeper for the tasks it puts in its ring
// (Pool.pollSubmission); if that sleeper is one of these, wakeIfWork must
// see the ring, or the tasks wait while the pool's other workers sleep.
// Here the state is made directly: both workers asleep, a task in worker
// 0's ring, then wakeIfWork. It looked only at the queue, the handoff
// list and the deques: the task never ran (failed on 240b3fa; before
// batched takes there were no rings).
func TestRev31WakeIfWorkSeesRings(t *testing.T) {
	p := New(WithParallelism(2))
	defer p.Close()
	allAsleep(t, p, 2, "the workers asleep")
	ran := make(chan struct{})
	// A task as a take puts it in a ring: counted in flight, an exec node.
	p.accepted.Add(1)
	e := &execNode{pool: p}
	e.job = e
	e.root, e.solo = true, true
	e.act, e.group = funcAction(func(*Worker) { close(ran) }), groupOf(1<<40, Normal.level())
	w := p.workers[0] // asleep: its ring is the test's until it wakes
	w.subsLevel.Store(int32(Normal.level()))
	w.subs.Fill([]*node{&e.node})
	p.wakeIfWork()
	testenv.Within(t, "the ring's task run", func() { <-ran })
}
