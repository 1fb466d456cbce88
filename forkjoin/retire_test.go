package forkjoin

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestSpawnedTasksRetireInBatches: tasks of a scope that finish one after
// the other on a worker subtract themselves from the scope's count in one
// batch, not one atomic add each. On one worker a scope spawns 10 tasks;
// the body finishes first (retiring itself and its unspent credits), then
// the wait runs the tasks newest first, and each reads the count when it
// starts. Every task sees 10: the earlier ones' retirements wait in the
// worker's batch. On the code before (858dc53) each task subtracted itself
// at its end: the k-th saw 11-k, the last 1.
func TestSpawnedTasksRetireInBatches(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	const spawns = 10
	var seen [spawns]int64
	Invoke(p, func(w *Worker) int {
		RunScope(w, func(s *Scope, w *Worker) {
			for i := range spawns {
				s.Spawn(w, func(*Worker) { seen[i] = s.pending.Load() })
			}
		})
		return 0
	})
	for i, v := range seen {
		require.Equal(t, int64(spawns), v, "count seen by task %d", i)
	}
}

// TestRetiredBatchFlushedBeforeOtherWork: a worker flushes its batch of
// finished tasks of a scope before it runs anything else, which might wait
// for that scope. On 2 workers, each round runs a scope of tiny tasks from
// outside (ScopeOn) whose body, after the spawns, submits a task that
// waits for that ScopeOn to return: when a worker ran tasks of the scope
// and then takes the waiting task, an unflushed batch would keep the
// scope open for ever (the hang limit fails the test; it does when
// Worker.run does not flush).
func TestRetiredBatchFlushedBeforeOtherWork(t *testing.T) {
	rounds := 300
	if testenv.Race {
		rounds = 60
	}
	p := New(WithParallelism(2))
	defer p.Close()
	var ran atomic.Int64
	testenv.Within(t, "scopes with a task waiting for each", func() {
		for range rounds {
			done := make(chan struct{})
			waited := make(chan struct{})
			ScopeOn(p, func(s *Scope, w *Worker) {
				for range 200 {
					s.Spawn(w, func(*Worker) { ran.Add(1) })
				}
				// Queued behind the spawned tasks: a worker takes it when
				// it finds none left to steal, typically after running some.
				if err := p.Execute(func(*Worker) { <-done; close(waited) }); err != nil {
					panic(err)
				}
			})
			close(done)
			<-waited
		}
	})
	require.Equal(t, int64(rounds*200), ran.Load())
}
