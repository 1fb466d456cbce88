package forkjoin_test

// Review rev23: an adversarial review of the spawn path (spawn.go,
// scope.go, scopeon.go, node.go and the parts of worker.go they use).

import (
	"context"
	"errors"
	"runtime"
	"sync"
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

// rev23Ledger records, for one scope, every spawn made and every task run:
// each spawned task has a number, given at the spawn, and runs once.
type rev23Ledger struct {
	next    atomic.Int64   // numbers given
	ran     []atomic.Int32 // times task k ran
	running atomic.Int64   // tasks started and not yet finished
	over    atomic.Bool    // more tasks than ran has room for
	// plain[k] is written plainly by task k as it ends and read after
	// RunScope returned: under -race, a missing happens-before edge from a
	// task's end to RunScope's return (through the batched retirement and
	// the credits) is reported.
	plain []int64
}

func (l *rev23Ledger) leave(k int64) {
	if k < int64(len(l.plain)) {
		l.plain[k] = k + 1
	}
	l.running.Add(-1)
}

func (l *rev23Ledger) give() int64 {
	k := l.next.Add(1) - 1
	if k >= int64(len(l.ran)) {
		l.over.Store(true)
	}
	return k
}

func (l *rev23Ledger) enter(k int64) {
	l.running.Add(1)
	if k < int64(len(l.ran)) {
		l.ran[k].Add(1)
	}
}

// rev23Task is a typed spawned task of the ledger's stress: see shape.
type rev23Task struct {
	l     *rev23Ledger
	s     *forkjoin.Scope
	k     int64
	depth int
}

func (t rev23Task) Compute(w *forkjoin.Worker) {
	t.l.enter(t.k)
	defer t.l.leave(t.k)
	rev23Children(t.l, t.s, w, t.k, t.depth)
}

// rev23Spawn spawns task k of depth d into s, typed or as a closure.
func rev23Spawn(l *rev23Ledger, s *forkjoin.Scope, w *forkjoin.Worker, d int) {
	k := l.give()
	if k%2 == 0 {
		forkjoin.SpawnTask(s, w, rev23Task{l, s, k, d})
		return
	}
	s.Spawn(w, func(w *forkjoin.Worker) {
		l.enter(k)
		defer l.leave(k)
		rev23Children(l, s, w, k, d)
	})
}

// rev23Children is what task k of depth d does: tasks of depth 1 spawn a
// few more into s, each number choosing a path: directly (the task's
// credits), from both sides of a Join (a fork that may run on a thief,
// with no credits or another task's), from a nested scope that also
// spawns into its own, and from inside Block (a compensating worker takes
// w's place).
func rev23Children(l *rev23Ledger, s *forkjoin.Scope, w *forkjoin.Worker, k int64, d int) {
	if d == 0 || k%3 != 0 {
		return
	}
	n := int(k % 70) // around the credit batch too
	switch k % 4 {
	case 0:
		for range n {
			rev23Spawn(l, s, w, d-1)
		}
	case 1:
		forkjoin.Join(w,
			func(w *forkjoin.Worker) int {
				for range n / 2 {
					rev23Spawn(l, s, w, d-1)
				}
				return 0
			},
			func(w *forkjoin.Worker) int {
				for range n - n/2 {
					rev23Spawn(l, s, w, d-1)
				}
				return 0
			})
	case 2:
		forkjoin.RunScope(w, func(inner *forkjoin.Scope, w *forkjoin.Worker) {
			for i := range n {
				if i%2 == 0 {
					rev23Spawn(l, s, w, d-1)
				} else {
					rev23Spawn(l, inner, w, 0)
				}
			}
		})
	case 3:
		forkjoin.Block(w, func() {
			for range n {
				rev23Spawn(l, s, w, d-1)
			}
		})
	}
}

// TestRev23SpawnExactlyOnceBeforeReturn: every spawned task runs exactly
// once, and none is still running when RunScope returns, for flat loops of
// sizes around the block (32) and the credit batch (64), with tasks that
// spawn more through every path (rev23Children), typed and closures, on
// 1, 2 and 4 workers, LIFO and FIFO. Run it under -race with -count.
func TestRev23SpawnExactlyOnceBeforeReturn(t *testing.T) {
	sizes := []int{0, 1, 31, 32, 33, 63, 64, 65, 1000}
	for _, par := range []int{1, 2, 4} {
		for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
			p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(mode))
			for round := range 3 {
				for _, size := range sizes {
					l := &rev23Ledger{ran: make([]atomic.Int32, 1<<16), plain: make([]int64, 1<<16)}
					var runningAtReturn int64
					within(t, "a stress scope", func() {
						forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
							forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
								for range size {
									rev23Spawn(l, s, w, 1)
								}
							})
							runningAtReturn = l.running.Load()
							return 0
						})
					})
					require.False(t, l.over.Load())
					require.Zero(t, runningAtReturn, "p=%d %v round %d size %d: a task still ran when RunScope returned", par, mode, round, size)
					given := l.next.Load()
					for k := range given {
						require.Equal(t, int32(1), l.ran[k].Load(), "p=%d %v size %d: task %d of %d ran %d times", par, mode, size, k, given, l.ran[k].Load())
						require.Equal(t, k+1, l.plain[k], "task %d's plain write not visible after RunScope", k)
					}
					for k := given; k < given+64 && k < int64(len(l.ran)); k++ {
						require.Zero(t, l.ran[k].Load())
					}
				}
			}
			requireHealthy(t, p)
			closePool(t, p)
		}
	}
}

