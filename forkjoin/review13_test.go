package forkjoin_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
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
		var ran atomic.Int64
		var got, gotTyped [3]any
		within(t, "spawns after RunScope", func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) { leaked = s })
				for i := range 3 {
					got[i] = recoverPanic(func() { leaked.Spawn(w, func(*forkjoin.Worker) { ran.Add(1) }) })
				}
				for i := range 3 {
					gotTyped[i] = recoverPanic(func() { forkjoin.SpawnTask(leaked, w, countAction{&ran}) })
				}
				return 0
			})
		})
		closePool(t, p)
		for i, v := range got {
			require.Equal(t, "forkjoin: Scope.Spawn called after its RunScope returned", v,
				"mode %v, misuse %d", mode, i)
		}
		for i, v := range gotTyped {
			require.Equal(t, "forkjoin: SpawnTask called after its RunScope returned", v,
				"mode %v, typed misuse %d", mode, i)
		}
		require.Zero(t, ran.Load(), "a spawn after RunScope returned ran")
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

// TestChainsAcrossClosingPoolsComplete: chains of Then, ThenContext, AllOf
// and AnyOf across two pools, with sources that return, panic, call
// runtime.Goexit or are canceled (SubmitContext), while the second pool
// closes at a random moment and contexts are canceled at random moments:
// every Future completes (Get with a live context returns within the hang
// limit), with a value only if every stage before it returned one, and
// every stage's function runs at most once.
func TestChainsAcrossClosingPoolsComplete(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	for r := range rounds {
		var handled atomic.Int64
		a := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) { handled.Add(1) }))
		b := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) { handled.Add(1) }))
		ctx, cancel := context.WithCancel(context.Background())
		var runs [8]atomic.Int64
		src := func(i int) *forkjoin.Future[int] {
			fn := func(w *forkjoin.Worker) int {
				time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
				switch i % 4 {
				case 1:
					panic("boom")
				case 2:
					if r%3 == 0 {
						runtime.Goexit()
					}
				}
				return i
			}
			if i%2 == 0 {
				return forkjoin.SubmitContext(ctx, a, fn)
			}
			return forkjoin.Submit(a, fn)
		}
		var futs []*forkjoin.Future[int]
		for i := range 4 {
			f := src(i)
			g := forkjoin.Then(b, f, func(w *forkjoin.Worker, v int) int { runs[i].Add(1); return v + 1 })
			h := forkjoin.ThenContext(ctx, a, g, func(w *forkjoin.Worker, v int) int { runs[4+i].Add(1); return v + 1 })
			futs = append(futs, f, g, h)
		}
		all := forkjoin.AllOf(futs...)
		anyf := forkjoin.AnyOf(futs...)
		last := forkjoin.Then(b, all, func(w *forkjoin.Worker, v []int) int { return len(v) })
		go func() {
			time.Sleep(time.Duration(rand.IntN(100)) * time.Microsecond)
			if r%2 == 0 {
				cancel()
			}
			b.Close()
		}()
		within(t, "chains", func() {
			for _, f := range futs {
				_, _ = f.Get(context.Background())
			}
			_, _ = all.Get(context.Background())
			_, _ = anyf.Get(context.Background())
			_, _ = last.Get(context.Background())
		})
		for i := range runs {
			require.LessOrEqual(t, runs[i].Load(), int64(1), "stage %d ran twice", i)
		}
		// A value only if the chain returned values all the way.
		for i := range 4 {
			v, err := futs[3*i+2].Get(context.Background())
			if err == nil {
				require.Equal(t, i+2, v)
			}
		}
		cancel()
		closePool(t, b)
		closePool(t, a)
	}
}

// TestForkGetAbandonedWhileOwnerRecycles: a goroutine outside the pool
// calls Get on a leaked fork's Future with contexts that expire while the
// fork runs, and again after its owner joined it and went on forking (so
// that the cell is recycled for other tasks): every Get that returns
// without ctx's error returns the fork's own result.
func TestForkGetAbandonedWhileOwnerRecycles(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	var wrong atomic.Int64
	within(t, "abandoned Gets", func() {
		for r := range rounds {
			leak := make(chan *forkjoin.Future[int], 1)
			done := make(chan struct{})
			go func() {
				defer close(done)
				f := <-leak
				for k := 0; ; k++ {
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(20))*time.Microsecond)
					v, err := f.Get(ctx)
					cancel()
					if err == nil {
						if v != r {
							wrong.Add(1)
						}
						if k > 3 {
							return
						}
					}
				}
			}()
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				f := forkjoin.Fork(w, func(*forkjoin.Worker) int {
					time.Sleep(time.Duration(rand.IntN(30)) * time.Microsecond)
					return r
				})
				leak <- f
				v := f.Join(w)
				// recycle: many forks of the same type on this worker
				s := 0
				for i := range 64 {
					g := forkjoin.Fork(w, func(*forkjoin.Worker) int { return -i - 1 })
					s += g.Join(w)
				}
				return v + s
			})
			<-done
		}
	})
	require.Zero(t, wrong.Load(), "a Get returned another task's result")
}

// TestScopeGoexitAmongBatchedRetirements: spawned tasks that finish
// normally (retired in per-worker batches) and one that calls
// runtime.Goexit, on 2 and 4 workers, LIFO and FIFO, with typed SpawnTask
// too: the scope's count still reaches zero, so the Invoke around it
// returns (with ErrGoexit), within the hang limit.
func TestScopeGoexitAmongBatchedRetirements(t *testing.T) {
	for _, par := range []int{2, 4} {
		for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
			p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(mode))
			within(t, "scopes with a Goexit", func() {
				for r := range 200 {
					k := rand.IntN(500)
					var ran atomic.Int64
					v := recoverPanic(func() {
						forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
							forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
								for i := range 500 {
									s.Spawn(w, func(w *forkjoin.Worker) {
										ran.Add(1)
										spin13(i)
										if i == k && r%2 == 0 {
											runtime.Goexit()
										}
										if i == k {
											panic("boom")
										}
									})
								}
							})
							return 0
						})
					})
					pe, ok := v.(*forkjoin.PanicError)
					if !ok {
						t.Errorf("p=%d %v: Invoke panicked with %v, want a *PanicError", par, mode, v)
						return
					}
					_ = pe
				}
			})
			closePool(t, p)
		}
	}
}

func spin13(i int) {
	x := 0
	for j := range 200 + i%7*100 {
		x += j ^ i
	}
	spinSink.Add(int64(x & 1))
}

var spinSink atomic.Int64
