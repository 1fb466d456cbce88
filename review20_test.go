package magpie

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// keptYield is a seq that yields 0..n-1 and keeps its yield, so that a
// test can call it after the loop that ranged over the seq has returned
// (a misbehaving seq; the sequential range loop panics then).
func keptYield(n int, kept *func(int) bool) iter.Seq[int] {
	return func(yield func(int) bool) {
		*kept = yield
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

// TestSeqYieldAfterReturnRunsNothing: a seq that calls yield after ForSeq
// (or the range over MapSeq) has returned gets false, and the body (f)
// does not run: a call of it after the helper returned is one the caller
// can no longer order with its own code.
func TestSeqYieldAfterReturnRunsNothing(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	for _, opts := range [][]Option{nil, {Grain(1)}, {Grain(4)}} {
		var kept func(int) bool
		var calls atomic.Int64
		testenv.Within(t, "ForSeq", func() {
			ForSeq(p, keptYield(10, &kept), func(int) { calls.Add(1) }, opts...)
		})
		require.Equal(t, int64(10), calls.Load())
		var again []bool
		testenv.Within(t, "yield after ForSeq", func() {
			for i := range 20 {
				again = append(again, kept(100+i))
			}
		})
		time.Sleep(5 * time.Millisecond) // a chunk handed to the pool would run meanwhile
		require.Equal(t, int64(10), calls.Load(), "opts %v: body ran after ForSeq returned", opts)
		require.NotContains(t, again, true, "opts %v: yield after return", opts)

		calls.Store(0)
		got := 0
		testenv.Within(t, "MapSeq", func() {
			for range MapSeq(p, keptYield(10, &kept), func(x int) int { calls.Add(1); return x }, opts...) {
				got++
			}
		})
		require.Equal(t, 10, got)
		again = again[:0]
		testenv.Within(t, "yield after MapSeq", func() {
			for i := range 20 {
				again = append(again, kept(100+i))
			}
		})
		time.Sleep(5 * time.Millisecond)
		require.Equal(t, int64(10), calls.Load(), "opts %v: f ran after the range over MapSeq ended", opts)
		require.NotContains(t, again, true, "opts %v: yield after return", opts)
	}
}

// TestLongLoopOnPoolClosedMidLoop: a loop called from outside a pool that
// is closed while the loop runs on the caller finishes every index once
// on the caller, whatever its length, as a short loop does
// (TestShortLoopOnClosedPool). A long loop (more than SequentialThreshold
// indices) hands its rest to the pool itself once the probe's budget has
// passed; on a closed pool that hand-over panicked with ErrClosed, after
// part of the loop had run.
func TestLongLoopOnPoolClosedMidLoop(t *testing.T) {
	const n = 20 * SequentialThreshold
	for _, l := range []struct {
		name string
		run  func(p *forkjoin.Pool, body func(i int)) any
		want any
	}{
		{"For", func(p *forkjoin.Pool, body func(i int)) any {
			out := make([]int, n)
			For(p, n, func(i int) { body(i); out[i] = i })
			return out
		}, indices(n)},
		{"Map", func(p *forkjoin.Pool, body func(i int)) any {
			return Map(p, indices(n), func(i int) int { body(i); return i })
		}, indices(n)},
		{"Reduce", func(p *forkjoin.Pool, body func(i int)) any {
			return Reduce(p, indices(n), 0, func(a, i int) int { body(i); return a + i }, add[int])
		}, n * (n - 1) / 2},
	} {
		p := forkjoin.New(forkjoin.WithParallelism(2))
		var calls atomic.Int64
		var got any
		var v any
		testenv.Within(t, l.name, func() {
			v = recoverValue(func() {
				got = l.run(p, func(i int) {
					calls.Add(1)
					if i == 0 {
						p.Close()
					}
					spinFor(time.Microsecond) // the probe's budget passes within its first batches
				})
			})
		})
		require.Nil(t, v, "%s: panicked", l.name)
		require.Equal(t, l.want, got, l.name)
		require.Equal(t, int64(n), calls.Load(), l.name)
	}
}

// TestIndexFuncFirstMatchWhenLaterFinishesFirst: IndexFunc returns the
// lowest match even when a higher one is found first, and the lower one's
// predicate is still running then: from outside (the probe hands the rest
// over while index 0 waits), inside a task (shared), and with Grain(1).
func TestIndexFuncFirstMatchWhenLaterFinishesFirst(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	const n = 100
	s := indices(n)
	for _, opts := range [][]Option{nil, {Grain(1)}} {
		for _, inside := range []bool{false, true} {
			var late atomic.Bool
			pred := func(x int) bool {
				switch x {
				case 0, 1:
					// Lower matches: wait (bounded) until the high one is in.
					for start := time.Now(); !late.Load() && time.Since(start) < 5*time.Millisecond; {
						time.Sleep(10 * time.Microsecond)
					}
					return x == 1
				case n - 10:
					late.Store(true)
					return true
				}
				return false
			}
			var got int
			testenv.Within(t, "IndexFunc", func() {
				if inside {
					got = forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return IndexFunc(w, s, pred, opts...) })
				} else {
					got = IndexFunc(p, s, pred, opts...)
				}
			})
			require.Equal(t, 1, got, "opts %v inside %v", opts, inside)
		}
	}
}