// TestRev23SpawnerUnwindsMidBlock: a spawner that panics, calls
// runtime.Goexit or is canceled after n spawns (n around the block and the
// credit batch) leaves no credit unreturned: RunScope returns (a credit
// kept would hold the count above zero for ever), after the n tasks ran,
// with the unwinding reported. The spawner is the body or a spawned task.
func TestRev23SpawnerUnwindsMidBlock(t *testing.T) {
	type how int
	const (
		panics how = iota
		goexits
		canceled
	)
	for _, par := range []int{1, 2} {
		for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
			p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(mode))
			for _, n := range []int{0, 1, 31, 32, 33, 63, 64, 65, 200} {
				for _, h := range []how{panics, goexits, canceled} {
					for _, inTask := range []bool{false, true} {
						var ran atomic.Int64
						ctx, cancel := context.WithCancel(context.Background())
						spawner := func(s *forkjoin.Scope, w *forkjoin.Worker) {
							for range n {
								forkjoin.SpawnTask(s, w, countTask{&ran})
							}
							switch h {
							case panics:
								panic("rev23")
							case goexits:
								runtime.Goexit()
							case canceled:
								cancel()
								holdUntil(func() bool { return w.Err() != nil })
								forkjoin.SpawnTask(s, w, countTask{&ran}) // unwinds
							}
						}
						var v any
						var err error
						within(t, "a scope whose spawner unwinds", func() {
							v = recoverPanic(func() {
								_, err = forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
									forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
										if inTask {
											s.Spawn(w, func(w *forkjoin.Worker) { spawner(s, w) })
										} else {
											spawner(s, w)
										}
									})
									return 0
								})
							})
						})
						cancel()
						what := []string{"panic", "Goexit", "cancel"}[h]
						if h == canceled {
							require.ErrorIs(t, err, context.Canceled, "%s after %d spawns", what, n)
							require.LessOrEqual(t, ran.Load(), int64(n))
						} else {
							require.True(t, v != nil || err != nil, "%s after %d spawns (in task %v): not reported", what, n, inTask)
							require.Equal(t, int64(n), ran.Load(), "%s after %d spawns", what, n)
						}
					}
				}
			}
			requireHealthy(t, p)
			closePool(t, p)
		}
	}
}

