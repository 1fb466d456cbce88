package forkjoin_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestWorkerStatsSumToStats: after Close the entries are exact, one per
// worker slot in Index order, compensating slots marked, and they sum to
// Stats' counters; the Block below lands on worker 0 and its submitted
// task on compensating worker 1.
func TestWorkerStatsSumToStats(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(1))
	within(t, "workload", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibJoin(w, 12) })
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			f := forkjoin.Submit(p, func(w *forkjoin.Worker) int { return fibJoin(w, 8) })
			forkjoin.Block(w, func() { _, _ = f.Get(context.Background()) }) // run by the compensating worker
			return 0
		})
	})
	within(t, "Close", p.Close)
	ws, s := p.WorkerStats(), p.Stats()
	require.Len(t, ws, p.MaxWorkers())
	var sum forkjoin.WorkerStats
	for i, e := range ws {
		require.Equal(t, i, e.Index)
		require.Equal(t, i >= p.Parallelism(), e.Compensating)
		sum.Executed += e.Executed
		sum.Forks += e.Forks
		sum.Steals += e.Steals
		sum.Helped += e.Helped
		sum.Parks += e.Parks
		sum.Blocks += e.Blocks
		sum.Completed += e.Completed
		sum.Queued += e.Queued
	}
	require.Equal(t, s.Executed, sum.Executed)
	require.Equal(t, s.Forks, sum.Forks)
	require.Equal(t, s.Steals, sum.Steals)
	require.Equal(t, s.Helped, sum.Helped)
	require.Equal(t, s.Parks, sum.Parks)
	require.Equal(t, s.Blocks, sum.Blocks)
	require.Equal(t, s.Completed, sum.Completed)
	require.Zero(t, sum.Queued)
	require.EqualValues(t, 1, ws[0].Blocks)
	require.EqualValues(t, 2, ws[0].Completed, "both Invokes")
	require.EqualValues(t, 1, ws[1].Completed, "the task submitted while worker 0 blocked")
	require.EqualValues(t, fibJoins(8)+1, ws[1].Executed)
	require.True(t, strings.Contains(ws[1].String(), "index=1 compensating=true"), ws[1].String())
}

// TestWorkerStatsNilPool: a nil *Pool reads Default()'s workers.
func TestWorkerStatsNilPool(t *testing.T) {
	var nilPool *forkjoin.Pool
	require.Len(t, nilPool.WorkerStats(), forkjoin.Default().MaxWorkers())
}
