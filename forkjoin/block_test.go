package forkjoin

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// raiseMax raises max to v if v is larger, for tests that record the most
// of something seen at once from several goroutines.
func raiseMax(max *atomic.Int64, v int64) {
	for {
		m := max.Load()
		if v <= m || max.CompareAndSwap(m, v) {
			return
		}
	}
}

// TestBlockCompensates: with parallelism 2, eight tasks block inside Block
// until CPU work that is queued behind them has finished. Without
// compensation this deadlocks (both workers blocked, the CPU work never
// runs). With it, the CPU work runs, and never on more than two workers at
// once: compensation keeps the parallelism, it does not add to it.
func TestBlockCompensates(t *testing.T) {
	p := New(WithParallelism(2), WithMaxBlocked(8))
	defer p.Close()
	const blockers, cpuTasks = 8, 200
	cpuDone := make(chan struct{})
	var blocked, maxBlocked, running, maxRunning, finished atomic.Int64
	var wg sync.WaitGroup
	wg.Add(blockers)
	for i := 0; i < blockers; i++ {
		require.NoError(t, p.Execute(func(w *Worker) {
			defer wg.Done()
			Block(w, func() {
				raiseMax(&maxBlocked, blocked.Add(1))
				<-cpuDone
				blocked.Add(-1)
			})
		}))
	}
	for i := 0; i < cpuTasks; i++ {
		require.NoError(t, p.Execute(func(w *Worker) {
			raiseMax(&maxRunning, running.Add(1))
			x := 0
			for k := 0; k < 20000; k++ {
				x += k * k % 7
			}
			_ = x
			running.Add(-1)
			if finished.Add(1) == cpuTasks {
				close(cpuDone)
			}
		}))
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("blocked tasks starved the pool")
	}
	require.Equal(t, int64(cpuTasks), finished.Load())
	require.LessOrEqual(t, maxRunning.Load(), int64(2), "compensation never oversubscribes")
	require.GreaterOrEqual(t, maxBlocked.Load(), int64(2))
	require.Eventually(t, func() bool { return p.Stats().Workers == 2 }, 30*time.Second, time.Millisecond,
		"compensating workers retire")
	// Workers publish their counters when they go idle, so the last
	// blocker's count may land after wg.Wait returns: wait for it (the
	// snapshot is exact once the pool is idle).
	require.Eventually(t, func() bool { return p.Stats().Blocks == blockers }, 30*time.Second, time.Millisecond,
		"every Block counted once the pool is idle: %v", p.Stats())
}

// TestBlockBeyondMaxRunsUncompensated: with no spares, Block still runs fn.
func TestBlockBeyondMaxRunsUncompensated(t *testing.T) {
	p := New(WithParallelism(1), WithMaxBlocked(-1))
	defer p.Close()
	got := Invoke(p, func(w *Worker) int {
		v := 0
		Block(w, func() { v = 42 })
		return v
	})
	require.Equal(t, 42, got)
	require.Equal(t, 1, p.Stats().Workers)
	require.PanicsWithValue(t, "forkjoin: Block called with a nil *Worker", func() { Block(nil, func() {}) })
}

func TestBadInputMessages(t *testing.T) {
	p := New(WithParallelism(-3))
	defer p.Close()
	require.Equal(t, runtime.GOMAXPROCS(0), p.Parallelism(), "parallelism <= 0 means GOMAXPROCS")
	big := New(WithParallelism(MaxParallelism + 100))
	require.Equal(t, MaxParallelism, big.Parallelism(), "capped")
	big.Close()

	require.PanicsWithValue(t, "forkjoin: WithMode called with Mode(7), not LIFO or FIFO", func() { New(WithMode(Mode(7))) })
	require.PanicsWithValue(t, "forkjoin: Priority(9) is not Urgent, Normal or Background", func() {
		_ = p.ExecutePriority(Priority(9), func(*Worker) {})
	})

	var nilFuture, zeroFuture *Future[int] = nil, new(Future[int])
	const notAFuture = " called on a nil *Future or a Future not made by Fork or Submit"
	Invoke(p, func(w *Worker) int {
		// A nil *Future gets the message too: a nil pointer dereference
		// here, in the runtime's frame, would read as a bug in magpie.
		require.PanicsWithValue(t, "forkjoin: Join"+notAFuture, func() { nilFuture.Join(w) })
		require.PanicsWithValue(t, "forkjoin: Join"+notAFuture, func() { zeroFuture.Join(w) })
		require.PanicsWithValue(t, "forkjoin: Fork called with a nil function", func() { Fork[int](w, nil) })
		require.PanicsWithValue(t, "forkjoin: Join called with a nil function", func() { Join[int, int](w, nil, nil) })
		return 0
	})
	require.PanicsWithValue(t, "forkjoin: Get"+notAFuture, func() { _, _ = nilFuture.Get(context.Background()) })
	require.PanicsWithValue(t, "forkjoin: Done"+notAFuture, func() { zeroFuture.Done() })
	submitted := Submit(p, func(*Worker) int { return 1 })
	var forked *Future[int]
	Invoke(p, func(w *Worker) int {
		forked = Fork(w, func(*Worker) int { return 2 })
		return forked.Join(w)
	})
	const nilWorker = "forkjoin: Future.Join called with a nil *Worker"
	require.PanicsWithValue(t, nilWorker, func() { submitted.Join(nil) })
	require.PanicsWithValue(t, nilWorker, func() { forked.Join(nil) })
	require.PanicsWithValue(t, "forkjoin: Invoke called with a nil function", func() { Invoke[int](p, nil) })
	require.PanicsWithValue(t, "forkjoin: Execute called with a nil function", func() { _ = p.Execute(nil) })
	require.PanicsWithValue(t, "forkjoin: Submit called with a nil function", func() { Submit[int](p, nil) })

	// A Future of another pool can be joined: the joiner helps its own pool
	// and waits for the other's completion.
	other := New(WithParallelism(1))
	defer other.Close()
	f := Submit(other, func(w *Worker) int { return fibTask(20).Compute(w) })
	require.Equal(t, 6765, Invoke(p, func(w *Worker) int { return f.Join(w) }))
}

