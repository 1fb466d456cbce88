package magpie

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// parallelismOf is the number of workers that can run pieces of a call on
// r at once: the bound on the calls that start after a decision.
func parallelismOf(r forkjoin.Runner) int {
	if w, ok := r.(*forkjoin.Worker); ok {
		return w.Pool().Parallelism()
	}
	return runnerPool(r).Parallelism()
}

// indexErr is the error of index i, told apart by its value.
type indexErr struct{ i int }

func (e indexErr) Error() string { return fmt.Sprintf("index %d failed", e.i) }

// errHelpers runs the four error helpers with the same per-index outcome
// (fails(i) says whether index i returns indexErr{i}), and returns the error
// and the indices that ran (a count per index).
var errHelpers = map[string]func(r forkjoin.Runner, n int, fails func(i int) bool, opts []Option) (error, []int32){
	"ForErr": func(r forkjoin.Runner, n int, fails func(int) bool, opts []Option) (error, []int32) {
		hits := make([]int32, n)
		err := ForErr(r, n, func(i int) error {
			atomic.AddInt32(&hits[i], 1)
			if fails(i) {
				return indexErr{i}
			}
			return nil
		}, opts...)
		return err, hits
	},
	"ForContext": func(r forkjoin.Runner, n int, fails func(int) bool, opts []Option) (error, []int32) {
		hits := make([]int32, n)
		err := ForContext(context.Background(), r, n, func(ctx context.Context, i int) error {
			atomic.AddInt32(&hits[i], 1)
			if fails(i) {
				return indexErr{i}
			}
			return nil
		}, opts...)
		return err, hits
	},
	"MapErr": func(r forkjoin.Runner, n int, fails func(int) bool, opts []Option) (error, []int32) {
		hits := make([]int32, n)
		in := make([]int, n)
		for i := range in {
			in[i] = i
		}
		out, err := MapErr(r, in, func(i int) (int, error) {
			atomic.AddInt32(&hits[i], 1)
			if fails(i) {
				return 0, indexErr{i}
			}
			return 2*i + 1, nil
		}, opts...)
		if err == nil {
			if len(out) != n {
				return fmt.Errorf("MapErr: %d results for %d elements", len(out), n), hits
			}
			for i := range in {
				if out[i] != 2*i+1 {
					return fmt.Errorf("MapErr: out[%d] = %d, want %d", i, out[i], 2*i+1), hits
				}
			}
		} else if out != nil {
			return fmt.Errorf("MapErr: results %v with error %v", out, err), hits
		}
		return err, hits
	},
	"MapContext": func(r forkjoin.Runner, n int, fails func(int) bool, opts []Option) (error, []int32) {
		hits := make([]int32, n)
		in := make([]int, n)
		for i := range in {
			in[i] = i
		}
		out, err := MapContext(context.Background(), r, in, func(ctx context.Context, i int) (string, error) {
			atomic.AddInt32(&hits[i], 1)
			if fails(i) {
				return "", indexErr{i}
			}
			return fmt.Sprint(i), nil
		}, opts...)
		if err == nil {
			for i := range in {
				if out[i] != fmt.Sprint(i) {
					return fmt.Errorf("MapContext: out[%d] = %q", i, out[i]), hits
				}
			}
		} else if out != nil {
			return fmt.Errorf("MapContext: results with error %v", err), hits
		}
		return err, hits
	},
}

// TestErrHelpersMatchSequential compares ForErr, ForContext, MapErr and
// MapContext with the sequential loop that returns at the first error, for
// every size 0..300, sizes around the thresholds and 1e5 and 1e6
// (forEachConfig), with no failure (every index runs once, results in
// order) and with one failing index (that index's error, and no index runs
// twice).
func TestErrHelpersMatchSequential(t *testing.T) {
	for name, run := range errHelpers {
		t.Run(name, func(t *testing.T) {
			forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
				err, hits := run(r, n, func(int) bool { return false }, opts)
				if err != nil {
					return err
				}
				for i, h := range hits {
					if h != 1 {
						return fmt.Errorf("no failure: index %d ran %d times", i, h)
					}
				}
				if n == 0 {
					return nil
				}
				// One failing index: at the start, the middle or the end,
				// chosen by n so that every place is covered.
				k := []int{0, n / 2, n - 1, n / 3}[n%4]
				err, hits = run(r, n, func(i int) bool { return i == k }, opts)
				if err != (indexErr{k}) {
					return fmt.Errorf("fail at %d: got %v", k, err)
				}
				for i, h := range hits {
					if h > 1 {
						return fmt.Errorf("fail at %d: index %d ran %d times", k, i, h)
					}
				}
				return nil
			})
		})
	}
}