// TestRev23SpawnFromWorkerHooks: a worker hook may open a scope on its own
// pool (ScopeOn runs inline there, as Invoke does) and spawn into it: the
// hooks of compensating workers, started by Block, run one at each start
// and exit, with spawns around the block and credit sizes; every task
// runs once before ScopeOn returns.
func TestRev23SpawnFromWorkerHooks(t *testing.T) {
	var pool atomic.Pointer[forkjoin.Pool]
	var closing atomic.Bool
	var scopes, bad atomic.Int64
	hook := func(int) {
		p := pool.Load()
		if p == nil || closing.Load() {
			return
		}
		for _, n := range []int{1, 33, 65} {
			var ran atomic.Int64
			forkjoin.ScopeOn(p, func(s *forkjoin.Scope, w *forkjoin.Worker) {
				for range n {
					s.Spawn(w, func(w *forkjoin.Worker) {
						ran.Add(1)
						forkjoin.SpawnTask(s, w, countTask{&ran})
					})
				}
			})
			if ran.Load() != int64(2*n) {
				bad.Add(1)
			}
			scopes.Add(1)
		}
	}
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithWorkerHooks(hook, hook))
	pool.Store(p)
	within(t, "Blocks that start compensating workers whose hooks spawn", func() {
		for range 20 {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				forkjoin.Block(w, func() { time.Sleep(time.Millisecond) })
				return 0
			})
		}
	})
	waitUntil(t, "hooks ran scopes", func() bool { return scopes.Load() > 0 })
	closing.Store(true)
	closePool(t, p)
	require.Zero(t, bad.Load(), "a hook's scope returned before its tasks ran")
}

// TestRev23CloseDuringScopes: Close while scopes submitted from outside
// still spawn (blocks on the workers' deques and free lists, batches not
// yet flushed) waits for them: every ScopeOn that got in returns with
// every task run, the others panic with ErrClosed, and no goroutine
// outlives the pool (TestMain's goleak).
func TestRev23CloseDuringScopes(t *testing.T) {
	for _, par := range []int{1, 2, 4} {
		for round := range 5 {
			p := forkjoin.New(forkjoin.WithParallelism(par))
			const callers = 4
			var wg sync.WaitGroup
			var bad atomic.Int64
			for c := range callers {
				wg.Go(func() {
					for i := 0; ; i++ {
						n := []int{1, 31, 33, 65, 1000}[(c+i)%5]
						var ran atomic.Int64
						plain := make([]int, n) // written plainly by the tasks, read after ScopeOn: -race checks the edge
						v := recoverPanic(func() {
							forkjoin.ScopeOn(p, func(s *forkjoin.Scope, w *forkjoin.Worker) {
								for j := range n {
									s.Spawn(w, func(w *forkjoin.Worker) {
										forkjoin.SpawnTask(s, w, countTask{&ran})
										plain[j] = 1
									})
								}
							})
						})
						if v != nil {
							if !errors.Is(v.(error), forkjoin.ErrClosed) {
								bad.Add(1)
							}
							return
						}
						sum := 0
						for _, x := range plain {
							sum += x
						}
						if ran.Load() != int64(n) || sum != n {
							bad.Add(1)
						}
					}
				})
			}
			time.Sleep(time.Duration(round) * time.Millisecond)
			within(t, "Close during scopes", func() { p.Close(); wg.Wait() })
			require.Zero(t, bad.Load(), "p=%d round %d", par, round)
		}
	}
}

