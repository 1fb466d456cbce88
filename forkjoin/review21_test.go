package forkjoin_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// Review rev21: adversarial tests of Future, latch callbacks, Then/AllOf/AnyOf
// and SubmitContext.

// A fork's Future read by many goroutines (Get, Done) while its owner joins
// it twice and then forks and joins many more tasks, recycling cells: every
// reader sees the right value; -race catches a reader of a reused cell.
func TestRev21ForkReadersWhileOwnerRecycles(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	const rounds = 200
	const readers = 4
	within(t, "rounds", func() {
		for round := range rounds {
			var wg sync.WaitGroup
			got := forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				f := forkjoin.Fork(w, func(*forkjoin.Worker) int { return round + 1 })
				for range readers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < 20; i++ {
							if f.Done() {
								v, err := f.Get(context.Background())
								assert.NoError(t, err)
								assert.Equal(t, round+1, v)
							}
						}
						v, err := f.Get(context.Background())
						assert.NoError(t, err)
						assert.Equal(t, round+1, v)
						assert.True(t, f.Done())
					}()
				}
				a := f.Join(w)
				b := f.Join(w)
				// recycle: many forks of the same type on this worker
				s := 0
				for k := range 100 {
					g := forkjoin.Fork(w, func(*forkjoin.Worker) int { return -k })
					s += g.Join(w)
				}
				_ = s
				return a + b
			})
			wg.Wait()
			require.Equal(t, 2*(round+1), got)
		}
	})
}

// Get with a context canceled at about the time the task completes: either
// the value or ctx.Err(), and a later Get(Background) the value.
func TestRev21GetCanceledRacesCompletion(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	within(t, "rounds", func() {
		for i := range 2000 {
			ctx, cancel := context.WithCancel(context.Background())
			f := forkjoin.Submit(p, func(*forkjoin.Worker) int { return i })
			go cancel()
			v, err := f.Get(ctx)
			if err != nil {
				require.ErrorIs(t, err, context.Canceled)
			} else {
				require.Equal(t, i, v)
			}
			v, err = f.Get(context.Background())
			require.NoError(t, err)
			require.Equal(t, i, v)
			cancel()
		}
	})
}

// ThenContext canceled while its source completes: the stage's Future
// completes exactly once, fn runs at most once, and a nil error means fn ran
// and its value is the result.
func TestRev21ThenContextCancelRacesSource(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	within(t, "rounds", func() {
		for i := range 2000 {
			ctx, cancel := context.WithCancel(context.Background())
			var runs atomic.Int32
			src := forkjoin.Submit(p, func(*forkjoin.Worker) int { return i })
			st := forkjoin.ThenContext(ctx, p, src, func(_ *forkjoin.Worker, v int) int {
				runs.Add(1)
				return v * 2
			})
			go cancel()
			v, err := st.Get(context.Background())
			require.LessOrEqual(t, runs.Load(), int32(1))
			if err == nil {
				require.Equal(t, int32(1), runs.Load())
				require.Equal(t, 2*i, v)
			} else {
				require.ErrorIs(t, err, context.Canceled)
				require.Equal(t, 0, v)
			}
			cancel()
		}
	})
}

// A chain of 100,000 Then stages on a pending source, panicking source,
// then a chain of ThenContext canceled at its root.
func TestRev21HundredThousandStages(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	const n = 100_000
	within(t, "value chain", func() {
		src, release := gate(p, 0)
		f := src
		for range n {
			f = forkjoin.Then(p, f, func(_ *forkjoin.Worker, v int) int { return v + 1 })
		}
		release()
		v, err := f.Get(context.Background())
		require.NoError(t, err)
		require.Equal(t, n, v)
	})
	within(t, "panic chain", func() {
		ch := make(chan struct{})
		src := forkjoin.Submit(p, func(w *forkjoin.Worker) int {
			forkjoin.Block(w, func() { <-ch })
			panic("boom")
		})
		f := src
		for range n {
			f = forkjoin.Then(p, f, func(_ *forkjoin.Worker, v int) int { return v + 1 })
		}
		close(ch)
		_, err := f.Get(context.Background())
		var pe *forkjoin.PanicError
		require.ErrorAs(t, err, &pe)
		_, err0 := src.Get(context.Background())
		require.Same(t, err0, err)
	})
	within(t, "context chain", func() {
		ctx, cancel := context.WithCancel(context.Background())
		src, release := gate(p, 0)
		defer release()
		f := src
		for range n / 20 { // every stage's AfterFunc is a goroutine: stay under -race's limit
			f = forkjoin.ThenContext(ctx, p, f, func(_ *forkjoin.Worker, v int) int { return v + 1 })
		}
		cancel()
		_, err := f.Get(context.Background())
		require.ErrorIs(t, err, context.Canceled)
	})
	within(t, "nested AllOf and AnyOf", func() {
		src, release := gate(p, 1)
		f := src
		for i := range n / 10 {
			if i%2 == 0 {
				a := forkjoin.AllOf(f, f)
				f = forkjoin.Then(p, a, func(_ *forkjoin.Worker, v []int) int { return v[0] })
			} else {
				f = forkjoin.AnyOf(f, f)
			}
		}
		release()
		v, err := f.Get(context.Background())
		require.NoError(t, err)
		require.Equal(t, 1, v)
	})
}