// TestErrHelpersManyFailures: with every index from k on failing, the error
// is one of theirs; it is the lowest one (the sequential loop's) when the
// loop ran sequentially: a one-worker pool (inside a task or outside, a
// short loop that lasts goes parallel: probe.go, probetask.go). Large
// random sizes and k.
func TestErrHelpersManyFailures(t *testing.T) {
	p, single := testPools(t)
	rng := rand.New(rand.NewPCG(7, 8))
	maxN := 400_000
	if testenv.Race {
		maxN = 40_000
	}
	for round := range 20 {
		n := 1 + rng.IntN(maxN)
		if round%4 == 0 {
			n = 1 + rng.IntN(SequentialThreshold)
		}
		k := rng.IntN(n)
		g := grainOpts[round%len(grainOpts)]
		for _, kind := range runnerKinds(p, single) {
			for name, run := range errHelpers {
				var err error
				kind.call(func(r forkjoin.Runner) { err, _ = run(r, n, func(i int) bool { return i >= k }, g.opts) })
				var ie indexErr
				require.ErrorAs(t, err, &ie, "%s %s n=%d k=%d", name, kind.name, n, k)
				require.GreaterOrEqual(t, ie.i, k)
				if kind.name == "single" { // elsewhere a short loop too may go parallel, by time (the probes)
					require.Equal(t, k, ie.i, "%s %s n=%d: the sequential loop's error", name, kind.name, n)
				}
			}
		}
	}
}

// TestErrHelpersAllFailBound: when every call fails, no worker starts a
// second call (its own error stops it, and every piece it takes afterwards
// sees the bound), so at most one call per worker runs: the documented
// bound of "at most one call per worker after the error", with the error
// happening at the first call everywhere.
func TestErrHelpersAllFailBound(t *testing.T) {
	p, single := testPools(t)
	for _, kind := range runnerKinds(p, single) {
		for _, g := range grainOpts {
			for _, n := range []int{1, 10, SequentialThreshold + 1, 100_000} {
				for name, run := range errHelpers {
					kind.call(func(r forkjoin.Runner) {
						var calls int
						err, hits := run(r, n, func(int) bool { return true }, g.opts)
						for _, h := range hits {
							calls += int(h)
						}
						require.Error(t, err)
						require.LessOrEqual(t, calls, parallelismOf(r), "%s %s %s n=%d", name, kind.name, g.name, n)
					})
				}
			}
		}
	}
}

// TestForContextStopsAfterError: after a call fails, the bodies' context is
// done, and a call that starts with it already done is late; each worker
// other than the failing one starts at most one late call (its check came
// before the cancel), so late calls <= parallelism-1. Also when the parent
// context is canceled by a call instead (then the result is ctx.Err()).
func TestForContextStopsAfterError(t *testing.T) {
	p, single := testPools(t)
	n := 200_000
	if testenv.Race {
		n = 20_000
	}
	boom := errors.New("boom")
	for _, kind := range runnerKinds(p, single) {
		for _, g := range grainOpts[:4] {
			for _, k := range []int{0, 5000, n / 2, n - 1} {
				for _, parent := range []bool{false, true} {
					kind.call(func(r forkjoin.Runner) {
						ctx, cancel := context.WithCancel(context.Background())
						defer cancel()
						var late, calls atomic.Int64
						var err error
						testenv.Within(t, "ForContext", func() {
							err = ForContext(ctx, r, n, func(ctx context.Context, i int) error {
								calls.Add(1)
								if i == k {
									if parent {
										cancel()
										return nil
									}
									return boom
								}
								if ctx.Err() != nil {
									late.Add(1)
								}
								spin(50)
								return nil
							}, g.opts...)
						})
						what := fmt.Sprintf("%s %s k=%d parent=%v", kind.name, g.name, k, parent)
						if parent {
							require.ErrorIs(t, err, context.Canceled, what)
						} else {
							require.Equal(t, boom, err, what)
						}
						require.LessOrEqual(t, late.Load(), int64(parallelismOf(r)-1), what)
						if kind.name == "single" {
							require.Equal(t, int64(k+1), calls.Load(), what) // the sequential loop
						}
					})
				}
			}
		}
	}
}

// spin does about k units of work the compiler cannot remove.
func spin(k int) {
	x := uint64(k)
	for i := range k {
		x = x*6364136223846793005 + uint64(i)
	}
	spinSink.Store(x)
}

var spinSink atomic.Uint64

