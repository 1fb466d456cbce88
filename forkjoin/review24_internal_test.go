package forkjoin

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestRev24AgingBoundEveryLevel (review rev24): the starvation bound of
// "Priorities" (docs/design.md), checked take by take on the injector
// itself, for every level at once rather than for a lone Background task:
// with random arrivals at the three levels (mostly Urgent, and bursts of
// Normal so that Normal and Background come due together), the oldest task
// of each non-empty level is passed over by at most aging+1 takes, for
// aging 1 to 8; within a level, takes return slots in order; no take
// returns nothing while a task is queued; and the queued counts (Stats'
// Queued*) match the model at every step and end at 0.
func TestRev24AgingBoundEveryLevel(t *testing.T) {
	for aging := 1; aging <= 8; aging++ {
		rng := rand.New(rand.NewSource(int64(aging)))
		q := newInjector(config{aging: aging, agingSet: true}, nil)
		var (
			pushed, taken [NumPriorities]uint64
			passes        [NumPriorities]int // passes of each level's oldest task
			worst         int
		)
		for step := range 20_000 {
			// Arrivals: Urgent at most steps, Normal in bursts, Background
			// now and then; the queue grows and drains so that levels empty
			// and refill (resetting the counts) across block boundaries.
			arrive := func(l, n int) {
				for range n {
					q.push(l, nil, &node{})
					pushed[l]++
				}
			}
			if rng.Intn(4) != 0 {
				arrive(0, rng.Intn(3))
			}
			if rng.Intn(50) == 0 {
				arrive(1, 1+rng.Intn(40))
			}
			if rng.Intn(30) == 0 {
				arrive(2, 1+rng.Intn(5))
			}
			nonEmpty := 0
			for l := range NumPriorities {
				require.EqualValues(t, pushed[l]-taken[l], q.levels[l].queued(), "aging %d step %d level %d", aging, step, l)
				if pushed[l] > taken[l] {
					nonEmpty++
				}
			}
			x, _ := q.take(nil)
			if nonEmpty == 0 {
				require.Nil(t, x)
				continue
			}
			require.NotNil(t, x, "aging %d step %d: nothing taken with tasks queued", aging, step)
			l := int(x.group % NumPriorities)
			require.Equal(t, taken[l], slotOf(x, l), "aging %d step %d: level %d out of order", aging, step, l)
			taken[l]++
			passes[l] = 0 // its next oldest starts afresh
			for o := range NumPriorities {
				if o != l && pushed[o] > taken[o] {
					passes[o]++
					worst = max(worst, passes[o])
					require.LessOrEqual(t, passes[o], aging+1, "aging %d step %d: the oldest task of level %d passed over %d times", aging, step, o, passes[o])
				} else if o != l {
					passes[o] = 0
				}
			}
		}
		for l := range NumPriorities {
			for pushed[l] > taken[l] {
				x, _ := q.take(nil)
				require.NotNil(t, x)
				taken[int(x.group%NumPriorities)]++
			}
			require.Zero(t, q.levels[l].queued())
		}
		t.Logf("aging %d: most passes of an oldest task %d", aging, worst)
	}
}

// TestRev24StatsQueueWaitConsistent (review rev24): Stats read the three
// queue-wait counters one by one while takes added to them (recordWait, now
// waitCounters: QueueWaits, then QueueWaitTotal, then QueueWaitMax), so a snapshot could
// count a wait in the total and not yet in the count: a mean wait
// (QueueWaitTotal/QueueWaits, as Stats documents it) longer than the
// longest one. A writer records waits of 1,000ns each (after one of 1ns,
// so that the longest grows) while a reader checks every snapshot: the
// mean never exceeds QueueWaitMax, nor QueueWaitMax the total. On
// de64c83 it failed in 2 runs of 3 (a total of 64.7ms over 61,418 waits).
func TestRev24StatsQueueWaitConsistent(t *testing.T) {
	const maxWait = 1000
	n := 20_000_000
	if testenv.Race {
		n = 1_000_000
	}
	p := New(WithParallelism(1))
	defer p.Close()
	stop := make(chan struct{})
	go func() {
		defer close(stop)
		for i := range n {
			p.workers[0].waits.add(int64(min(1+i*maxWait, maxWait))) // the pool runs nothing: the test is the writer
		}
	}()
	bad, snaps := "", 0
	for running := true; running; {
		select {
		case <-stop:
			running = false
		default:
		}
		s := p.Stats()
		snaps++
		switch {
		case s.QueueWaitMax > s.QueueWaitTotal:
			bad = fmt.Sprintf("max %v > total %v (%d waits)", s.QueueWaitMax, s.QueueWaitTotal, s.QueueWaits)
		case s.QueueWaitTotal > time.Duration(s.QueueWaits)*s.QueueWaitMax:
			bad = fmt.Sprintf("mean %v > max %v: total %v over %d waits", s.QueueWaitTotal/time.Duration(s.QueueWaits), s.QueueWaitMax, s.QueueWaitTotal, s.QueueWaits)
		}
		if bad != "" {
			break
		}
	}
	t.Logf("%d snapshots", snaps)
	require.Empty(t, bad, "after %d snapshots", snaps)
}

// TestRev24BlockSize: the sizes injector.go states (a slot of 32 bytes, a
// block of 2,128: 33 bytes per queued task, since the slots' seq; 24 and
// 1,616 before it); the comment said 1,152 bytes and 18 per slot, the
// sizes before typed Execute grew the slots.
func TestRev24BlockSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the sizes stated are a 64-bit platform's")
	}
	require.EqualValues(t, 32, unsafe.Sizeof(slot{}))
	require.EqualValues(t, 2128, unsafe.Sizeof(block{}))
}