// AllOf and AnyOf with a panicking source, a source on a closed pool and
// the same Future twice.
func TestRev21CombinatorsMixedSources(t *testing.T) {
	var handled atomic.Int32
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) { handled.Add(1) }))
	defer closePool(t, p)
	closed := forkjoin.New(forkjoin.WithParallelism(1))
	closed.Close()
	within(t, "combinators", func() {
		ok := forkjoin.Submit(p, func(*forkjoin.Worker) int { return 7 })
		bad := forkjoin.Submit(p, func(*forkjoin.Worker) int { panic("x") })
		dead := forkjoin.Submit(closed, func(*forkjoin.Worker) int { return 1 })
		_, err := dead.Get(context.Background())
		require.ErrorIs(t, err, forkjoin.ErrClosed)

		v, err := forkjoin.AllOf(ok, ok, ok).Get(context.Background())
		require.NoError(t, err)
		require.Equal(t, []int{7, 7, 7}, v)

		_, err = forkjoin.AllOf(ok, dead, bad, bad).Get(context.Background())
		require.ErrorIs(t, err, forkjoin.ErrClosed)
		waitUntil(t, "the dropped panic reported once", func() bool { return handled.Load() == 1 })

		_, err = forkjoin.AllOf(bad, bad, dead).Get(context.Background())
		var pe *forkjoin.PanicError
		require.ErrorAs(t, err, &pe)

		_, err = forkjoin.AnyOf(dead, dead).Get(context.Background())
		require.ErrorIs(t, err, forkjoin.ErrClosed)
		_, err = forkjoin.Then(closed, ok, func(_ *forkjoin.Worker, v int) int { return v }).Get(context.Background())
		require.ErrorIs(t, err, forkjoin.ErrClosed)
		_, err = forkjoin.Then(p, dead, func(_ *forkjoin.Worker, v int) int { return v }).Get(context.Background())
		require.ErrorIs(t, err, forkjoin.ErrClosed)
	})
	time.Sleep(10 * time.Millisecond)
	assert.Equal(t, int32(1), handled.Load())
}

// Callbacks registered from many goroutines while the source completes:
// every stage runs exactly once.
func TestRev21RegisterWhileCompleting(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	within(t, "rounds", func() {
		for range 200 {
			src := forkjoin.Submit(p, func(*forkjoin.Worker) int { return 1 })
			var runs atomic.Int32
			var wg sync.WaitGroup
			const g, per = 4, 8
			futs := make([][]*forkjoin.Future[int], g)
			for i := range g {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithCancel(context.Background())
					for k := range per {
						futs[i] = append(futs[i], forkjoin.Then(p, src, func(_ *forkjoin.Worker, v int) int {
							runs.Add(1)
							return v
						}))
						// canceled stages, to make pruning happen under registration
						for range 5 {
							forkjoin.ThenContext(ctx, p, src, func(_ *forkjoin.Worker, v int) int { return v })
						}
						if k == per/2 {
							cancel()
						}
					}
					cancel()
				}()
			}
			wg.Wait()
			for _, fs := range futs {
				v, err := forkjoin.AllOf(fs...).Get(context.Background())
				require.NoError(t, err)
				require.Len(t, v, per)
			}
			require.Equal(t, int32(g*per), runs.Load())
		}
	})
}

