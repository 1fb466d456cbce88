package forkjoin_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestGetOfOwnForkInsideTaskPublishes: Future.Get called inside a task
// blocks the worker without helping (its doc), so a task it waits for must
// be one that another worker can take. On 2 workers the task forks A
// (published: the deque starts empty), then X (private: A is public), waits
// until the other worker has taken A and asked for more (it asks as it takes
// the last public element), and then calls X.Get. Only the other worker can
// run X, and it can see X only if Get publishes the waiting worker's private
// tasks first, as Block does. On main X stayed private behind the blocked
// worker and Get returned only at the hang limit (context deadline).
func TestGetOfOwnForkInsideTaskPublishes(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	waitAsleep(t, p, 2)
	var aStarted, failed atomic.Bool
	var got int
	var err error
	within(t, "Get of a private fork", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			a := forkjoin.Fork(w, func(*forkjoin.Worker) int { aStarted.Store(true); return 1 })
			x := forkjoin.Fork(w, func(*forkjoin.Worker) int { return 42 })
			if !holdUntil(aStarted.Load) || !holdUntil(func() bool { return forkjoin.Asked(w) }) {
				failed.Store(true)
				return 0
			}
			ctx, cancel := context.WithTimeout(context.Background(), hangTimeout/2)
			defer cancel()
			got, err = x.Get(ctx)
			a.Join(w)
			return 0
		})
	})
	require.False(t, failed.Load(), "the other worker never took A")
	require.NoError(t, err, "Get of a fork kept private by its blocked owner")
	require.Equal(t, 42, got)
}
