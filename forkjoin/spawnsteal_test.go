package forkjoin

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpawnStealTakesBlock: one steal takes a whole block of spawned
// tasks. On one worker, a scope spawns 1 + 2*spawnBlock tasks (the first
// is published alone, the deque being empty; the others fill two private
// blocks); the worker itself steals the oldest element, as a thief would,
// which empties the public part and so asks for work; the next spawn
// serves the request (it publishes everything private); the next steal
// then takes a block of spawnBlock tasks. Every task runs exactly once:
// the stolen elements are executed, and the scope's wait runs the rest.
func TestSpawnStealTakesBlock(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	const spawns = 2 + 2*spawnBlock
	var ran [spawns]atomic.Int32
	var first, second int
	Invoke(p, func(w *Worker) int {
		RunScope(w, func(s *Scope, w *Worker) {
			spawnOne := func(i int) { s.Spawn(w, func(*Worker) { ran[i].Add(1) }) }
			for i := range spawns - 1 {
				spawnOne(i)
			}
			x := w.deque.Steal()
			require.NotNil(t, x)
			first = x.job.(*spawnNode[funcAction]).n
			require.True(t, w.deque.Asked(), "taking the last public element asks for work")
			spawnOne(spawns - 1)
			y := w.deque.Steal()
			require.NotNil(t, y)
			second = y.job.(*spawnNode[funcAction]).n
			w.execute(x)
			w.execute(y)
		})
		return 0
	})
	require.Equal(t, 1, first, "tasks in the first element")
	require.Equal(t, spawnBlock, second, "tasks taken by the steal after the request was served")
	for i := range ran {
		require.Equal(t, int32(1), ran[i].Load(), "task %d", i)
	}
}
