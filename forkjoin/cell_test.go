package forkjoin

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// Tests of the recycled cells behind Fork's Futures (cell.go, future.go):
// the handle keeps its outcome after its cell is reused, readers from other
// goroutines pin the owner's held cells, and a Join nested in the owner's
// own Join of the same Future never recycles a cell still in use.

// square is a typed task whose result identifies it.
type square struct{ x int }

func (s square) Compute(*Worker) int { return s.x * s.x }

// forkJoinSquares forks and joins n squares on w, recycling cells of
// square's type, and checks every result.
func forkJoinSquares(t *testing.T, w *Worker, n int) {
	for i := range n {
		f := ForkTask[int](w, square{i})
		require.Equal(t, i*i, f.Join(w))
	}
}

// heldCellOf returns the cell behind a Future of square.
func heldCellOf(f *Future[int]) *taskCell[int, square] {
	return f.c.typed.(*taskCell[int, square])
}

// cellsOf returns the cells on w's free lists for square.
func cellsOf(w *Worker) (ready, held map[*taskCell[int, square]]bool) {
	l := cacheOf[cellList[int, square]](w)
	ready, held = map[*taskCell[int, square]]bool{}, map[*taskCell[int, square]]bool{}
	for c := l.ready; c != nil; c = c.next {
		ready[c] = true
	}
	for c := l.held; c != nil; c = c.next {
		held[c] = true
	}
	return ready, held
}

// heldCount counts c on w's held list for square, failing on a cycle (a
// cell held twice).
func heldCount(w *Worker, c *taskCell[int, square]) int {
	l := cacheOf[cellList[int, square]](w)
	n, steps := 0, 0
	for x := l.held; x != nil; x = x.next {
		if steps++; steps > l.nheld {
			panic("held list longer than nheld: a cell was held twice")
		}
		if x == c {
			n++
		}
	}
	return n
}

func TestFutureOutlivesItsCell(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	Invoke(p, func(w *Worker) int {
		f := ForkTask[int](w, square{7})
		require.Equal(t, 49, f.Join(w))
		c := heldCellOf(f)
		_, held := cellsOf(w)
		require.True(t, held[c], "the owner's Join holds the cell back")

		// Enough forks of the same type to recycle c many times over.
		forkJoinSquares(t, w, 10*heldBatch)
		ready, held := cellsOf(w)
		require.True(t, ready[c] || held[c], "c is back on a free list: it was reused")

		require.Equal(t, 49, f.Join(w), "a second Join reads the handle")
		require.True(t, f.Done())
		v, err := f.Get(context.Background())
		require.NoError(t, err)
		require.Equal(t, 49, v)
		return 0
	})
}

func TestPinnedReaderHoldsCellsBack(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	Invoke(p, func(w *Worker) int {
		f := ForkTask[int](w, square{3})
		require.Equal(t, 9, f.Join(w))
		c := heldCellOf(f)

		w.pin() // a reader of some Future of w, as Get or Done would register
		forkJoinSquares(t, w, 4*heldBatch)
		ready, held := cellsOf(w)
		require.False(t, ready[c], "no held cell is freed while a reader is pinned")
		require.True(t, held[c])
		require.Equal(t, 9, c.result, "c was not reused while a reader was pinned")

		w.unpin()
		forkJoinSquares(t, w, 4*heldBatch)
		ready, held = cellsOf(w)
		require.True(t, ready[c] || held[c])
		require.Zero(t, w.foreign.Load())
		return 0
	})
}

// TestReadersOfInlineFork has goroutines outside the pool Get, and call
// Done on, a fork that its owner (the only worker, so nobody can steal it)
// runs itself: the cell never completes the normal way, and the readers
// are woken by the owner or find out by polling.
func TestReadersOfInlineFork(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	rounds := 200
	if testenv.Race {
		rounds = 50
	}
	for round := range rounds {
		const readers = 3
		forked := make(chan *Future[int])
		release := make(chan struct{})
		var wg sync.WaitGroup
		results := make([]int, readers)
		wg.Add(readers)
		for r := range readers {
			go func() {
				defer wg.Done()
				f := <-forked
				_ = f.Done()
				v, err := f.Get(context.Background())
				if err == nil {
					results[r] = v
				}
			}()
		}
		go func() {
			Invoke(p, func(w *Worker) int {
				f := ForkTask[int](w, square{round})
				for range readers {
					forked <- f
				}
				if round%2 == 0 {
					<-release // let the readers register first
				}
				require.Equal(t, round*round, f.Join(w))
				forkJoinSquares(t, w, heldBatch+1) // recycle cells meanwhile
				return 0
			})
		}()
		if round%2 == 0 {
			close(release)
		}
		wg.Wait()
		for _, v := range results {
			require.Equal(t, round*round, v, "round %d", round)
		}
	}
}