// TestGoexitOnCallerWaitsForHandedRest: a runtime.Goexit in the caller's
// own index of a short loop whose rest went to the pool (from outside) or
// was shared with a helper (inside a task) unwinds the caller only once no
// other index runs.
func TestGoexitOnCallerWaitsForHandedRest(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	for _, inside := range []bool{false, true} {
		for _, n := range []int{2, 3, 50} {
			var running, after atomic.Int32
			g := newPairGate()
			body := func(i int) {
				running.Add(1)
				defer running.Add(-1)
				g.enter()
				if i == 0 {
					runtime.Goexit()
				}
				time.Sleep(time.Millisecond)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer func() { after.Store(running.Load()) }()
				defer func() { _ = recover() }() // inside: the Goexit arrives as a *PanicError
				if inside {
					forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
						For(w, n, body)
						return struct{}{}
					})
				} else {
					For(p, n, body)
				}
			}()
			select {
			case <-done:
			case <-time.After(testenv.HangTimeout):
				t.Fatal("hung")
			}
			require.Zero(t, after.Load(), "inside %v n=%d: an index ran after the Goexit unwound For", inside, n)
			require.False(t, g.hung.Load())
		}
	}
}

// TestReduceWithPanickingConstructorLater: newAcc panics only on a later
// call (the handed rest's, a forked piece's, a helper's chunk): the caller
// gets a *PanicError holding the value once nothing else runs.
func TestReduceWithPanickingConstructorLater(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	boom := errors.New("boom")
	for _, inside := range []bool{false, true} {
		for _, n := range []int{2, 50, 5000} {
			var made, running, after, started atomic.Int32
			in := indices(n)
			run := func(r forkjoin.Runner) {
				defer func() { after.Store(running.Load()) }()
				ReduceWith(r, in, func() int {
					if made.Add(1) > 1 {
						panic(boom)
					}
					return 0
				}, func(a, x int) int {
					running.Add(1)
					defer running.Add(-1)
					// The first two indices wait (bounded) for another to
					// start, so that the loop goes parallel.
					if started.Add(1) <= 2 {
						for start := time.Now(); started.Load() < 2 && time.Since(start) < 5*time.Millisecond; {
							time.Sleep(10 * time.Microsecond)
						}
					}
					spinFor(time.Microsecond)
					return a + x
				}, add[int])
			}
			var v any
			testenv.Within(t, "ReduceWith", func() {
				v = recoverValue(func() {
					if inside {
						forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} { run(w); return struct{}{} })
					} else {
						run(p)
					}
				})
			})
			require.Zero(t, after.Load(), "inside %v n=%d", inside, n)
			if made.Load() > 1 {
				require.ErrorIs(t, asError(v), boom, "inside %v n=%d", inside, n)
			}
		}
	}
}