// TestRev23ForeignAndUnwindingSpawnStress: the ledger's exactly-once check
// with spawns that cross pools (of the same mode or not) and tasks that
// unwind. Tasks of a scope on
// p call Invoke on q, whose task spawns into the scope from q's worker
// (the task runs on q's deques, under the scope's foreign number) while
// the p worker waits for it running any of p's tasks (waitForeign); some
// tasks panic or call runtime.Goexit after spawning. RunScope returns
// after every task ran exactly once, with the first unwinding reported.
func TestRev23ForeignAndUnwindingSpawnStress(t *testing.T) {
	modes := [][2]forkjoin.Mode{{forkjoin.LIFO, forkjoin.LIFO}, {forkjoin.FIFO, forkjoin.FIFO}, {forkjoin.LIFO, forkjoin.FIFO}, {forkjoin.FIFO, forkjoin.LIFO}}
	for _, par := range []int{1, 2} {
		for _, m := range modes {
			mode := m[0]
			p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(m[0]))
			q := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(m[1]))
			for round := range 2 {
				for _, size := range []int{1, 33, 65, 300} {
					l := &rev23Ledger{ran: make([]atomic.Int32, 1<<16), plain: make([]int64, 1<<16)}
					var task func(s *forkjoin.Scope, w *forkjoin.Worker, k int64, d int)
					spawnInto := func(s *forkjoin.Scope, w *forkjoin.Worker, d int) {
						k := l.give()
						s.Spawn(w, func(w *forkjoin.Worker) { task(s, w, k, d) })
					}
					task = func(s *forkjoin.Scope, w *forkjoin.Worker, k int64, d int) {
						l.enter(k)
						defer l.leave(k)
						if d == 0 {
							return
						}
						switch k % 9 {
						case 1:
							forkjoin.Invoke(q, func(w *forkjoin.Worker) int {
								for range int(k%40) + 1 {
									spawnInto(s, w, d-1)
								}
								return 0
							})
						case 2:
							for range int(k % 70) {
								spawnInto(s, w, d-1)
							}
						case 4:
							if round%2 == 0 {
								spawnInto(s, w, d-1)
								panic("rev23")
							}
						case 5:
							if round%2 == 1 {
								spawnInto(s, w, d-1)
								runtime.Goexit()
							}
						}
					}
					var v any
					var runningAtReturn int64
					within(t, "a foreign and unwinding stress scope", func() {
						v = recoverPanic(func() {
							forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
								defer func() { runningAtReturn = l.running.Load() }()
								forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
									for range size {
										spawnInto(s, w, 2)
									}
								})
								return 0
							})
						})
					})
					_ = v // a panic or a Goexit if a task of case 4 or 5 ran
					require.False(t, l.over.Load())
					require.Zero(t, runningAtReturn, "p=%d %v size %d: a task still ran when RunScope returned", par, mode, size)
					given := l.next.Load()
					for k := range given {
						require.Equal(t, int32(1), l.ran[k].Load(), "p=%d %v size %d: task %d of %d", par, mode, size, k, given)
						require.Equal(t, k+1, l.plain[k])
					}
				}
			}
			requireHealthy(t, p)
			requireHealthy(t, q)
			closePool(t, q)
			closePool(t, p)
		}
	}
}

// TestRev23SpareRunsBlocksThenRetires: on one worker, a scope's body
// spawns n tasks and blocks in Block until the compensating worker has run
// them all (its batch of retired tasks unflushed as it runs them back to
// back); Block returns, the compensating worker retires, and RunScope
// returns: its batch was flushed before it left, or the count would stay
// above zero for ever.
func TestRev23SpareRunsBlocksThenRetires(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	for _, n := range []int{1, 31, 32, 33, 63, 64, 65, 500} {
		var ran atomic.Int64
		var onSpare atomic.Int64
		ok := true
		within(t, "a scope whose tasks a compensating worker runs", func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
					for range n {
						s.Spawn(w, func(w *forkjoin.Worker) {
							if w.Index() >= p.Parallelism() {
								onSpare.Add(1)
							}
							ran.Add(1)
						})
					}
					forkjoin.Block(w, func() { ok = holdUntil(func() bool { return ran.Load() == int64(n) }) })
				})
				return 0
			})
		})
		require.True(t, ok, "n=%d: the compensating worker did not run the spawned tasks", n)
		require.Equal(t, int64(n), onSpare.Load(), "n=%d: every task ran on the compensating worker", n)
	}
}