// pruneMoot under concurrent registration on a source that stays pending:
// live stages interleaved with canceled ones, registered from several
// goroutines; every live stage runs exactly once when the source completes.
func TestRev21PruneUnderConcurrentRegistration(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	within(t, "prune", func() {
		src, release := gate(p, 3)
		var runs atomic.Int32
		var wg sync.WaitGroup
		var mu sync.Mutex
		var live []*forkjoin.Future[int]
		var cancels []context.CancelFunc
		defer func() {
			for _, c := range cancels {
				c()
			}
		}()
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 500 {
					ctx, cancel := context.WithCancel(context.Background())
					f := forkjoin.ThenContext(ctx, p, src, func(_ *forkjoin.Worker, v int) int { runs.Add(1); return v })
					if k%3 == 0 {
						mu.Lock()
						live = append(live, f)
						cancels = append(cancels, cancel)
						mu.Unlock()
					} else {
						cancel()
					}
				}
			}()
		}
		wg.Wait()
		release()
		v, err := forkjoin.AllOf(live...).Get(context.Background())
		require.NoError(t, err)
		require.Len(t, v, len(live))
		require.Equal(t, int32(len(live)), runs.Load())
	})
}

// Then on a pool that closes while the stage waits for its source on
// another pool: ErrClosed, the function never runs, nothing leaks.
func TestRev21ThenPoolClosesWhilePending(t *testing.T) {
	src := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, src)
	for range 50 {
		target := forkjoin.New(forkjoin.WithParallelism(1))
		f, release := gate(src, 1)
		ran := atomic.Bool{}
		st := forkjoin.Then(target, f, func(_ *forkjoin.Worker, v int) int { ran.Store(true); return v })
		go target.Close()
		release()
		_, err := get(t, st)
		if err != nil {
			require.ErrorIs(t, err, forkjoin.ErrClosed)
			require.False(t, ran.Load())
		}
		closePool(t, target)
	}
}

// SubmitContext whose task forks children that ignore the context, and is
// canceled: Get(Background) returns only once every joined child stopped.
func TestRev21SubmitContextForkedChildrenStopBeforeGet(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(4))
	defer closePool(t, p)
	for range 20 {
		var running atomic.Int32
		var started atomic.Int32
		ctx, cancel := context.WithCancel(context.Background())
		child := func(w *forkjoin.Worker) int {
			running.Add(1)
			started.Add(1)
			defer running.Add(-1)
			forkjoin.Block(w, func() { <-ctx.Done(); time.Sleep(5 * time.Millisecond) })
			return 1
		}
		f := forkjoin.SubmitContext(ctx, p, func(w *forkjoin.Worker) int {
			a := forkjoin.Fork(w, child)
			b := forkjoin.Fork(w, child)
			s := child(w)
			return s + b.Join(w) + a.Join(w)
		})
		waitUntil(t, "children started", func() bool { return started.Load() >= 2 })
		cancel()
		_, err := get(t, f)
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, int32(0), running.Load(), "a child still runs after Get returned")
	}
}

// The same with the cancellation seen at a fork: the task forked a child
// that ignores the context, then forks again after the cancel, which
// panics before the task reaches its Join of the first child. Every
// caller that cancels a computation must still wait for that child:
// SubmitContext's Get, InvokeContext from outside and inline from a task of
// the pool, and a ThenContext stage.
func TestRev21SubmitContextCanceledAtForkWaitsForEarlierFork(t *testing.T) {
	// Room for spares: the tasks wait in Block, and the test cancels only
	// once the first fork has started, which on one worker needs a spare.
	for _, par := range []int{1, 2, 4} {
		for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
			t.Run(fmt.Sprintf("p=%d/%v", par, mode), func(t *testing.T) {
				p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(mode), forkjoin.WithMaxBlocked(8))
				defer closePool(t, p)
				canceledAtForkWaits(t, p)
			})
		}
	}
}

