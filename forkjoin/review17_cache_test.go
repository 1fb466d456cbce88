package forkjoin

import (
	"sync/atomic"
	"testing"

	"github.com/magpie-go/magpie/internal/testenv"
	"github.com/stretchr/testify/require"
)

// typedLeaf is a task type per X: with more than cacheSlots of them, a
// worker's cache is full and cacheOf hands out fresh, unshared free lists.
type typedLeaf[X any] struct {
	n   int
	sum *atomic.Int64
}

func (t typedLeaf[X]) Compute(w *Worker) int {
	if t.n <= 1 {
		t.sum.Add(1)
		return 1
	}
	a, b := JoinTasks[int, int](w, typedLeaf[X]{t.n / 2, t.sum}, typedLeaf[X]{t.n - t.n/2, t.sum})
	f := ForkTask[int](w, typedLeaf[X]{1, t.sum})
	return a + b + f.Join(w) - 1
}

type typedSpawn[X any] struct{ sum *atomic.Int64 }

func (t typedSpawn[X]) Compute(*Worker) { t.sum.Add(1) }

// runTyped forks, joins and spawns tasks of type X, depth n.
func runTyped[X any](w *Worker, n int, sum *atomic.Int64) int {
	RunScope(w, func(s *Scope, w *Worker) {
		for range n {
			SpawnTask(s, w, typedSpawn[X]{sum})
		}
	})
	return typedLeaf[X]{n, sum}.Compute(w)
}

// TestMoreTaskTypesThanCacheSlots: a program with more task types than a
// worker keeps free lists for (cacheSlots) still forks, joins and spawns
// every one correctly on several workers (run it under -race): past the
// cache, each call gets a fresh list, and nothing it recycles is shared.
func TestMoreTaskTypesThanCacheSlots(t *testing.T) {
	p := New(WithParallelism(2))
	defer p.Close()
	type (
		t0  [0]byte
		t1  [1]byte
		t2  [2]byte
		t3  [3]byte
		t4  [4]byte
		t5  [5]byte
		t6  [6]byte
		t7  [7]byte
		t8  [8]byte
		t9  [9]byte
		t10 [10]byte
		t11 [11]byte
		t12 [12]byte
		t13 [13]byte
		t14 [14]byte
		t15 [15]byte
		t16 [16]byte
		t17 [17]byte
		t18 [18]byte
		t19 [19]byte
	)
	runs := []func(w *Worker, n int, sum *atomic.Int64) int{
		runTyped[t0], runTyped[t1], runTyped[t2], runTyped[t3], runTyped[t4],
		runTyped[t5], runTyped[t6], runTyped[t7], runTyped[t8], runTyped[t9],
		runTyped[t10], runTyped[t11], runTyped[t12], runTyped[t13], runTyped[t14],
		runTyped[t15], runTyped[t16], runTyped[t17], runTyped[t18], runTyped[t19],
	}
	require.Greater(t, len(runs), cacheSlots)
	const n = 200
	for round := range 20 {
		var sum atomic.Int64
		testenv.Within(t, "many task types", func() {
			Invoke(p, func(w *Worker) int {
				RunScope(w, func(s *Scope, w *Worker) {
					for _, run := range runs {
						s.Spawn(w, func(w *Worker) { require.Equal(t, n, run(w, n, &sum)) })
					}
				})
				return 0
			})
		})
		// n spawns and, per leaf chain, n leaves plus one per inner node's fork.
		require.Positive(t, sum.Load(), "round %d", round)
	}
}
