package forkjoin

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestCellListIsBounded: a task with three times cellListCap Futures
// unjoined at once grows its worker's free list of cells to hold them all;
// once the worker goes to sleep with nothing to run, it has trimmed the
// list (ready and held cells together) to cellListCap, as it trims spawn
// lists (TestSpawnListIsBounded). Before, the cells of the burst stayed for
// the life of the pool.
func TestCellListIsBounded(t *testing.T) {
	count := func(c *taskCell[int, funcTask[int]]) int {
		n := 0
		for ; c != nil; c = c.next {
			n++
		}
		return n
	}
	for _, par := range []int{1, 2} {
		p := New(WithParallelism(par))
		var (
			forker *Worker
			trims  uint32
		)
		Invoke(p, func(w *Worker) int {
			fs := make([]*Future[int], 3*cellListCap)
			for i := range fs {
				fs[i] = Fork(w, func(*Worker) int { return 1 })
			}
			for _, f := range fs {
				f.Join(w) // held back: a Future's cell
			}
			Fork(w, func(*Worker) int { return 1 }).Join(w) // the held cells become ready
			l := cacheOf[cellList[int, funcTask[int]]](w)
			assert.Greater(t, count(l.ready)+count(l.held), cellListCap, "%d workers: the burst's cells kept while busy", par)
			forker, trims = w, w.trims.Load()
			return 0
		})
		waitTrimmed(t, forker, trims)
		l := cacheOf[cellList[int, funcTask[int]]](forker) // the forker sleeps: nobody touches its lists
		assert.Equal(t, l.nheld, count(l.held), "%d workers: nheld counts the held list", par)
		assert.LessOrEqual(t, count(l.ready)+count(l.held), cellListCap, "%d workers: free cells kept by a sleeping worker", par)
		p.Close()
	}
}

// TestTrimKeepsFutureReaders: a task forks three times cellListCap
// Futures and hands them to a goroutine outside the pool, which Gets them
// one by one (registered on cells that the owner then joins, holds and
// frees), while the task joins them all; the worker then sleeps, which
// trims its lists, and a second burst of as many forks, returning -1,
// reuses the cells kept. Every Get must still return its own fork's
// result: a cell trimmed, or kept and reused, under a reader would show
// it another fork's result.
func TestTrimKeepsFutureReaders(t *testing.T) {
	const n = 3 * cellListCap
	p := New(WithParallelism(1))
	defer p.Close()
	handed := make(chan []*Future[int], 1)
	got := make([]int, n)
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for i, f := range <-handed {
			v, err := f.Get(context.Background())
			if err != nil {
				t.Errorf("Get %d: %v", i, err)
				return
			}
			got[i] = v
		}
	}()
	var (
		forker *Worker
		trims  uint32
	)
	Invoke(p, func(w *Worker) int {
		fs := make([]*Future[int], n)
		for i := range fs {
			fs[i] = Fork(w, func(*Worker) int { return i })
		}
		handed <- fs
		for _, f := range fs {
			f.Join(w)
		}
		forker, trims = w, w.trims.Load()
		return 0
	})
	waitTrimmed(t, forker, trims)
	Invoke(p, func(w *Worker) int {
		for range 3 {
			fs := make([]*Future[int], n)
			for i := range fs {
				fs[i] = Fork(w, func(*Worker) int { return -1 })
			}
			for _, f := range fs {
				f.Join(w)
			}
		}
		return 0
	})
	testenv.Within(t, "the outside reader", readers.Wait)
	for i, v := range got {
		if v != i {
			t.Fatalf("Get of fork %d returned %d", i, v)
		}
	}
}
