package forkjoin_test

// Review rev23: an adversarial review of the spawn path (spawn.go,
// scope.go, scopeon.go, node.go and the parts of worker.go they use).

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestRev23GoexitInScopeWaitWaitsForSpawned: a task that RunScope's own
// wait runs (after the body returned) may call runtime.Goexit; the
// goroutine unwinds through RunScope, which must still not return before
// every spawned task has finished, as when the body itself calls Goexit
// (TestGoexitWaitsForStolenWork). Arranged with two workers: the body
// spawns other, waits until the other worker has taken it (it sleeps,
// then records that it finished), then spawns a, which RunScope's wait
// runs on the body's worker and which calls Goexit.
func TestRev23GoexitInScopeWaitWaitsForSpawned(t *testing.T) {
	for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
		p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMode(mode))
		rounds := 0
		for attempt := 0; rounds < 3 && attempt < 30; attempt++ {
			var started, finished, exited atomic.Bool
			var finishedFirst bool
			var v any
			within(t, "RunScope whose waited task calls Goexit", func() {
				v = recoverPanic(func() {
					forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
						forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
							s.Spawn(w, func(*forkjoin.Worker) {
								started.Store(true)
								time.Sleep(100 * time.Millisecond)
								finished.Store(true)
							})
							if !waitBriefly(started.Load) {
								return // not taken by the other worker: the round does not count
							}
							s.Spawn(w, func(*forkjoin.Worker) {
								exited.Store(true)
								runtime.Goexit()
							})
						})
						return struct{}{}
					})
				})
				finishedFirst = finished.Load() // before anything else waits
			})
			if !exited.Load() {
				continue
			}
			rounds++
			pe, ok := v.(*forkjoin.PanicError)
			require.True(t, ok, "got %T (%v), want *forkjoin.PanicError", v, v)
			require.ErrorIs(t, pe, forkjoin.ErrGoexit)
			require.True(t, finishedFirst, "%v: RunScope unwound (Invoke returned ErrGoexit) while a spawned task still ran", mode)
		}
		require.Positive(t, rounds, "%v: never arranged in 30 attempts", mode)
		requireHealthy(t, p)
		closePool(t, p)
	}
}
