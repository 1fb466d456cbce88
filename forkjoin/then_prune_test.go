package forkjoin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestCanceledStagesDoNotPileUpOnPendingSource: a server that chains a
// ThenContext with a deadline on a Future that stays pending (a slow
// backend call, say) and gives up on each chain must not keep a record per
// chain on that Future until it completes, as Java's CompletableFuture
// prunes canceled dependents (cleanStack). Until 2026-12-05 every canceled
// stage stayed registered: 10,000 chains, 10,000 callbacks. Live stages
// stay, and all of them still run once the source completes.
func TestCanceledStagesDoNotPileUpOnPendingSource(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	release := make(chan struct{})
	var released bool
	defer func() {
		if !released { // a failed check: let Close finish
			close(release)
		}
	}()
	src := forkjoin.Submit(p, func(*forkjoin.Worker) int { <-release; return 7 })

	const chains, live = 10_000, 100
	var kept []*forkjoin.Future[int]
	for i := range chains {
		if i%(chains/live) == 0 {
			kept = append(kept, forkjoin.Then(p, src, func(_ *forkjoin.Worker, v int) int { return v + 1 }))
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		f := forkjoin.ThenContext(ctx, p, src, func(_ *forkjoin.Worker, v int) int { return v })
		cancel()
		_, err := f.Get(context.Background())
		require.ErrorIs(t, err, context.Canceled)
	}
	n := forkjoin.CallbacksOn(src)
	t.Logf("%d callbacks registered after %d chains, %d of them live", n, chains, live)
	require.LessOrEqual(t, n, 4*live, "canceled stages pile up on the pending source")

	close(release)
	released = true
	within(t, "the live stages", func() {
		for _, f := range kept {
			v, err := f.Get(context.Background())
			require.NoError(t, err)
			require.Equal(t, 8, v)
		}
	})
	require.Zero(t, forkjoin.CallbacksOn(src))
}