// TestNestedOtherPoolStopsBeforeReturn: loops nested in a loop's body,
// the inner one on another pool, with a panic or a runtime.Goexit at one
// inner index while other inner and outer indices run: the outer call
// unwinds only once no index of either runs, from outside and inside a
// task, for short and long loops.
func TestNestedOtherPoolStopsBeforeReturn(t *testing.T) {
	p1 := forkjoin.New(forkjoin.WithParallelism(2))
	defer p1.Close()
	p2 := forkjoin.New(forkjoin.WithParallelism(2))
	defer p2.Close()
	boom := errors.New("boom")
	for _, how := range []string{"panic", "goexit", "error"} {
		for _, inside := range []bool{false, true} {
			for _, sizes := range [][2]int{{4, 50}, {3, 3000}, {2000, 4}} {
				outerN, innerN := sizes[0], sizes[1]
				var running, after atomic.Int32
				var v any
				var err error
				bad := outerN/2*innerN + innerN/2
				run := func(r forkjoin.Runner) {
					defer func() { after.Store(running.Load()) }()
					err = ForErr(r, outerN, func(i int) error {
						return ForErr(p2, innerN, func(j int) error {
							running.Add(1)
							defer running.Add(-1)
							spinFor(20 * time.Microsecond)
							if i*innerN+j == bad {
								switch how {
								case "panic":
									panic(boom)
								case "goexit":
									runtime.Goexit()
								}
								return boom
							}
							return nil
						})
					})
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					defer func() { v = recover() }()
					if inside {
						forkjoin.Invoke(p1, func(w *forkjoin.Worker) struct{} { run(w); return struct{}{} })
					} else {
						run(p1)
					}
				}()
				select {
				case <-done:
				case <-time.After(testenv.HangTimeout):
					t.Fatal("hung")
				}
				name := fmt.Sprintf("%s inside=%v %dx%d", how, inside, outerN, innerN)
				require.Zero(t, after.Load(), "%s: an inner index ran after the outer call unwound", name)
				switch how {
				case "error":
					require.ErrorIs(t, err, boom, name)
					require.Nil(t, v, name)
				case "panic":
					require.ErrorIs(t, asError(v), boom, name)
				}
			}
		}
	}
}

// TestCancelRacingShare: the computation's context (or ForContext's) is
// canceled at a random moment of a short loop inside a task, around the
// watcher's share: a call that returns normally ran every index exactly
// once (ForContext: with a nil error), and no index runs after it returns.
func TestCancelRacingShare(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	const n = 40
	for round := range 300 {
		ctx, cancel := context.WithCancel(context.Background())
		hits := make([]atomic.Int32, n)
		var running, after atomic.Int32
		normal := false
		var ferr error
		useCtx := round%2 == 0
		go func() {
			spinFor(time.Duration(rand.IntN(150)) * time.Microsecond)
			cancel()
		}()
		testenv.Within(t, "loop", func() {
			if round%3 == 0 { // from outside: the probe's hand-over
				useCtx = true
				defer func() { after.Store(running.Load()) }()
				ferr = ForContext(ctx, p, n, func(_ context.Context, i int) error {
					running.Add(1)
					defer running.Add(-1)
					hits[i].Add(1)
					spinFor(5 * time.Microsecond)
					return nil
				})
				normal = true
				return
			}
			_, _ = forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) struct{} {
				defer func() { after.Store(running.Load()) }()
				body := func(i int) {
					running.Add(1)
					defer running.Add(-1)
					hits[i].Add(1)
					spinFor(5 * time.Microsecond)
				}
				func() {
					defer func() { _ = recover() }()
					if useCtx {
						ferr = ForContext(ctx, w, n, func(_ context.Context, i int) error { body(i); return nil })
					} else {
						For(w, n, body)
					}
					normal = true
				}()
				return struct{}{}
			})
		})
		cancel()
		require.Zero(t, after.Load(), "round %d", round)
		for i := range hits {
			require.LessOrEqual(t, hits[i].Load(), int32(1), "round %d index %d", round, i)
		}
		if normal && ferr == nil {
			for i := range hits {
				require.Equal(t, int32(1), hits[i].Load(), "round %d index %d: returned normally, index not run", round, i)
			}
		}
	}
}

