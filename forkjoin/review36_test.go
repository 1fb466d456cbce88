package forkjoin_test

// Review rev36: scopes, spawned tasks (blocks, batched retirement) and
// Broadcast.

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestRev36GoexitInSpawnedTaskFlushesBatch: a worker runs tasks of a
// scope to their end (retired in its batch, not yet from the count), then
// a task of the scope that calls runtime.Goexit. Its goroutine unwinds and
// the worker's exit hook runs on it; the hook here waits until RunScope
// has returned. The batch must leave the count before the unwinding runs
// any user code (a hook, or a defer of a task below on the stack): held
// there, RunScope's count never reached zero and both waited for ever.
// (WithWorkerHooks advises hooks not to wait for work of their own pool;
// the hook is the deterministic stand-in for the defers, which may.)
//
// Set-up, on 2 workers: worker B is held in a plain blocking task (it
// asks for no work), so the body's spawns on worker A after the first fill
// one private block, G oldest; the body then Blocks, which publishes the
// block, and the compensating worker takes it whole and runs the 8 others,
// then G.
func TestRev36GoexitInSpawnedTaskFlushesBatch(t *testing.T) {
	for round := range 5 {
		rev36GoexitRound(t, round)
	}
}

func rev36GoexitRound(t *testing.T, round int) {
	wait, rescue := rescuer()
	scopeReturned := make(chan struct{})
	var armed atomic.Bool
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithWorkerHooks(nil, func(int) {
		if armed.Load() {
			wait(scopeReturned)
		}
	}))
	defer closePool(t, p)
	defer close(rescue)
	release := holdOne(t, p, wait)
	var ran atomic.Int64
	within(t, "RunScope after a batch and a Goexit", func() {
		v := recoverPanic(func() {
			forkjoin.ScopeOn(p, func(s *forkjoin.Scope, w *forkjoin.Worker) {
				gStarted := make(chan struct{})
				// A first spawn serves a request B may have left before it
				// took its task: it publishes, and the next ones fill a
				// private block.
				s.Spawn(w, func(*forkjoin.Worker) { ran.Add(1) })
				s.Spawn(w, func(*forkjoin.Worker) { // the oldest: runs last
					armed.Store(true)
					close(gStarted)
					runtime.Goexit()
				})
				for range 8 {
					s.Spawn(w, func(*forkjoin.Worker) { ran.Add(1) })
				}
				forkjoin.Block(w, func() { wait(gStarted) })
			})
		})
		close(scopeReturned)
		close(release)
		var pe *forkjoin.PanicError
		require.True(t, errors.As(v.(error), &pe), "round %d: %v", round, v)
		require.ErrorIs(t, pe, forkjoin.ErrGoexit)
		require.EqualValues(t, 9, ran.Load())
	})
}

// TestRev36BroadcastSpawnsIntoScope: spawned tasks of a scope call
// Broadcast, whose fn, on every worker (idle, between tasks, or waiting
// in a join or in RunScope's wait), spawns into that scope, and some
// spawned tasks join and open nested scopes. Every task spawned runs
// exactly once and has finished when RunScope returns, in both modes and
// on 1, 2 and 4 workers.
func TestRev36BroadcastSpawnsIntoScope(t *testing.T) {
	for _, par := range []int{1, 2, 4} {
		for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
			p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(mode))
			within(t, "scope with Broadcasts", func() {
				for range 20 {
					var spawned, ran atomic.Int64
					var after atomic.Bool
					leaf := func(*forkjoin.Worker) {
						if after.Load() {
							panic("spawned task ran after RunScope returned")
						}
						ran.Add(1)
					}
					forkjoin.ScopeOn(p, func(s *forkjoin.Scope, w *forkjoin.Worker) {
						for i := range 8 {
							spawned.Add(1)
							s.Spawn(w, func(w *forkjoin.Worker) {
								ran.Add(1)
								if i%2 == 0 {
									forkjoin.Broadcast(w, func(w *forkjoin.Worker) {
										for range 3 {
											spawned.Add(1)
											s.Spawn(w, leaf)
										}
									})
									return
								}
								forkjoin.Join(w, func(w *forkjoin.Worker) int {
									forkjoin.RunScope(w, func(s2 *forkjoin.Scope, w *forkjoin.Worker) {
										spawned.Add(1)
										s.Spawn(w, leaf) // into the outer scope
										s2.Spawn(w, func(*forkjoin.Worker) {})
									})
									return 0
								}, func(w *forkjoin.Worker) int {
									spawned.Add(1)
									s.Spawn(w, leaf)
									return 0
								})
							})
						}
					})
					after.Store(true)
					require.Equal(t, spawned.Load(), ran.Load(), "p=%d %v", par, mode)
				}
			})
			closePool(t, p)
		}
	}
}

