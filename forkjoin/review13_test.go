package forkjoin_test

import (
	"testing"

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