// TestErrHelpersWaitForCallsInFlight: ForContext returns only once every
// call that started has returned, like errgroup.Group.Wait. The calls other
// than the failing one wait for the cancel that its error causes, then
// sleep (to widen the window; nothing is timed) and only then return: when
// ForContext returns, as many calls have finished as started. Also with a
// panic instead of the error, and with runtime.Goexit (t.FailNow in a
// body), which unwound the failing worker without waiting for the calls
// other workers had taken until 2026-12-05 (forkjoin's
// TestGoexitWaitsForStolenWork). The failing call waits a little for others to start
// (a bounded number of polls: whether a piece is stolen in time is up to
// the scheduler, and a worker's newest forks are not stealable at once).
func TestErrHelpersWaitForCallsInFlight(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(4))
	defer p.Close()
	boom := errors.New("boom")
	var inFlight atomic.Int64
	defer func() { t.Logf("%d calls in flight at the 40 failures", inFlight.Load()) }()
	for _, how := range []string{"error", "panic", "goexit"} {
		for round := range 20 {
			var started, finished, entered atomic.Int64
			var err error
			var recovered any
			testenv.Within(t, "ForContext", func() {
				defer func() { recovered = recover() }()
				err = ForContext(context.Background(), p, 4, func(ctx context.Context, i int) error {
					started.Add(1)
					defer finished.Add(1)
					if i == round%4 {
						// Fail once the others are waiting, so that they are
						// in flight when the error happens.
						for poll := 0; entered.Load() < 3 && poll < 200; poll++ {
							time.Sleep(10 * time.Microsecond)
						}
						inFlight.Add(entered.Load())
						switch how {
						case "panic":
							panic(boom)
						case "goexit":
							runtime.Goexit()
						}
						return boom
					}
					entered.Add(1)
					// Bounded too: the failing index may be queued behind
					// this call on this worker's deque.
					for poll := 0; ctx.Err() == nil && poll < 200; poll++ {
						time.Sleep(10 * time.Microsecond)
					}
					time.Sleep(time.Millisecond)
					return ctx.Err()
				}, Grain(1))
			})
			require.Equal(t, started.Load(), finished.Load(), "%s: a call was running when ForContext returned", how)
			if how != "error" {
				pe, ok := recovered.(*forkjoin.PanicError)
				require.True(t, ok, "recovered %T %v", recovered, recovered)
				if how == "panic" {
					require.ErrorIs(t, pe, boom)
				} else {
					require.ErrorIs(t, pe, forkjoin.ErrGoexit)
				}
			} else {
				// The first error recorded, not a lower index's ctx.Err().
				require.Equal(t, boom, err)
			}
		}
	}
}

// TestForContextFirstErrorNotLowestIndex: index 0 waits for the cancel and
// then fails with its own error; index 1 fails first. The result is index
// 1's error, the cause, although index 0 is lower: the documented choice
// (errgroup's), which a "lowest index" rule would get wrong here. Index 0
// waits a bounded number of polls (index 1 may sit unpublished on the same
// worker's deque); a round where it gave up proves nothing and is only
// counted.
func TestForContextFirstErrorNotLowestIndex(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	errFirst, errAfter := errors.New("first"), errors.New("after the cancel")
	proved := 0
	for range 50 {
		var err error
		sawCancel := false
		testenv.Within(t, "ForContext", func() {
			err = ForContext(context.Background(), p, 2, func(ctx context.Context, i int) error {
				if i == 1 {
					return errFirst
				}
				for poll := 0; ctx.Err() == nil && poll < 1000; poll++ {
					time.Sleep(10 * time.Microsecond)
				}
				sawCancel = ctx.Err() != nil
				return errAfter
			}, Grain(1))
		})
		if sawCancel {
			proved++
			require.Equal(t, errFirst, err)
		}
	}
	t.Logf("index 0 failed after index 1's error in %d of 50 rounds", proved)
}

// TestForContextParentDone: a context done before the call runs no
// iteration and returns its error; one canceled during the loop, with no
// call failing, makes the result ctx.Err() and cancels the bodies' context.
func TestForContextParentDone(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(4))
	defer p.Close()
	for _, n := range []int{0, 1, 100, 100_000} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ran := false
		err := ForContext(ctx, p, n, func(context.Context, int) error { ran = true; return nil })
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, ran)
		dctx, dcancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
		_, err = MapContext(dctx, p, make([]int, n), func(context.Context, int) (int, error) { ran = true; return 0, nil })
		dcancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.False(t, ran)
	}
	for _, n := range []int{100, 100_000} {
		ctx, cancel := context.WithCancel(context.Background())
		var sawDone atomic.Bool
		var err error
		testenv.Within(t, "ForContext", func() {
			err = ForContext(ctx, p, n, func(bctx context.Context, i int) error {
				if i == n/2 {
					cancel()
					sawDone.Store(bctx.Err() != nil)
				}
				return nil
			}, Grain(16))
		})
		require.ErrorIs(t, err, context.Canceled)
		require.True(t, sawDone.Load(), "the bodies' context is canceled with its parent")
	}
}

