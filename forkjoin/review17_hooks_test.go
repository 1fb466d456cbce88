package forkjoin

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/magpie-go/magpie/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStartHookCallsIntoItsPool: a start hook runs on a registered worker
// goroutine, so a call from it into its own pool is one from inside:
// Close returns at once, Shutdown says it did not wait (ErrInsidePool),
// and a Broadcast made by every worker's start hook at once completes,
// each worker running the others' calls while it waits.
func TestStartHookCallsIntoItsPool(t *testing.T) {
	t.Run("Close", func(t *testing.T) {
		var p atomic.Pointer[Pool]
		ready := make(chan struct{})
		var once sync.Once
		q := New(WithParallelism(2), WithWorkerHooks(func(int) {
			<-ready
			once.Do(func() { p.Load().Close() })
		}, nil))
		p.Store(q)
		close(ready)
		testenv.Within(t, "Close from a start hook, then Close", q.Close)
	})
	t.Run("Shutdown", func(t *testing.T) {
		var p atomic.Pointer[Pool]
		ready := make(chan struct{})
		got := make(chan error, 2)
		q := New(WithParallelism(2), WithWorkerHooks(func(int) {
			<-ready
			got <- p.Load().Shutdown(context.Background())
		}, nil))
		p.Store(q)
		close(ready)
		testenv.Within(t, "Shutdown from start hooks, then Close", q.Close)
		for range 2 {
			assert.ErrorIs(t, <-got, ErrInsidePool)
		}
	})
	t.Run("Broadcast", func(t *testing.T) {
		const n = 3
		var p atomic.Pointer[Pool]
		ready := make(chan struct{})
		var calls [n]atomic.Int32
		q := New(WithParallelism(n), WithWorkerHooks(func(int) {
			<-ready
			Broadcast(p.Load(), func(w *Worker) { calls[w.Index()].Add(1) })
		}, nil))
		p.Store(q)
		close(ready)
		testenv.Within(t, "a Broadcast from every start hook", func() {
			Invoke(q, func(*Worker) int { return 0 })
		})
		testenv.WaitUntil(t, "every broadcast's calls", func() bool {
			for i := range calls {
				if calls[i].Load() != n {
					return false
				}
			}
			return true
		})
		testenv.Within(t, "Close", q.Close)
	})
}

// TestBroadcastRacesClose: Broadcasts from many goroutines while the pool
// closes either run on every worker or panic with ErrClosed having run
// nothing, and Close returns.
func TestBroadcastRacesClose(t *testing.T) {
	for range 50 {
		p := New(WithParallelism(2))
		var ran, refused atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					if v := recover(); v != nil {
						if err, ok := v.(error); !ok || !errors.Is(err, ErrClosed) {
							panic(v)
						}
						refused.Add(1)
					}
				}()
				Broadcast(p, func(*Worker) { ran.Add(1) })
			}()
		}
		testenv.Within(t, "Close racing Broadcasts", func() { p.Close(); wg.Wait() })
		require.Equal(t, int32(2*(8-refused.Load())), ran.Load())
	}
}

// TestBroadcastAcrossPools: a task of each of two one-worker pools
// broadcasts on the other: each waiting worker runs the other's call.
func TestBroadcastAcrossPools(t *testing.T) {
	a, b := New(WithParallelism(1)), New(WithParallelism(1))
	defer a.Close()
	defer b.Close()
	var ran atomic.Int32
	start := make(chan struct{})
	fa := Submit(a, func(*Worker) int { <-start; Broadcast(b, func(*Worker) { ran.Add(1) }); return 0 })
	fb := Submit(b, func(*Worker) int { <-start; Broadcast(a, func(*Worker) { ran.Add(1) }); return 0 })
	close(start)
	testenv.Within(t, "crossed Broadcasts", func() {
		_, err := fa.Get(context.Background())
		require.NoError(t, err)
		_, err = fb.Get(context.Background())
		require.NoError(t, err)
	})
	assert.Equal(t, int32(2), ran.Load())
}

// TestBlockInsideBroadcast: fn of a Broadcast from outside may Block on its
// worker, and call Blocking (which runs its function on the worker, or on
// a goroutine of its own when no compensating worker is free).
func TestBlockInsideBroadcast(t *testing.T) {
	p := New(WithParallelism(2))
	defer p.Close()
	var found atomic.Int32
	testenv.Within(t, "Block and Blocking in a Broadcast", func() {
		Broadcast(p, func(w *Worker) {
			Block(w, func() {})
			Blocking(func() {
				if c := callingWorker(); c == w || c == nil {
					found.Add(1)
				}
			})
		})
	})
	assert.Equal(t, int32(2), found.Load())
}

// TestIdentityOfGoroutinesAroundTasks: while tasks run (so callingWorker
// looks its registry up rather than answering from its gate), a goroutine
// started by a task is no worker, deep stack growth between two calls
// keeps a worker's identity, a worker of pool A is no worker of pool B
// (Close of B from A's task waits for B's workers), and a goroutine that
// reuses an exited worker's g (many are started after a pool closes)
// is no worker.
func TestIdentityOfGoroutinesAroundTasks(t *testing.T) {
	keepATaskRunning(t)

	a := New(WithParallelism(2))
	defer a.Close()
	testenv.Within(t, "identities inside a task", func() {
		Invoke(a, func(w *Worker) int {
			require.Same(t, w, callingWorker())
			growStack(2000, func() { require.Same(t, w, callingWorker()) })
			got := make(chan *Worker)
			go func() { got <- callingWorker() }()
			require.Nil(t, <-got, "a goroutine started by a task is no worker")

			b := New(WithParallelism(1))
			require.Nil(t, callerWorker(b))
			closed := make(chan struct{})
			require.NoError(t, b.Execute(func(*Worker) { <-closed }))
			returned := make(chan struct{})
			go func() {
				// From A's task, Close of b waits for b's task.
				Invoke(a, func(*Worker) int { b.Close(); close(returned); return 0 })
			}()
			select {
			case <-returned:
				t.Error("Close of another pool from a task returned before that pool's work was done")
			case <-time.After(20 * time.Millisecond):
			}
			close(closed)
			<-returned
			return 0
		})
	})
	for range 10 {
		p := New(WithParallelism(4))
		Invoke(p, func(*Worker) int { return 0 })
		p.Close()
		testenv.Concurrently(t, "fresh goroutines after Close", 64, func(int) {
			assert.Nil(t, callingWorker())
			assert.False(t, cannotWaitFor(p))
		})
	}
}

// TestDefaultPoolCompensatingWorkersCallExit: the Default pool never
// closes, yet its compensating workers call the exit hook each time they
// retire, as on any pool; WithWorkerHooks said the Default pool's workers
// never call exit (review rev17).
func TestDefaultPoolCompensatingWorkersCallExit(t *testing.T) {
	withFreshDefault(t, func() {
		var exits atomic.Int32
		exited := make(chan int, 64)
		require.NoError(t, SetDefault(WithParallelism(1), WithWorkerHooks(nil, func(i int) {
			exits.Add(1)
			exited <- i
		})))
		p := Default()
		Invoke(p, func(w *Worker) int { Block(w, func() {}); return 0 })
		testenv.Within(t, "the compensating worker's exit hook", func() {
			assert.GreaterOrEqual(t, <-exited, p.Parallelism())
		})
	})
}
