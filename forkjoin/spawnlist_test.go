package forkjoin

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestSpawnListIsBounded: a scope with three times spawnListCap full
// spawn nodes (blocks of spawnBlock tasks) unfinished at once grows the
// spawning worker's free list to hold them all (the next scope of that size
// allocates nothing); once the worker has slept idleTrimDelay with nothing
// to run, it has trimmed the list, and the stack of nodes other workers ran
// and returned, to spawnListCap nodes. Before the trim existed, the nodes
// of the burst stayed for the life of the pool.
func TestSpawnListIsBounded(t *testing.T) {
	for _, par := range []int{1, 2} {
		p := New(WithParallelism(par))
		var (
			spawner *Worker
			trims   uint32
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
			spawner, trims = w, w.trims.Load()
			return 0
		})
		waitTrimmed(t, spawner, trims)
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

// waitTrimmed waits until w has trimmed its free lists since its count of
// trims was before (sleepIdle, after idleTrimDelay asleep). w then sleeps
// on with nothing to run: nobody touches its lists, and the count's
// atomic load orders the trim's plain stores before the caller's reads.
func waitTrimmed(t *testing.T, w *Worker, before uint32) {
	t.Helper()
	testenv.WaitUntil(t, "the worker trims its free lists", func() bool { return w.trims.Load() > before })
}

// TestSpawnListKeptOverShortSleep: a worker that sleeps for less than
// idleTrimDelay between two scopes of 3 x spawnListCap full spawn nodes
// keeps its free list, so the second scope allocates no node. With the
// lists trimmed at every sleep, as before, the second scope allocated the
// 2 x spawnListCap nodes the trim had dropped (and their blocks): every
// 1M-spawn loop on 2 workers allocated ~40,000 nodes. A round in which
// the worker did trim (a machine slow enough to stretch the short sleep
// past idleTrimDelay) proves nothing and is run again.
func TestSpawnListKeptOverShortSleep(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	var (
		worker *Worker
		parks  uint64 // published before the task ends: the park after it counts above
	)
	scope := func(w *Worker) int {
		RunScope(w, func(s *Scope, w *Worker) {
			for range 3 * spawnListCap * spawnBlock {
				s.Spawn(w, func(*Worker) {})
			}
		})
		worker, parks = w, p.WorkerStats()[w.Index()].Parks
		return 0
	}
	Invoke(p, scope) // the list grows to hold the scope's nodes
	for round := 0; ; round++ {
		require.Less(t, round, 10, "the worker trimmed in every round: the short sleep never stayed below idleTrimDelay")
		trims := worker.trims.Load()
		testenv.WaitUntil(t, "the worker sleeps", func() bool { return p.WorkerStats()[0].Parks > parks })
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Invoke(p, scope)
		runtime.ReadMemStats(&after)
		if worker.trims.Load() != trims {
			continue
		}
		// The scope, the submission, a few runtime allocations; the
		// nodes dropped by a trim would be 2 x spawnListCap and their blocks.
		assert.Less(t, after.Mallocs-before.Mallocs, uint64(spawnListCap), "allocations of a scope after a short sleep")
		return
	}
}
