package forkjoin_test

// Review rev33 of batched takes (takebatch.go): how the tasks held in a
// worker's ring meet the rest of the pool (claims by joiners, aging,
// WithMaxQueued, Close, Stats).

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestRev33ClaimedRingTaskCostsNoAgingRound: a Submit taken in a batch
// and then claimed by a task joining its Future is no task to run when
// its turn comes in the ring; like a claimed slot of the queue
// (TestRev24ClaimedSlotCostsNoAgingRound), it must not count as a take
// of its level, which restarts that level's aging count and makes the
// task behind it wait another round. One worker, aging 4: b0 takes a
// batch of Background tasks (b0, c1, c2, c3, b2), joins c1-c3 (run
// inline, claimed while in b0's ring), and then 40 Urgent tasks are
// queued. b2 may be passed over by at most 4+1 takes of Urgent.
func TestRev33ClaimedRingTaskCostsNoAgingRound(t *testing.T) {
	const k, urgent, claimed = 4, 40, 3
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPriorityAging(k))
	defer closePool(t, p)
	var (
		mu    sync.Mutex
		order []string
		done  sync.WaitGroup
	)
	record := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	futs := make(chan []*forkjoin.Future[int], 1)
	joined, gate := make(chan struct{}), make(chan struct{})
	release := holdWorkers(t, p)
	done.Add(2 + urgent)
	require.NoError(t, p.ExecutePriority(forkjoin.Background, func(w *forkjoin.Worker) {
		defer done.Done()
		for _, f := range <-futs {
			f.Join(w) // in w's ring: claimed, run here
		}
		close(joined)
		<-gate
	}))
	fs := make([]*forkjoin.Future[int], claimed)
	for i := range fs {
		fs[i] = forkjoin.SubmitPriority(p, forkjoin.Background, func(*forkjoin.Worker) int { record("c"); return i })
	}
	require.NoError(t, p.ExecutePriority(forkjoin.Background, func(*forkjoin.Worker) { record("b2"); done.Done() }))
	futs <- fs
	release()
	within(t, "the joins", func() { <-joined })
	require.Equal(t, claimed+1, p.Stats().QueuedBackground, "c1-c3 and b2 in the worker's ring")
	for range urgent {
		require.NoError(t, p.ExecutePriority(forkjoin.Urgent, func(*forkjoin.Worker) { record("U"); done.Done() }))
	}
	close(gate)
	within(t, "the tasks", done.Wait)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, order, claimed+1+urgent, "each claimed task ran once: %v", order)
	passed := 0
	for _, s := range order[claimed:] {
		if s == "b2" {
			break
		}
		passed++
	}
	t.Logf("%d Urgent tasks started ahead of b2: %v", passed, order)
	require.LessOrEqual(t, passed, k+1, "%v", order)
}