// TestBlockPublishesForkedWork: a task forks two tasks, the second of which
// stays private in the split deque, then blocks until that second one has
// run. On one worker only the compensating worker can run it, so Block must
// make it stealable; without that this test hangs.
func TestBlockPublishesForkedWork(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Invoke(p, func(w *Worker) int {
			ran := make(chan struct{})
			x := Fork(w, func(*Worker) int { return 1 })
			y := Fork(w, func(*Worker) int { close(ran); return 2 })
			require.Equal(t, 1, w.deque.Len(), "y is private")
			Block(w, func() { <-ran })
			return x.Join(w) + y.Join(w)
		})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Block hid the task it waits for from the compensating worker")
	}
}

// TestWorkerIndexBelowMaxWorkers: with 2 workers and up to 3 compensating
// ones, 5 tasks that each block until all 5 run at once occupy every
// worker, spares included: their indices are exactly 0..4, all below
// MaxWorkers() = 5, though Parallelism() is 2.
func TestWorkerIndexBelowMaxWorkers(t *testing.T) {
	noSpares := New(WithParallelism(2), WithMaxBlocked(-1))
	require.Equal(t, 2, noSpares.MaxWorkers())
	noSpares.Close()

	p := New(WithParallelism(2), WithMaxBlocked(3))
	defer p.Close()
	require.Equal(t, 5, p.MaxWorkers())
	var mu sync.Mutex
	seen := map[int]bool{}
	all := make(chan struct{})
	var done sync.WaitGroup
	for i := 0; i < 5; i++ {
		done.Add(1)
		require.NoError(t, p.Execute(func(w *Worker) {
			defer done.Done()
			mu.Lock()
			seen[w.Index()] = true
			if len(seen) == 5 {
				close(all)
			}
			mu.Unlock()
			Block(w, func() {
				select {
				case <-all:
				case <-time.After(testenv.HangTimeout): // fails the Equal below
				}
			})
		}))
	}
	done.Wait()
	require.Equal(t, map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true}, seen)
}

// TestBlockingFindsTheCallingWorker: Blocking called from a task on a
// one-worker pool, with no *Worker passed, compensates as Block does: fn
// waits for a task queued on the same pool behind the caller, which only
// a compensating worker can run (a plain call deadlocks the pool). Called
// from a goroutine that is no worker, it just calls fn; a nil fn panics
// with the package's message.
func TestBlockingFindsTheCallingWorker(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	testenv.Within(t, "Blocking on the pool's only worker", func() {
		Invoke(p, func(*Worker) struct{} {
			ran := make(chan struct{})
			require.NoError(t, p.Execute(func(*Worker) { close(ran) }))
			Blocking(func() { <-ran })
			return struct{}{}
		})
	})
	testenv.WaitUntil(t, "the calling worker's Block counted", func() bool { return p.Stats().Blocks == 1 })

	called := false
	Blocking(func() { called = true })
	require.True(t, called)
	require.PanicsWithValue(t, "forkjoin: Blocking called with a nil function", func() { Blocking(nil) })
}

// TestBlockingWithoutSpareHelpsItsPool: Blocking on the only worker of a
// pool that may start no compensating worker (WithMaxBlocked(0)) runs fn
// on a goroutine of its own and runs the pool's queued tasks meanwhile, so
// fn waiting for a task queued behind the caller returns (a plain call
// held the only worker: deadlock). A panic of fn reaches the caller.
func TestBlockingWithoutSpareHelpsItsPool(t *testing.T) {
	p := New(WithParallelism(1), WithMaxBlocked(0))
	testenv.Within(t, "Blocking on the pool's only worker, no spare", func() {
		Invoke(p, func(*Worker) struct{} {
			ran := make(chan struct{})
			require.NoError(t, p.Execute(func(*Worker) { close(ran) }))
			Blocking(func() { <-ran })
			return struct{}{}
		})
	})
	testenv.Within(t, "a panic of fn", func() {
		Invoke(p, func(*Worker) struct{} {
			require.PanicsWithValue(t, "fn", func() { Blocking(func() { panic("fn") }) })
			return struct{}{}
		})
	})
	p.Close()
}
