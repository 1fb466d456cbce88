package forkjoin

// Review rev32 of batched takes (takebatch.go): the level of a ring as
// take reads it. Internal: the test holds the take lock and stands in for
// a worker's take, as the rev31 tests do.

import (
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// ringNode returns an exec node as a take puts it in a ring, at level l,
// counted in flight; run, it calls fn.
func ringNode(p *Pool, l int, k uint64, fn func()) *node {
	p.accepted.Add(1)
	e := &execNode{pool: p}
	e.job = e
	e.root, e.solo = true, true
	e.act, e.group = funcAction(func(*Worker) { fn() }), groupOf(1<<40+k, l)
	return &e.node
}

// inLockTake reports whether a goroutine waits for the take lock.
func inLockTake() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "(*injector).lockTake")
}

// TestRev32TakeRereadsRingLevelUnderLock: take reads the level of the ring
// it would serve first (batchSource) before it waits for the take lock,
// and chose among the queue's levels and that level once it held the
// lock. The ring's level can change meanwhile: its tasks run, and its
// owner fills it again, under the lock, from the level then alone in the
// queue. Here worker 1's ring holds an Urgent task and Background tasks
// are queued; worker 0's take reads Urgent and waits for the lock. Worker
// 1's ring then holds Background tasks (its Urgent task gone, a batch of
// Background taken) and a Normal task is submitted. Worker 0's take chose
// the stale Urgent, "the ring's level", took the oldest of worker 1's
// Background tasks and counted a take of Urgent (Normal and Background
// passed over): a Background task started while a Normal one was queued,
// with no race left once the lock is held (failed on 1515b94, main: got
// level 2; passes with the level read under the lock).
func TestRev32TakeRereadsRingLevelUnderLock(t *testing.T) {
	p := New(WithParallelism(2))
	defer testenv.Within(t, "Close", p.Close)
	gate := make(chan struct{})
	var held sync.WaitGroup
	held.Add(2)
	for range 2 {
		require.NoError(t, p.Execute(func(*Worker) { held.Done(); <-gate }))
	}
	testenv.Within(t, "both workers held", held.Wait)
	released := false
	defer func() {
		if !released {
			close(gate)
		}
	}()
	nop := func() {}
	w0, w1 := p.workers[0], p.workers[1]
	q := p.inj

	// Worker 1's ring: one Urgent task, taken when Urgent alone was queued.
	u := ringNode(p, Urgent.level(), 0, nop)
	w1.fillBatch(Urgent.level(), []*node{u})
	for range 8 {
		require.NoError(t, p.ExecutePriority(Background, func(*Worker) {}))
	}

	q.lockTake()
	got := make(chan *node, 1)
	go func() { // worker 0's take, on its behalf (worker 0 is held)
		x, _ := q.take(w0)
		got <- x
	}()
	testenv.WaitUntil(t, "worker 0's take waiting for the lock", inLockTake)

	// Under the lock, as worker 1 would: its Urgent task leaves the ring
	// (dropped here: it is not counted in flight any more), and a batch of
	// Background tasks fills it.
	require.Same(t, u, w1.subs.Pop())
	p.accepted.Add(-1)
	var bg []*node
	for k := range 4 {
		bg = append(bg, ringNode(p, Background.level(), uint64(1+k), nop))
	}
	w1.fillBatch(Background.level(), bg)
	require.NoError(t, p.Execute(func(*Worker) {})) // needs no lock
	q.unlockTake()

	var x *node
	testenv.Within(t, "worker 0's take", func() { x = <-got })
	require.NotNil(t, x)
	x.job.execute(w0) // counted in flight: run it (worker 0 is held)
	require.Equal(t, Normal.level(), int(x.group%NumPriorities),
		"a %v task taken while a Normal one was queued", Priority(Urgent-Priority(x.group%NumPriorities)))
	close(gate)
	released = true
}