func canceledAtForkWaits(t *testing.T, p *forkjoin.Pool) {
	callers := map[string]func(ctx context.Context, fn func(*forkjoin.Worker) int) error{
		"SubmitContext": func(ctx context.Context, fn func(*forkjoin.Worker) int) error {
			_, err := forkjoin.SubmitContext(ctx, p, fn).Get(context.Background())
			return err
		},
		"InvokeContext": func(ctx context.Context, fn func(*forkjoin.Worker) int) error {
			_, err := forkjoin.InvokeContext(ctx, p, fn)
			return err
		},
		"InvokeContextInline": func(ctx context.Context, fn func(*forkjoin.Worker) int) error {
			return forkjoin.Invoke(p, func(*forkjoin.Worker) error {
				_, err := forkjoin.InvokeContext(ctx, p, fn)
				return err
			})
		},
		"ThenContext": func(ctx context.Context, fn func(*forkjoin.Worker) int) error {
			src := forkjoin.Submit(p, func(*forkjoin.Worker) int { return 0 })
			_, err := forkjoin.ThenContext(ctx, p, src, func(w *forkjoin.Worker, _ int) int { return fn(w) }).Get(context.Background())
			return err
		},
	}
	for name, call := range callers {
		t.Run(name, func(t *testing.T) {
			for range 2 {
				var running, started atomic.Int32
				ctx, cancel := context.WithCancel(context.Background())
				fn := func(w *forkjoin.Worker) int {
					a := forkjoin.Fork(w, func(w *forkjoin.Worker) int {
						running.Add(1)
						started.Add(1)
						defer running.Add(-1)
						forkjoin.Block(w, func() { time.Sleep(30 * time.Millisecond) })
						return 1
					})
					forkjoin.Block(w, func() { <-ctx.Done() })
					b := forkjoin.Fork(w, func(*forkjoin.Worker) int { return 2 }) // panics: canceled
					return b.Join(w) + a.Join(w)
				}
				go func() {
					for started.Load() == 0 {
						time.Sleep(100 * time.Microsecond)
					}
					cancel()
				}()
				var err error
				within(t, name, func() { err = call(ctx, fn) })
				require.ErrorIs(t, err, context.Canceled)
				require.Equal(t, int32(0), running.Load(), "a forked child still runs after the call returned")
			}
		})
	}
}

// A fork's Future read with Get(ctx) whose ctx is canceled as the owner
// joins, by goroutines and by a task of another computation joining it
// (awaitFork from a worker), while the owner recycles cells; a panicking
// fork joined twice re-panics with the same value each time.
func TestRev21ForkGetCancelAndForeignJoinWhileRecycling(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	within(t, "rounds", func() {
		for round := range 300 {
			var wg sync.WaitGroup
			var joined *forkjoin.Future[int]
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				f := forkjoin.Fork(w, func(w *forkjoin.Worker) int {
					if round%7 == 0 {
						panic(round)
					}
					return round
				})
				ctx, cancel := context.WithCancel(context.Background())
				wg.Add(1)
				go func() {
					defer wg.Done()
					v, err := f.Get(ctx)
					switch {
					case errors.Is(err, context.Canceled):
					case round%7 == 0:
						var pe *forkjoin.PanicError
						assert.ErrorAs(t, err, &pe)
					default:
						assert.NoError(t, err)
						assert.Equal(t, round, v)
					}
				}()
				joined = forkjoin.Submit(p, func(w2 *forkjoin.Worker) int {
					r := recoverPanic(func() { assert.Equal(t, round, f.Join(w2)) })
					if round%7 == 0 {
						var pe *forkjoin.PanicError
						assert.ErrorAs(t, r.(error), &pe)
					} else {
						assert.Nil(t, r)
					}
					return 0
				})
				go cancel()
				r1 := recoverPanic(func() { f.Join(w) })
				r2 := recoverPanic(func() { f.Join(w) })
				if round%7 == 0 {
					assert.NotNil(t, r1)
					assert.Same(t, r1.(*forkjoin.PanicError), r2.(*forkjoin.PanicError))
				} else {
					assert.Nil(t, r1)
					assert.Nil(t, r2)
				}
				for k := range 40 {
					g := forkjoin.Fork(w, func(*forkjoin.Worker) int { return k })
					g.Join(w)
				}
				return 0
			})
			_, err := get(t, joined)
			require.NoError(t, err)
			wg.Wait()
		}
	})
}

