package forkjoin

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRev23SpawnListReuseAndTrimRace: the owner of a free list takes
// nodes, hands them to other goroutines (thieves that run the node's last
// task) which return them through the returned stack, and trims the list
// meanwhile, as sleepIdle does while other workers still return blocks.
// take must never give out a node that a thief still holds (the held
// count of every node the owner takes goes 0 to 1), no node appears twice
// on the free list, and after the last return a trim leaves at most
// spawnListCap nodes, counted exactly. Run under -race: the plain fields
// the thief writes (next, scope, spawn) and the owner's later reads are
// ordered by the CAS and the Swap, or the detector reports it.
func TestRev23SpawnListReuseAndTrimRace(t *testing.T) {
	owner := &Worker{}
	thieves := []*Worker{{}, {}}
	l := &spawnList[funcAction]{}
	held := map[*spawnNode[funcAction]]*atomic.Int32{} // owner only
	type handed struct {
		n *spawnNode[funcAction]
		h *atomic.Int32
	}
	ch := make(chan handed, 64)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for _, th := range thieves {
		wg.Go(func() {
			for x := range ch {
				x.n.n = 0 // the thief's own writes, as execute's
				x.n.tasks[0] = nil
				if x.h.Add(-1) != 0 {
					bad.Add(1)
				}
				x.n.release(th)
			}
		})
	}
	s := &Scope{}
	for round := range 2000 {
		burst := 1 + round%(3*spawnListCap)
		for range burst {
			n := l.take(owner)
			h := held[n]
			if h == nil {
				h = new(atomic.Int32)
				held[n] = h
			}
			if h.Add(1) != 1 {
				bad.Add(1)
			}
			require.Nil(t, n.scope, "a node taken from the list still names a scope")
			require.False(t, n.spawn)
			n.scope, n.n, n.spawn = s, 1, true
			n.tasks[0] = func(*Worker) {}
			if round%3 == 0 && burst%2 == 0 {
				// The owner empties some itself: plain release.
				n.n, n.tasks[0] = 0, nil
				h.Add(-1)
				n.release(owner)
				continue
			}
			ch <- handed{n, h}
		}
		if round%5 == 0 {
			l.trim()
		}
	}
	close(ch)
	wg.Wait()
	require.Zero(t, bad.Load(), "a node was given out while a thief held it")
	l.trim()
	seen := map[*spawnNode[funcAction]]bool{}
	count := 0
	for n := l.free; n != nil; n = n.next {
		require.False(t, seen[n], "a node twice on the free list")
		seen[n] = true
		count++
	}
	for n := l.returned.Load(); n != nil; n = n.next {
		require.False(t, seen[n], "a node on the free list and the returned stack")
		seen[n] = true
	}
	require.LessOrEqual(t, count, spawnListCap)
	require.Equal(t, count, l.nfree, "trim counts the free list exactly")
}
