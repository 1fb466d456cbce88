package forkjoin_test

// Tests of the blocks of spawned tasks (spawn.go, "Blocks").

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestSpawnFillsBlocks: on one worker (no thief ever asks), a flat loop of
// spawns fills blocks of SpawnBlock tasks, one deque element each: after
// 1 + 3*SpawnBlock spawns the worker's deque holds 4 elements (the first
// spawn is published alone, the deque being empty, and the others fill 3
// private blocks); Surplus counts the elements (no worker is idle). A
// spawn of another task type or into another scope starts a new element.
// On the code before blocks (858dc53) every spawn was one element: 97.
func TestSpawnFillsBlocks(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	var n atomic.Int64
	const spawns = 1 + 3*forkjoin.SpawnBlock
	var flat, mixed, nested int
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
		forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
			for range spawns {
				s.Spawn(w, func(*forkjoin.Worker) { n.Add(1) })
			}
			flat = w.Surplus()
		})
		forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
			for i := range 10 { // alternating types: no block takes the other's task
				if i%2 == 0 {
					s.Spawn(w, func(*forkjoin.Worker) { n.Add(1) })
				} else {
					forkjoin.SpawnTask(s, w, countTask{&n})
				}
			}
			mixed = w.Surplus()
		})
		forkjoin.RunScope(w, func(outer *forkjoin.Scope, w *forkjoin.Worker) {
			outer.Spawn(w, func(*forkjoin.Worker) { n.Add(1) })
			outer.Spawn(w, func(*forkjoin.Worker) { n.Add(1) }) // a private block of outer
			forkjoin.RunScope(w, func(inner *forkjoin.Scope, w *forkjoin.Worker) {
				inner.Spawn(w, func(*forkjoin.Worker) { n.Add(1) }) // not into outer's block
				nested = w.Surplus()
			})
		})
		return 0
	})
	require.Equal(t, 4, flat, "deque elements after %d spawns of one closure", spawns)
	require.Equal(t, 10, mixed, "deque elements after 10 spawns of alternating types")
	require.Equal(t, 3, nested, "deque elements: the outer scope's two, the inner one's own")
	require.Equal(t, int64(spawns+10+3), n.Load())
}

// TestSpawnBlockLeavesAreStealable: no hidden work with full blocks. On 2
// workers a loop spawns 3*SpawnBlock leaves that can only finish in
// pairs, running at the same time (each waits, up to the hang limit, for a
// partner). The leaves sit in blocks; a worker that runs one pushes the
// rest of its block back first, where the other worker can steal it, so
// every leaf meets a partner. A block run as a loop of its tasks would
// leave each leaf alone.
func TestSpawnBlockLeavesAreStealable(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	waitAsleep(t, p, 2)
	var r pairs
	leaves := 3 * forkjoin.SpawnBlock
	within(t, "spawn loop of meeting leaves", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
				for range leaves {
					s.Spawn(w, func(*forkjoin.Worker) { r.meet() })
				}
			})
			return 0
		})
	})
	require.False(t, r.failed.Load(), "a leaf waited %v for a partner: leaves were hidden in a block", hangTimeout)
	require.Equal(t, int64(leaves/2), r.met.Load())
}

// TestSpawnBlocksRunEveryTaskOnce: exactly once, under stealing. On 2 and
// 4 workers, scopes spawn flat loops and trees of tasks, of two types and
// into nested scopes (so that blocks fill, are stolen, pushed back,
// appended to by the tasks they hold, and cut where the type or the scope
// changes); every task marks its own slot, which must end at exactly 1.
// Run it under -race: it checks every access to a block handed between
// workers.
func TestSpawnBlocksRunEveryTaskOnce(t *testing.T) {
	rounds, flat := 30, 2000
	if testenv.Race {
		rounds, flat = 8, 500
	}
	for _, par := range []int{2, 4} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		// Per round: flat closures, flat typed tasks, and for each of 8
		// roots a nested scope of fan 4 (1 + 4 + 16 tasks).
		per := 2*flat + 8*21
		slots := make([]atomic.Int32, rounds*per)
		within(t, "blocks exactly once", func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				for r := range rounds {
					base := r * per
					forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
						for i := range flat {
							s.Spawn(w, func(*forkjoin.Worker) { slots[base+i].Add(1) })
							forkjoin.SpawnTask(s, w, markTask{&slots[base+flat+i]})
						}
						for k := range 8 {
							root := base + 2*flat + 21*k
							s.Spawn(w, func(w *forkjoin.Worker) {
								slots[root].Add(1)
								forkjoin.RunScope(w, func(inner *forkjoin.Scope, w *forkjoin.Worker) {
									for c := range 4 {
										mid := root + 1 + 5*c
										inner.Spawn(w, func(w *forkjoin.Worker) {
											slots[mid].Add(1)
											for g := range 4 {
												s.Spawn(w, func(*forkjoin.Worker) { slots[mid+1+g].Add(1) }) // into the outer scope
											}
										})
									}
								})
							})
						}
					})
				}
				return 0
			})
		})
		for i := range slots {
			if v := slots[i].Load(); v != 1 {
				require.Failf(t, "a task did not run exactly once", "%d workers: slot %d ran %d times", par, i, v)
			}
		}
		closePool(t, p)
	}
}

// markTask marks its slot: a typed spawned task for the tests above.
type markTask struct{ slot *atomic.Int32 }

func (m markTask) Compute(*forkjoin.Worker) { m.slot.Add(1) }
