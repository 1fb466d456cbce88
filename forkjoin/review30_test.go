package forkjoin_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestRev30CloseFromEverywhereLeavesNoWorker (review rev30): Pool.quiesced
// keeps a regular worker of a closed, drained pool until every live worker
// is idle. Its liveness is tried here where a worker may never have seen
// the pool closed when it goes idle last, or where the last to go idle is
// a compensating worker: never-joined forks that fork and Block (or call
// Blocking, which, with no compensating slot free, runs fn on a goroutine
// of its own while the worker helps), fewer at once than Parallelism()
// plus WithMaxBlocked, on 1 to 3 workers with 0 to 2 slots, in both modes,
// with worker hooks whose exit hook runs an Invoke inline with a fork;
// Close or Shutdown from outside, and also Close from the root task, from
// a Block's fn, from Blocking's fn and from the exit hook (each returns at
// once). Close must return within the hang limit with every fork done, no
// worker left (Stats), every start hook matched by an exit hook, and
// Stats never showing more idle workers than live ones or more live ones
// than MaxWorkers meanwhile. Passes on 6d6b6b9.
func TestRev30CloseFromEverywhereLeavesNoWorker(t *testing.T) {
	const (
		outside = iota
		fromTask
		fromBlock
		fromExitHook
		fromBlocking
		places
	)
	for round := range 2 * 9 * places {
		par, maxBlocked := 1+round%3, (round/3)%3
		where := (round / 9) % places
		mode := forkjoin.LIFO
		if round >= 9*places {
			mode = forkjoin.FIFO
		}
		name := fmt.Sprintf("round %d: par=%d maxBlocked=%d where=%d mode=%v", round, par, maxBlocked, where, mode)
		forks := par + maxBlocked - 1 // Blocks at once: below the bound
		blocks := forks > 0
		forks = max(forks, 1)

		var p *forkjoin.Pool
		var starts, exits, hookRuns atomic.Int32
		p = forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMaxBlocked(maxBlocked),
			forkjoin.WithMode(mode),
			forkjoin.WithWorkerHooks(
				func(int) { starts.Add(1) },
				func(int) {
					defer exits.Add(1)
					if where == fromExitHook {
						p.Close()
					}
					v := forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
						f := forkjoin.Fork(w, func(*forkjoin.Worker) int { return 1 })
						return 1 + f.Join(w)
					})
					if v == 2 {
						hookRuns.Add(1)
					}
				}))

		stop := make(chan struct{})
		sampled := make(chan string, 1)
		go func() { // Stats stays coherent while the pool closes
			msg := ""
			defer func() { sampled <- msg }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				runtime.Gosched() // on one P too, let the workers run
				s := p.Stats()
				if msg == "" && (s.Idle < 0 || s.Idle > s.Workers || s.Workers > p.MaxWorkers()) {
					msg = fmt.Sprintf("Stats: %d idle of %d workers (max %d)", s.Idle, s.Workers, p.MaxWorkers())
				}
			}
		}()

		var done atomic.Int32
		require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
			for range forks {
				forkjoin.Fork(w, func(w *forkjoin.Worker) int { // never joined
					defer done.Add(1)
					for i := range 3 {
						chT := make(chan struct{})
						forkjoin.Fork(w, func(*forkjoin.Worker) int { close(chT); return 0 }) // never joined
						if !blocks {
							continue // one worker, no slot: T runs once F returns
						}
						fn := func() {
							if i == 0 && (where == fromBlock || where == fromBlocking) {
								p.Close() // on a worker, or awaited: returns at once
							}
							<-chT
						}
						if where == fromBlocking {
							forkjoin.Blocking(fn)
						} else {
							forkjoin.Block(w, fn)
						}
					}
					return 0
				})
			}
			if where == fromTask {
				p.Close() // returns at once
			}
		}))
		if round%4 == 3 {
			ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
			require.NoError(t, p.Shutdown(ctx), name)
			cancel()
		} else {
			within(t, "Close, "+name, p.Close)
		}
		close(stop)
		require.Empty(t, <-sampled, name)
		require.Equal(t, int32(forks), done.Load(), name)
		s := p.Stats()
		require.Zero(t, s.Workers, name)
		require.Zero(t, s.Idle, name)
		require.Equal(t, starts.Load(), exits.Load(), name)
		require.Equal(t, exits.Load(), hookRuns.Load(), name)
	}
}