// TestErrHelpersPanics: a panic in the body reaches the caller as a
// *forkjoin.PanicError (errors.Is and errors.As see the value) for every
// size and runner, and the pool survives.
func TestErrHelpersPanics(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(3))
	defer p.Close()
	single := forkjoin.New(forkjoin.WithParallelism(1))
	defer single.Close()
	boom := indexErr{-1}
	for _, kind := range runnerKinds(p, single) {
		for _, n := range []int{1, 10, SequentialThreshold + 1, 200_000} {
			for _, g := range grainOpts[:2] {
				for name, run := range errHelpers {
					var got any
					kind.call(func(r forkjoin.Runner) {
						defer func() { got = recover() }()
						run(r, n, func(i int) bool {
							if i == n/2 {
								panic(boom)
							}
							return false
						}, g.opts)
					})
					pe, ok := got.(*forkjoin.PanicError)
					require.True(t, ok, "%s %s n=%d %s: recovered %T %v", name, kind.name, n, g.name, got, got)
					require.ErrorIs(t, pe, boom)
					var ie indexErr
					require.ErrorAs(t, pe, &ie)
				}
			}
		}
		var sum atomic.Int64
		kind.call(func(r forkjoin.Runner) {
			require.NoError(t, ForErr(r, 5000, func(i int) error { sum.Add(int64(i)); return nil }))
		})
		require.Equal(t, int64(5000*4999/2), sum.Load())
	}
}

func TestErrHelpersBadInput(t *testing.T) {
	ctx := context.Background()
	require.PanicsWithValue(t, "magpie: ForErr called with a nil body", func() { ForErr(nil, 3, nil) })
	require.PanicsWithValue(t, "magpie: ForErr called with a negative n", func() { ForErr(nil, -1, func(int) error { return nil }) })
	require.PanicsWithValue(t, "magpie: ForContext called with a nil body", func() { ForContext(ctx, nil, 3, nil) })
	require.PanicsWithValue(t, "magpie: ForContext called with a nil context", func() {
		ForContext(nil, nil, 3, func(context.Context, int) error { return nil }) //nolint:staticcheck // the nil context is the test
	})
	require.PanicsWithValue(t, "magpie: ForContext called with a negative n", func() {
		ForContext(ctx, nil, -2, func(context.Context, int) error { return nil })
	})
	require.PanicsWithValue(t, "magpie: MapErr called with a nil function", func() { MapErr[int, int](nil, []int{1}, nil) })
	require.PanicsWithValue(t, "magpie: MapContext called with a nil function", func() { MapContext[int, int](ctx, nil, []int{1}, nil) })
	require.PanicsWithValue(t, "magpie: MapContext called with a nil context", func() {
		MapContext(nil, nil, []int{1}, func(context.Context, int) (int, error) { return 0, nil }) //nolint:staticcheck // the nil context is the test
	})
}

// TestErrHelpersSmallNoAlloc: ForErr's small-input path on a one-worker
// pool is a plain loop. (On a pool of several workers a short loop goes to
// the probe, from outside (probe.go) or inside a task (probetask.go),
// which allocates the engine's spec; For recycles its own: see
// TestShortLoopInsideTaskForNoAlloc.)
func TestErrHelpersSmallNoAlloc(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector allocates")
	}
	_, single := testPools(t)
	xs := make([]int, 100)
	body := func(i int) error { xs[i]++; return nil }
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = ForErr(single, len(xs), body) }))
	require.True(t, slices.ContainsFunc(xs, func(x int) bool { return x > 0 }))
}

// TestErrHelpersPanicAfterErrorIsRaised: a call that panics after another
// call's error was recorded still has its panic re-raised as a
// *forkjoin.PanicError, not dropped for the error: index 0 fails once
// index 1 has started, and index 1 panics once index 0 has failed, on two
// workers (a round where the two did not run at once proves nothing and
// is only counted; each waits at most a second for the other).
func TestErrHelpersPanicAfterErrorIsRaised(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	boom := errors.New("boom")
	for name, run := range errHelpers {
		together := 0
		for range 10 {
			var started1, failing0 atomic.Bool
			fails := func(i int) bool {
				if i == 1 {
					started1.Store(true)
					for deadline := time.Now().Add(time.Second); !failing0.Load() && time.Now().Before(deadline); {
						runtime.Gosched()
					}
					time.Sleep(time.Millisecond) // let index 0's error be recorded
					panic(boom)
				}
				for deadline := time.Now().Add(time.Second); !started1.Load() && time.Now().Before(deadline); {
					runtime.Gosched()
				}
				if started1.Load() {
					together++
				}
				failing0.Store(true)
				return true
			}
			var got any
			testenv.Within(t, name, func() {
				defer func() { got = recover() }()
				run(p, 2, fails, []Option{Grain(1)})
			})
			pe, ok := got.(*forkjoin.PanicError)
			require.True(t, ok, "%s: recovered %T %v", name, got, got)
			require.ErrorIs(t, pe, boom, name)
		}
		t.Logf("%s: %d of 10 rounds had both calls running", name, together)
	}
}
