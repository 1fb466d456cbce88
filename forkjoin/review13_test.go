package forkjoin_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestSpawnAfterScopeReturnedAlwaysPanics: every spawn into a Scope whose
// RunScope has returned is a misuse and panics, not only the first one.
// On main the first misuse raised the scope's count from 0 to 1 and left
// it there, so the second one found a count above zero, was accepted, and
// its task ran with no RunScope to wait for it or raise its panic.
func TestSpawnAfterScopeReturnedAlwaysPanics(t *testing.T) {
	for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
		p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMode(mode))
		var leaked *forkjoin.Scope
		ran := 0
		var got [3]any
		within(t, "spawns after RunScope", func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) { leaked = s })
				for i := range 3 {
					got[i] = recoverPanic(func() { leaked.Spawn(w, func(*forkjoin.Worker) { ran++ }) })
				}
				return 0
			})
		})
		closePool(t, p)
		for i, v := range got {
			require.Equal(t, "forkjoin: Scope.Spawn called after its RunScope returned", v,
				"mode %v, misuse %d", mode, i)
		}
		require.Zero(t, ran, "a spawn after RunScope returned ran")
	}
}

// TestScopeCanceledMidFlightStopsWritingBeforeReturn: InvokeContext around
// a RunScope whose tasks spawn a tree of tasks on 2 and 4 workers, its
// context canceled at a random moment. InvokeContext must return (within
// the hang limit), and no spawned task may write to the caller's memory
// once it has: a task that starts or writes after the return is counted.
func TestScopeCanceledMidFlightStopsWritingBeforeReturn(t *testing.T) {
	for _, par := range []int{2, 4} {
		for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
			p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(mode))
			var late atomic.Int64
			rounds := 300
			if testing.Short() {
				rounds = 50
			}
			within(t, "canceled scopes", func() {
				for r := range rounds {
					ctx, cancel := context.WithCancel(context.Background())
					var returned atomic.Bool
					out := make([]int, 1<<12)
					var grow func(s *forkjoin.Scope, w *forkjoin.Worker, lo, hi int)
					grow = func(s *forkjoin.Scope, w *forkjoin.Worker, lo, hi int) {
						if returned.Load() {
							late.Add(1)
						}
						for hi-lo > 8 {
							mid := (lo + hi) / 2
							l, h := mid, hi
							s.Spawn(w, func(w *forkjoin.Worker) { grow(s, w, l, h) })
							hi = mid
						}
						for i := lo; i < hi; i++ {
							out[i] = i
						}
						if returned.Load() {
							late.Add(1)
						}
					}
					go func() {
						time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
						cancel()
					}()
					_, err := forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
						if r%2 == 0 {
							forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) { grow(s, w, 0, len(out)) })
						} else { // nested: an inner scope inside a spawned task
							forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
								s.Spawn(w, func(w *forkjoin.Worker) {
									forkjoin.RunScope(w, func(s2 *forkjoin.Scope, w *forkjoin.Worker) { grow(s2, w, 0, len(out)/2) })
								})
								grow(s, w, len(out)/2, len(out))
							})
						}
						return 0
					})
					returned.Store(true)
					if err == nil {
						for i, v := range out {
							if v != i {
								late.Add(1 << 32)
								break
							}
						}
					} else if !errors.Is(err, context.Canceled) {
						late.Add(1 << 40)
					}
					cancel()
				}
			})
			// let any straggler show itself
			time.Sleep(10 * time.Millisecond)
			closePool(t, p)
			require.Zero(t, late.Load(), "p=%d %v: writes after return (low 32 bits), wrong results (bit 32), wrong errors (bit 40)", par, mode)
		}
	}
}