// TestRev36CancelScopeMidFlight: the context of the computation a scope
// runs in is canceled while its spawned tasks (some nested, some joining)
// run. InvokeContext returns the context's error (or nil if everything had
// finished), and only once every spawned task that started has finished:
// none runs on after it (counted in and out), in both modes, 2 and 4
// workers.
func TestRev36CancelScopeMidFlight(t *testing.T) {
	for _, par := range []int{2, 4} {
		for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
			p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(mode))
			canceled := 0
			within(t, "canceled scopes", func() {
				for round := range 30 {
					var in, out atomic.Int64
					ctx, cancel := context.WithCancel(context.Background())
					var tree func(s *forkjoin.Scope, w *forkjoin.Worker, d int)
					tree = func(s *forkjoin.Scope, w *forkjoin.Worker, d int) {
						in.Add(1)
						defer out.Add(1)
						if d == 0 {
							busy := 0
							for i := range 2000 {
								busy += i
							}
							_ = busy
							return
						}
						for range 3 {
							s.Spawn(w, func(w *forkjoin.Worker) { tree(s, w, d-1) })
						}
						if d%2 == 0 {
							forkjoin.Join(w, func(w *forkjoin.Worker) int {
								forkjoin.RunScope(w, func(s2 *forkjoin.Scope, w *forkjoin.Worker) {
									s2.Spawn(w, func(w *forkjoin.Worker) { tree(s2, w, 0) })
								})
								return 0
							}, func(*forkjoin.Worker) int { return 0 })
						}
					}
					go func() {
						time.Sleep(time.Duration(round*20) * time.Microsecond)
						cancel()
					}()
					_, err := forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
						forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) { tree(s, w, 6) })
						return 0
					})
					require.Equal(t, in.Load(), out.Load(), "a task ran on after InvokeContext returned")
					if err != nil {
						require.ErrorIs(t, err, context.Canceled)
						canceled++
					}
					cancel()
				}
			})
			t.Logf("p=%d %v: %d of 30 canceled", par, mode, canceled)
			closePool(t, p)
		}
	}
}

// TestRev36StealOfBlockCountsOnce: Stats().Steals counts deque elements
// taken, and one element may be a block of up to 32 spawned tasks
// (docs/design.md, "Blocks of spawned tasks"), so that a scope's tasks
// that all ran off their spawner's deque show far fewer steals than
// tasks. Set-up as in TestRev36GoexitInSpawnedTaskFlushesBatch: worker B
// held, the body on A spawns 33 tasks (one alone, then a block of 32) and
// Blocks until they have all run, on the compensating worker.
func TestRev36StealOfBlockCountsOnce(t *testing.T) {
	wait, rescue := rescuer()
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	defer close(rescue)
	release := holdOne(t, p, wait)
	const tasks = 33
	var elsewhere atomic.Int64
	within(t, "scope of 33 stolen tasks", func() {
		forkjoin.ScopeOn(p, func(s *forkjoin.Scope, w *forkjoin.Worker) {
			all := make(chan struct{})
			var ran atomic.Int64
			for range tasks {
				s.Spawn(w, func(x *forkjoin.Worker) {
					if x.Index() != w.Index() {
						elsewhere.Add(1)
					}
					if ran.Add(1) == tasks {
						close(all)
					}
				})
			}
			forkjoin.Block(w, func() { wait(all) })
		})
		close(release)
	})
	require.EqualValues(t, tasks, elsewhere.Load(), "every task ran off A's deque")
	waitUntil(t, "pool idle", func() bool { st := p.Stats(); return st.Idle == st.Workers })
	st := p.Stats()
	require.Less(t, st.Steals, uint64(tasks)/4, "%v", st)
	require.GreaterOrEqual(t, st.Executed, uint64(tasks), "%v", st)
	require.GreaterOrEqual(t, st.Forks, uint64(tasks), "%v", st)
}

// holdOne occupies one worker of p with a task that waits, through wait
// (so that the test's rescue frees it), until release is closed; it
// returns once that task runs.
func holdOne(t *testing.T, p *forkjoin.Pool, wait func(chan struct{})) (release chan struct{}) {
	holding, release := make(chan struct{}), make(chan struct{})
	require.NoError(t, p.Execute(func(*forkjoin.Worker) {
		close(holding)
		wait(release)
	}))
	within(t, "the held task", func() { <-holding })
	return release
}