// TestLoopsRacingClose: loops from outside and inside tasks, short and
// long, whose pool is closed at a random moment by another goroutine:
// each runs every index exactly once and returns normally, whether the
// pool closed during the loop (the caller runs the rest) or before it (the
// caller runs the loop: TestClosedPoolRunsEveryHelperOnCaller; on 2bbbbe3
// that call panicked with ErrClosed having run none); nothing runs after
// it returns. Only forkjoin.Invoke, which the loop inside a task is
// submitted with, refuses a closed pool with ErrClosed, and then nothing
// ran.
func TestLoopsRacingClose(t *testing.T) {
	for round := range 60 {
		p := forkjoin.New(forkjoin.WithParallelism(2))
		var wg sync.WaitGroup
		for g := range 3 {
			n := []int{30, 3000, 200}[g]
			wg.Add(1)
			go func() {
				defer wg.Done()
				hits := make([]atomic.Int32, n)
				var running, after atomic.Int32
				body := func(i int) {
					running.Add(1)
					defer running.Add(-1)
					hits[i].Add(1)
					spinFor(3 * time.Microsecond)
				}
				v := recoverValue(func() {
					defer func() { after.Store(running.Load()) }()
					if g == 2 {
						// Inside a task, if the pool still accepts one.
						forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} { For(w, n, body); return struct{}{} })
						return
					}
					For(p, n, body)
				})
				want := int32(1)
				if v == forkjoin.ErrClosed && g == 2 {
					want = 0 // Invoke refused the task: nothing ran
				} else {
					assert.Nil(t, v, "round %d n=%d", round, n)
				}
				assert.Zero(t, after.Load(), "round %d n=%d", round, n)
				for i := range hits {
					if !assert.Equal(t, want, hits[i].Load(), "round %d n=%d index %d", round, n, i) {
						break
					}
				}
			}()
		}
		spinFor(time.Duration(rand.IntN(300)) * time.Microsecond)
		testenv.Within(t, "Close", p.Close)
		testenv.Within(t, "loops", wg.Wait)
		if t.Failed() {
			return
		}
	}
}

// TestTaskSlotsHeldByEndedLoops: a short loop inside a task whose first
// index waits until a second one has started goes parallel also right
// after many quick short loops inside tasks. Each of those (Map makes a
// record per call) left its record in a task slot until the watcher's
// next tick, so within a tick taskSlots of them held every slot, and the
// next loop found none and ran unwatched on its caller: its first index
// waited until the hang limit.
func TestTaskSlotsHeldByEndedLoops(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	in := ints(4)
	for round := range 5 {
		g := newPairGate()
		var full bool
		inTask(t, p, func(w *forkjoin.Worker) any {
			for range 4 * taskSlots {
				Map(w, in, func(x int) int { return x + 1 })
			}
			full = true
			for i := range taskLoops {
				full = full && taskLoops[i].rec.Load() != nil
			}
			return ForErr(w, 2, func(int) error { g.enter(); return nil })
		})
		require.False(t, g.hung.Load(), "round %d (every slot taken before the loop: %v)", round, full)
	}
}

// TestTaskSlotEvictionStress: loops inside tasks from several goroutines,
// quick ones (a record per call, filling the slots) between For loops on
// recycled specs whose indices now and then sleep, so that loops take the
// slots of ended ones while those ones' callers reopen them: every index
// runs exactly once (for -race).
func TestTaskSlotEvictionStress(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	in := indices(5)
	testenv.Within(t, "stress", func() {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for round := range 30 {
					forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
						for range 20 {
							out := Map(w, in, func(x int) int { return x + 1 })
							assert.Equal(t, 5, out[4])
						}
						n := 10 + (g+round)%20
						hits := make([]atomic.Int32, n)
						For(w, n, func(i int) {
							hits[i].Add(1)
							if i%7 == 0 {
								time.Sleep(100 * time.Microsecond)
							}
						})
						for i := range hits {
							assert.Equal(t, int32(1), hits[i].Load(), "g %d round %d index %d", g, round, i)
						}
						return struct{}{}
					})
				}
			}()
		}
		wg.Wait()
	})
}
