package task_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

func TestFixed(t *testing.T) {
	c := task.Fixed(100)
	require.True(t, c.Split(nil, 101))
	require.False(t, c.Split(nil, 100))
	require.False(t, c.Split(nil, 0))
	for _, g := range []int{0, -5, 1} {
		require.False(t, task.Fixed(g).Split(nil, 1), "grain %d is taken as 1", g)
		require.True(t, task.Fixed(g).Split(nil, 2), "grain %d is taken as 1", g)
	}
}

// TestAdaptive checks the two rules of Adaptive on a single worker, where
// nobody steals and no other worker is idle: it never splits at or below
// the floor, and stops splitting once the worker holds a surplus of three
// queued tasks.
func TestAdaptive(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer p.Close()
	c := task.Adaptive()
	within(t, func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			require.False(t, c.Split(w, task.AdaptiveFloor))
			require.False(t, c.Split(w, 0))
			require.True(t, c.Split(w, task.AdaptiveFloor+1), "empty deque: split")
			var fs []*forkjoin.Future[int]
			for c.Split(w, 1<<20) {
				fs = append(fs, task.Fork(w, Fib{3}))
				require.Less(t, len(fs), 100, "Adaptive kept splitting")
			}
			require.Equal(t, 3, len(fs), "splitting stops at a surplus of 3")
			for _, f := range fs {
				require.Equal(t, 2, f.Join(w))
			}
			require.True(t, c.Split(w, 1<<20), "deque drained: split again")
			return 0
		})
	})
}
