package forkjoin

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestSpawnListIsBounded: a scope with three times spawnListCap full
// spawn nodes (blocks of spawnBlock tasks) unfinished at once grows the spawning worker's free list to hold them
// all (the next scope of that size allocates nothing); once the worker
// goes to sleep with nothing to run, it has trimmed the list, and the stack
// of nodes other workers ran and returned, to spawnListCap nodes. Before,
// the nodes of the burst stayed for the life of the pool.
func TestSpawnListIsBounded(t *testing.T) {
	for _, par := range []int{1, 2} {
		p := New(WithParallelism(par))
		var (
			spawner *Worker
			parks   uint64
		)
		Invoke(p, func(w *Worker) int {
			for range 2 { // the second scope reuses the first's nodes
				RunScope(w, func(s *Scope, w *Worker) {
					for range 3 * spawnListCap * spawnBlock {
						s.Spawn(w, func(*Worker) {})
					}
				})
			}
			l := cacheOf[spawnList[funcAction]](w)
			assert.Greater(t, l.nfree+int(l.nreturned.Load()), spawnListCap, "%d workers: the burst's nodes kept while busy", par)
			spawner, parks = w, p.WorkerStats()[w.Index()].Parks
			return 0
		})
		// The worker trims before it publishes the park that this waits for.
		testenv.WaitUntil(t, "the spawner sleeps", func() bool { return p.WorkerStats()[spawner.Index()].Parks > parks })
		l := cacheOf[spawnList[funcAction]](spawner) // the spawner sleeps: nobody touches its lists
		free := 0
		for n := l.free; n != nil; n = n.next {
			free++
		}
		assert.Equal(t, l.nfree, free, "%d workers: nfree counts the free list", par)
		returned := 0
		for n := l.returned.Load(); n != nil; n = n.next {
			returned++
		}
		assert.LessOrEqual(t, free+returned, spawnListCap, "%d workers: free nodes kept by a sleeping worker", par)
		p.Close()
	}
}