// TestNestedJoinOfSameFuture: the owner joins f while a task it runs on the
// way (g, forked after f) joins f too. The nested Join runs f's task and
// settles f; the cell must not be recycled before the outer Join is done
// with it, and only the outer one holds it: g forks and joins many tasks of f's type meanwhile, then
// forks more that it leaves in the deque, where the outer Join, looking for
// f's cell, would take a recycled one for f's.
func TestNestedJoinOfSameFuture(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	Invoke(p, func(w *Worker) int {
		for round := range 50 {
			// In odd rounds a fork before f makes f's cell private, so
			// that the nested Join pops it directly; in even rounds f's
			// cell is the public one and the nested Join pops it last.
			var first *Future[int]
			if round%2 == 1 {
				first = ForkTask[int](w, square{-1})
			}
			f := ForkTask[int](w, square{round})
			g := Fork(w, func(w *Worker) int {
				v := f.Join(w)
				forkJoinSquares(t, w, 2*heldBatch)
				for i := range 2 * heldBatch {
					ForkTask[int](w, square{-1 - i}) // never joined
				}
				return v
			})
			require.Equal(t, round*round, f.Join(w), "outer Join")
			require.Equal(t, round*round, g.Join(w), "nested Join")
			c := heldCellOf(f)
			require.Equal(t, round*round, c.result, "the nested Join leaves the cell alone: it is not reused under the outer one")
			require.Equal(t, 1, heldCount(w, c), "the outer Join alone holds the cell, once")
			if first != nil {
				require.Equal(t, 1, first.Join(w))
			}
		}
		return 0
	})
}

// TestInlineForkPanic: a fork that panics when its owner runs it inline
// re-panics on every Join with the same *PanicError, which Get returns.
func TestInlineForkPanic(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	boom := errors.New("boom")
	// With private set, a fork made first (and so published) makes f
	// private: its Join takes the fast path (taskCell.join); without, f is
	// public and its Join the slow path (joinOwned).
	for _, private := range []bool{false, true} {
		Invoke(p, func(w *Worker) int {
			if private {
				first := ForkTask[int](w, square{2})
				defer func() { require.Equal(t, 4, first.Join(w)) }()
			}
			f := Fork(w, func(*Worker) int { panic(boom) })
			first := recoverValue(func() { f.Join(w) })
			pe, ok := first.(*PanicError)
			require.True(t, ok, "got %T", first)
			require.ErrorIs(t, pe, boom)
			require.Same(t, pe, recoverValue(func() { f.Join(w) }))
			_, err := f.Get(context.Background())
			require.Same(t, pe, err)
			require.True(t, f.Done())
			require.Equal(t, latchSet, f.c.latch.state.Load(), "a panicked cell is completed for its readers")
			return 0
		})
	}
}

func recoverValue(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

// TestForkAllocatesNothing: once warm, a ForkTask, or a Fork of a closure
// that captures nothing, whose Future stays in the forking function
// allocates nothing: the handle lives on the stack, the cell is recycled.
func TestForkAllocatesNothing(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	Invoke(p, func(w *Worker) int {
		forkTask := func() { ForkTask[int](w, square{3}).Join(w) }
		forkFunc := func() { Fork(w, func(*Worker) int { return 1 }).Join(w) }
		for range 2 * heldBatch {
			forkTask()
			forkFunc()
		}
		require.Zero(t, testing.AllocsPerRun(100, forkTask), "ForkTask")
		require.Zero(t, testing.AllocsPerRun(100, forkFunc), "Fork")
		return 0
	})
}

// TestReadersWhileCellsRecycle has goroutines outside the pool Get futures
// while their owner joins them, in shuffled order, and churns through cells
// of the same type, on two workers (so some forks are stolen): every reader
// must see its own future's value, never that of a task that reused the
// cell.
func TestReadersWhileCellsRecycle(t *testing.T) {
	p := New(WithParallelism(2))
	defer p.Close()
	rounds, perRound := 300, 16
	if testenv.Race {
		rounds = 60
	}
	type read struct {
		f    *Future[int]
		want int
	}
	reads := make(chan read, perRound)
	var wrong atomic.Int64
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for r := range reads {
				_ = r.f.Done()
				if v, err := r.f.Get(context.Background()); err != nil || v != r.want {
					wrong.Add(1)
				}
			}
		}()
	}
	Invoke(p, func(w *Worker) int {
		rng := rand.New(rand.NewPCG(1, 2))
		for round := range rounds {
			fs := make([]*Future[int], perRound)
			for i := range fs {
				x := round*perRound + i
				fs[i] = ForkTask[int](w, square{x})
				if i%2 == 0 {
					reads <- read{fs[i], x * x}
				}
			}
			for _, i := range rng.Perm(perRound) {
				x := round*perRound + i
				require.Equal(t, x*x, fs[i].Join(w))
			}
			forkJoinSquares(t, w, heldBatch)
		}
		return 0
	})
	close(reads)
	readers.Wait()
	require.Zero(t, wrong.Load(), "readers saw a value that was not their future's")
}

