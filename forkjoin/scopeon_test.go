package forkjoin_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// spawnTree spawns a tree of 1+3+...+3^depth tasks in s and counts them.
func spawnTree(s *forkjoin.Scope, w *forkjoin.Worker, depth int, count *atomic.Int64) {
	count.Add(1)
	if depth == 0 {
		return
	}
	for range 3 {
		s.Spawn(w, func(w *forkjoin.Worker) { spawnTree(s, w, depth-1, count) })
	}
}

// TestScopeOnFromEveryRunner opens a scope from outside a pool, from a task
// of the same pool (one worker: inline, or it would deadlock), from a task
// of another pool (one worker each: the caller's pool keeps going), and on
// a *Worker; each returns after every spawned task has finished, which
// ran on the pool asked for.
func TestScopeOnFromEveryRunner(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	other := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, other)
	const want = 1 + 3 + 9 + 27 + 81
	check := func(t *testing.T, open func(body func(*forkjoin.Scope, *forkjoin.Worker))) {
		var count atomic.Int64
		var wrongPool atomic.Bool
		within(t, "ScopeOn", func() {
			open(func(s *forkjoin.Scope, w *forkjoin.Worker) {
				if w.Pool() != p {
					wrongPool.Store(true)
				}
				spawnTree(s, w, 4, &count)
			})
		})
		require.EqualValues(t, want, count.Load(), "every spawned task finished before ScopeOn returned")
		require.False(t, wrongPool.Load())
	}
	t.Run("outside", func(t *testing.T) {
		check(t, func(body func(*forkjoin.Scope, *forkjoin.Worker)) { forkjoin.ScopeOn(p, body) })
	})
	t.Run("same-pool", func(t *testing.T) {
		check(t, func(body func(*forkjoin.Scope, *forkjoin.Worker)) {
			forkjoin.Invoke(p, func(*forkjoin.Worker) int { forkjoin.ScopeOn(p, body); return 0 })
		})
	})
	t.Run("other-pool", func(t *testing.T) {
		check(t, func(body func(*forkjoin.Scope, *forkjoin.Worker)) {
			forkjoin.Invoke(other, func(*forkjoin.Worker) int { forkjoin.ScopeOn(p, body); return 0 })
		})
	})
	t.Run("worker", func(t *testing.T) {
		check(t, func(body func(*forkjoin.Scope, *forkjoin.Worker)) {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int { forkjoin.ScopeOn(w, body); return 0 })
		})
	})
}

// TestScopeOnPanicAfterAllFinish: a panic in a spawned task or in the body
// reaches the caller of ScopeOn as a *PanicError, from outside and from
// inside the pool, after every other spawned task has run.
func TestScopeOnPanicAfterAllFinish(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	boom := errors.New("boom")
	for _, where := range []string{"spawned", "body"} {
		for _, from := range []string{"outside", "inside"} {
			t.Run(where+"/"+from, func(t *testing.T) {
				var ran atomic.Int64
				body := func(s *forkjoin.Scope, w *forkjoin.Worker) {
					for i := range 50 {
						s.Spawn(w, func(*forkjoin.Worker) {
							ran.Add(1)
							if where == "spawned" && i == 25 {
								panic(boom)
							}
						})
					}
					if where == "body" {
						panic(boom)
					}
				}
				var got any
				within(t, "ScopeOn", func() {
					got = recoverPanic(func() {
						if from == "outside" {
							forkjoin.ScopeOn(p, body)
						} else {
							forkjoin.Invoke(p, func(*forkjoin.Worker) int { forkjoin.ScopeOn(p, body); return 0 })
						}
					})
				})
				pe, ok := got.(*forkjoin.PanicError)
				require.True(t, ok, "panicked with %T %v", got, got)
				require.ErrorIs(t, pe, boom)
				require.EqualValues(t, 50, ran.Load())
			})
		}
	}
}

// TestScopeOnClosedPool: ScopeOn on a closed pool panics with ErrClosed,
// as Invoke does, and runs nothing.
func TestScopeOnClosedPool(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	p.Close()
	ran := false
	got := recoverPanic(func() { forkjoin.ScopeOn(p, func(*forkjoin.Scope, *forkjoin.Worker) { ran = true }) })
	require.Equal(t, forkjoin.ErrClosed, got)
	require.False(t, ran)
	require.PanicsWithValue(t, "forkjoin: ScopeOn called with a nil body", func() { forkjoin.ScopeOn(p, nil) })
}