// Join(w, a, b) inside a canceled SubmitContext: a unwinds at a fork after
// the cancel while b, stolen, ignores the context; Get(Background) returns
// only once b has stopped.
func TestRev21JoinUnwindingWaitsForStolenSide(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(4))
	defer closePool(t, p)
	for range 5 {
		var running, started atomic.Int32
		ctx, cancel := context.WithCancel(context.Background())
		f := forkjoin.SubmitContext(ctx, p, func(w *forkjoin.Worker) int {
			a, b := forkjoin.Join(w, func(w *forkjoin.Worker) int {
				forkjoin.Block(w, func() { <-ctx.Done() })
				g := forkjoin.Fork(w, func(*forkjoin.Worker) int { return 1 }) // panics
				return g.Join(w)
			}, func(w *forkjoin.Worker) int {
				running.Add(1)
				started.Add(1)
				defer running.Add(-1)
				forkjoin.Block(w, func() { time.Sleep(30 * time.Millisecond) })
				return 1
			})
			return a + b
		})
		waitUntil(t, "b started", func() bool { return started.Load() == 1 })
		cancel()
		_, err := get(t, f)
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, int32(0), running.Load())
	}
}

// A ThenContext stage canceled while it waits in p's queue behind a busy
// worker completes with ctx.Err() once a worker takes it, without running
// fn; chains on it see the same error.
func TestRev21ThenContextCanceledWhileQueued(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(1))
	defer closePool(t, p)
	for range 20 {
		hold := make(chan struct{})
		busy := forkjoin.Submit(p, func(*forkjoin.Worker) int { <-hold; return 0 }) // holds the only worker
		ctx, cancel := context.WithCancel(context.Background())
		src := forkjoin.Submit(forkjoin.Default(), func(*forkjoin.Worker) int { return 1 })
		var ran atomic.Bool
		st := forkjoin.ThenContext(ctx, p, src, func(_ *forkjoin.Worker, v int) int { ran.Store(true); return v })
		next := forkjoin.Then(forkjoin.Default(), st, func(_ *forkjoin.Worker, v int) int { return v })
		_, err := get(t, src)
		require.NoError(t, err)
		cancel()
		close(hold)
		_, err = get(t, st)
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, ran.Load())
		_, err2 := get(t, next)
		require.Equal(t, err, err2)
		_, err = get(t, busy)
		require.NoError(t, err)
	}
}

// TestCanceledSettleSurvivesGoexit: the root of a canceled computation
// waits, helping, for its forks still running elsewhere (computation.settle);
// a task the wait runs may call runtime.Goexit (here a Broadcast share
// posted to the settling worker by the running fork), which unwinds the
// wait. The root must still complete its Future once the fork has
// finished, however it was unwinding: on the merge of rev21 the settle ran
// inside the submission's deferred call (or after it had marked itself
// finished), so the second Goexit skipped the completion and the caller
// waited for ever.
func TestCanceledSettleSurvivesGoexit(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxBlocked(8), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}))
	defer closePool(t, p)
	for _, unwindAtFork := range []bool{true, false} {
		for range 3 {
			var rootIndex, aStarted, aRunning atomic.Int32
			rootIndex.Store(-1)
			ctx, cancel := context.WithCancel(context.Background())
			fn := func(w *forkjoin.Worker) int {
				rootIndex.Store(int32(w.Index()))
				forkjoin.Fork(w, func(w *forkjoin.Worker) int {
					aRunning.Add(1)
					defer aRunning.Add(-1)
					aStarted.Store(1)
					forkjoin.Block(w, func() { <-ctx.Done(); time.Sleep(20 * time.Millisecond) }) // the root settles meanwhile
					func() {
						defer func() { _ = recover() }() // the share's Goexit, reported to a
						forkjoin.Broadcast(w, func(w *forkjoin.Worker) {
							if int32(w.Index()) == rootIndex.Load() {
								runtime.Goexit()
							}
						})
					}()
					return 1
				})
				forkjoin.Block(w, func() { <-ctx.Done() })
				if unwindAtFork {
					forkjoin.Fork(w, func(*forkjoin.Worker) int { return 2 }) // panics: canceled
				}
				return 0 // a never joined: the canceled root waits for it all the same
			}
			go func() {
				for aStarted.Load() == 0 {
					time.Sleep(100 * time.Microsecond)
				}
				cancel()
			}()
			var err error
			within(t, "SubmitContext whose settle unwinds", func() {
				_, err = forkjoin.SubmitContext(ctx, p, fn).Get(context.Background())
			})
			require.Error(t, err)
			require.Zero(t, aRunning.Load(), "the fork still runs after the call returned")
		}
	}
}
