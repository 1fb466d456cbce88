package forkjoin_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestScopeOrderFollowsMode: on one worker, the tasks spawned in a scope
// run oldest first on a FIFO pool and newest first on a LIFO pool, and so
// do those of a scope nested in a spawned task (rayon's scope_fifo tests
// fifo_order and nested_fifo_order). Before the fix, RunScope's wait always
// took the newest, so a FIFO pool ran [9 ... 0].
func TestScopeOrderFollowsMode(t *testing.T) {
	for _, mode := range []forkjoin.Mode{forkjoin.FIFO, forkjoin.LIFO} {
		t.Run(mode.String(), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMode(mode))
			defer closePool(t, p)
			var mu sync.Mutex
			var order []int
			record := func(i int) { mu.Lock(); order = append(order, i); mu.Unlock() }
			within(t, "scope", func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
					forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
						for i := range 5 {
							s.Spawn(w, func(w *forkjoin.Worker) {
								record(10 * i)
								// A nested scope, in the same order.
								forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
									for j := 1; j <= 3; j++ {
										s.Spawn(w, func(*forkjoin.Worker) { record(10*i + j) })
									}
								})
							})
						}
					})
					return 0
				})
			})
			var want []int
			for i := range 5 {
				inner := []int{10*i + 1, 10*i + 2, 10*i + 3}
				if mode == forkjoin.LIFO {
					slices.Reverse(inner)
				}
				want = append(want, append([]int{10 * i}, inner...)...)
			}
			if mode == forkjoin.LIFO {
				// Outer spawns newest first; each runs its nested scope to
				// completion before the next outer spawn starts.
				var rev []int
				for i := 4; i >= 0; i-- {
					rev = append(rev, want[4*i:4*i+4]...)
				}
				want = rev
			}
			require.Equal(t, want, order)
		})
	}
}

// TestUnjoinedForksFollowMode: forks that nobody joins (event-style tasks)
// run oldest first on a FIFO pool and newest first on a LIFO one, once the
// forking task has returned.
func TestUnjoinedForksFollowMode(t *testing.T) {
	for _, mode := range []forkjoin.Mode{forkjoin.FIFO, forkjoin.LIFO} {
		t.Run(mode.String(), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMode(mode))
			defer closePool(t, p)
			var mu sync.Mutex
			var order []int
			done := make(chan struct{})
			require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
				for i := range 10 {
					forkjoin.Fork(w, func(*forkjoin.Worker) int {
						mu.Lock()
						order = append(order, i)
						if len(order) == 10 {
							close(done)
						}
						mu.Unlock()
						return 0
					})
				}
			}))
			within(t, "unjoined forks", func() { <-done })
			want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
			if mode == forkjoin.LIFO {
				slices.Reverse(want)
			}
			require.Equal(t, want, order)
		})
	}
}
