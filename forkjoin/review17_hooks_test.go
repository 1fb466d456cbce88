package forkjoin

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

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
