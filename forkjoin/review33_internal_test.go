package forkjoin

// Review rev33 of batched takes (takebatch.go): a take's view of the
// rings across its wait for the take lock. Internal: the test holds the
// lock and puts tasks in a ring as a take of another worker would.

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestRev33TakeLooksAtRingsUnderLock: a worker that looked for rings
// before it waited for the take lock (all empty then) must look again
// once it holds it: meanwhile another worker may have filled its ring
// with tasks of a level that aging has made due. Here worker A is woken
// for an Urgent task and waits for the lock, held by the test, which
// meanwhile does what the other worker's take and three Urgent takes
// would have: two Background tasks in worker B's ring, Background passed
// over 4 times (aging 4: due). A's take then chose among the queue's
// levels alone: it started the Urgent task and, counting Background
// empty, reset its count, so that the due Background tasks waited
// another whole round.
func TestRev33TakeLooksAtRingsUnderLock(t *testing.T) {
	const k = 4
	p := New(WithParallelism(2), WithPriorityAging(k))
	defer p.Close()
	allAsleep(t, p, 2, "the workers asleep")
	var (
		mu    sync.Mutex
		order []string
		done  sync.WaitGroup
	)
	record := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	q := p.inj
	q.lockTake()
	done.Add(3)
	require.NoError(t, p.ExecutePriority(Urgent, func(*Worker) { record("U"); done.Done() }))
	testenv.WaitUntil(t, "a worker woken", func() bool { return p.sleepers.Count() == 1 })
	time.Sleep(20 * time.Millisecond) // it looks for rings, finds none, and waits for the lock
	var b *Worker                     // the worker still asleep
	for i := range 2 {
		if p.sleepers.Listed(i) {
			b = p.workers[i]
		}
	}
	require.NotNil(t, b)
	// As B's take would: two Background tasks, counted in flight, taken
	// from the queue (positions 0 and 1 of the level) into B's ring.
	bg := Background.level()
	var batch []*node
	for i := range 2 {
		p.accepted.Add(1)
		e := &execNode{pool: p}
		e.job = e
		e.root, e.solo = true, true
		e.act, e.group = funcAction(func(*Worker) { record("B"); done.Done() }), groupOf(uint64(i), bg)
		batch = append(batch, &e.node)
	}
	b.fillBatch(bg, batch)
	q.passed[bg].Store(k) // as three Urgent takes and one more would have
	q.unlockTake()
	testenv.Within(t, "the tasks", done.Wait)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, "B", order[0], "Background was due: %v", order)
}