// waitForRegistration is a task that, run inline by its owner, waits until
// a reader has registered on its own cell (found through cell, set before
// the Join), then returns x.
type waitForRegistration struct {
	x       int
	running chan<- struct{}
	cell    *atomic.Pointer[taskCell[int, waitForRegistration]]
}

func (t waitForRegistration) Compute(*Worker) int {
	close(t.running)
	for t.cell.Load().latch.state.Load() != latchSleepy {
		runtime.Gosched()
	}
	return t.x
}

// TestRegisteredCellIsClearedOnReuse: an un-stolen fork's cell is never
// marked done by the fast path itself, so a reader that registers on it
// while the owner runs the task makes its latch sleepy, with a wait list.
// The owner's Join (settle) must set the latch and so wake the reader, and the cell, once freed, must be cleared when it is taken again
// (a free batch is not walked): the next fork that gets it must find it
// pending, with no waiter, and a reader of that fork must get its own
// result.
func TestRegisteredCellIsClearedOnReuse(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	Invoke(p, func(w *Worker) int {
		// A fork made first, and joined last, is published, so that the
		// forks after it stay private and their Joins take the fast path.
		first := ForkTask[int](w, square{3})
		defer func() { require.Equal(t, 9, first.Join(w)) }()
		var cellPtr atomic.Pointer[taskCell[int, waitForRegistration]]
		running := make(chan struct{})
		f := ForkTask[int](w, waitForRegistration{7, running, &cellPtr})
		dirty := f.c.typed.(*taskCell[int, waitForRegistration])
		cellPtr.Store(dirty)
		got := make(chan int)
		go func() {
			<-running
			v, err := f.Get(context.Background())
			if err != nil {
				v = -1
			}
			got <- v
		}()
		require.Equal(t, 7, f.Join(w))
		require.Equal(t, 7, <-got, "the registered reader is woken with the result")
		require.Equal(t, latchSet, dirty.latch.state.Load(), "settle sets the latch a reader registered on")

		// Fork and join cells of the same type until the dirty one comes
		// back; the reader has returned, so the held batch is freed.
		reused := false
		for i := range 4 * heldBatch {
			running := make(chan struct{})
			g := ForkTask[int](w, waitForRegistration{i, running, &cellPtr})
			c := g.c.typed.(*taskCell[int, waitForRegistration])
			if c == dirty {
				reused = true
				require.Equal(t, latchUnset, c.latch.state.Load(), "cleared when taken")
				require.Nil(t, c.latch.wait)
				cellPtr.Store(c)
				got := make(chan int)
				go func() {
					<-running
					v, _ := g.Get(context.Background())
					got <- v
				}()
				require.Equal(t, i, g.Join(w))
				require.Equal(t, i, <-got)
				break
			}
			// A task that does not wait for a reader: point it at a cell
			// that already says waiting.
			cellPtr.Store(dirtyStandIn)
			require.Equal(t, i, g.Join(w))
		}
		require.True(t, reused, "the registered cell was recycled")
		return 0
	})
}

// dirtyStandIn is a cell in the waiting state, for waitForRegistration
// tasks that should not wait.
var dirtyStandIn = func() *taskCell[int, waitForRegistration] {
	c := &taskCell[int, waitForRegistration]{}
	c.latch.state.Store(latchSleepy)
	return c
}()
