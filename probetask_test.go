package magpie

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// insideRunners are the ways a loop is called from inside a task of p:
// with the task's *Worker, and with the *Pool from the worker's goroutine.
func insideRunners(p *forkjoin.Pool) []struct {
	name string
	r    func(w *forkjoin.Worker) forkjoin.Runner
} {
	return []struct {
		name string
		r    func(w *forkjoin.Worker) forkjoin.Runner
	}{
		{"worker", func(w *forkjoin.Worker) forkjoin.Runner { return w }},
		{"pool", func(*forkjoin.Worker) forkjoin.Runner { return p }},
	}
}

// inTask runs fn inside a task of p and returns its result; a hang fails
// the test.
func inTask(t *testing.T, p *forkjoin.Pool, fn func(w *forkjoin.Worker) any) any {
	t.Helper()
	var got any
	testenv.Within(t, "the loop inside a task", func() {
		got = forkjoin.Invoke(p, fn)
	})
	return got
}

// TestShortLoopInsideTaskGoesParallel is TestShortLoopGoesParallel run
// inside a task, with the *Worker and with the *Pool as the Runner: a
// short loop whose first index cannot finish until a second one has
// started goes through, on a pool of two workers (the task's and one idle)
// and of four. Before, every loop of at most SequentialThreshold indices
// called inside a task ran on the task's worker, and the first index
// waited until the hang limit.
func TestShortLoopInsideTaskGoesParallel(t *testing.T) {
	p, _ := testPools(t)
	two := forkjoin.New(forkjoin.WithParallelism(2))
	defer two.Close()
	for _, l := range shortLoops {
		for _, n := range shortLoopSizes {
			t.Run(fmt.Sprintf("%s/n=%d", l.name, n), func(t *testing.T) {
				for _, pool := range []*forkjoin.Pool{two, p} {
					for _, ir := range insideRunners(pool) {
						g := newPairGate()
						got := inTask(t, pool, func(w *forkjoin.Worker) any {
							return l.run(ir.r(w), n, func(int) { g.enter() })
						})
						require.False(t, g.hung.Load(), "%s: the first index waited for a second one until the hang limit", ir.name)
						require.Equal(t, l.want(n), got, ir.name)
					}
				}
			})
		}
	}
}

// TestShortLoopInsideTaskNested: a short loop nested in a short loop
// inside a task, the outer loop's first index waiting for a second one and
// the inner loop of outer index 0 likewise, goes through at both levels,
// with the results of the sequential loops. (Only one inner loop waits:
// two workers cannot hold four waiting indices at once.)
func TestShortLoopInsideTaskNested(t *testing.T) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	defer two.Close()
	for _, n := range []int{2, 3, 20} {
		outer, inner := newPairGate(), newPairGate()
		got := inTask(t, two, func(w *forkjoin.Worker) any {
			out := make([][]int, n)
			ForW(w, n, func(r forkjoin.Runner, i int) {
				outer.enter()
				out[i] = Map(r, indices(n), func(j int) int {
					if i == 0 {
						inner.enter()
					}
					return i*100 + j
				})
			})
			return out
		})
		want := make([][]int, n)
		for i := range want {
			want[i] = make([]int, n)
			for j := range want[i] {
				want[i][j] = i*100 + j
			}
		}
		require.Equal(t, want, got, "n=%d", n)
		require.False(t, outer.hung.Load(), "n=%d: outer loop", n)
		require.False(t, inner.hung.Load(), "n=%d: inner loop", n)
	}
}

// TestShortLoopInsideTaskPanic: a panic in a shared index, on the task's
// worker or on a helper, reaches the task as one *forkjoin.PanicError
// holding the value, and the loop returns only once no index of it runs.
func TestShortLoopInsideTaskPanic(t *testing.T) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	defer two.Close()
	boom := errors.New("boom")
	for _, l := range shortLoops {
		for _, n := range shortLoopSizes {
			for _, at := range []int{0, n - 1} {
				g := newPairGate()
				var running atomic.Int32
				got := inTask(t, two, func(w *forkjoin.Worker) any {
					v := recoverValue(func() {
						l.run(w, n, func(i int) {
							running.Add(1)
							defer running.Add(-1)
							g.enter()
							if i == at {
								panic(boom)
							}
						})
					})
					return [2]any{v, running.Load()}
				}).([2]any)
				v := got[0]
				require.Equal(t, int32(0), got[1], "%s n=%d: an index still running after the loop unwound", l.name, n)
				var pe *forkjoin.PanicError
				require.ErrorAs(t, asError(v), &pe, "%s n=%d at=%d", l.name, n, at)
				require.ErrorIs(t, pe, boom, "%s n=%d at=%d", l.name, n, at)
				require.Equal(t, boom, pe.Value, "%s n=%d at=%d: wrapped once", l.name, n, at)
				require.False(t, g.hung.Load(), "%s n=%d", l.name, n)
			}
		}
	}
}

// TestShortLoopInsideTaskEarlyExit: the early exits of IndexFunc, Any,
// ForErr and ForContext hold for a shared loop inside a task: once a
// match, an error or a cancel at index 1 (run by a helper while the task's
// worker waits in index 0) is known, at most one more call starts per
// worker.
func TestShortLoopInsideTaskEarlyExit(t *testing.T) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	defer two.Close()
	bound := two.Parallelism()
	for _, n := range shortLoopSizes {
		var decided atomic.Bool
		var late atomic.Int32
		run := func(name string, loop func(w *forkjoin.Worker, enter func()) any, want any) {
			decided.Store(false)
			late.Store(0)
			g := newPairGate()
			got := inTask(t, two, func(w *forkjoin.Worker) any {
				return loop(w, func() {
					if decided.Load() {
						late.Add(1)
					}
					g.enter()
				})
			})
			assert.Equal(t, want, got, "%s n=%d", name, n)
			assert.LessOrEqual(t, int(late.Load()), bound, "%s n=%d", name, n)
			assert.False(t, g.hung.Load(), "%s n=%d", name, n)
		}
		run("IndexFunc", func(w *forkjoin.Worker, enter func()) any {
			return IndexFunc(w, indices(n), func(x int) bool {
				enter()
				if x == 1 || x == n-1 {
					decided.Store(x == 1)
					return true
				}
				return false
			})
		}, 1)
		run("Any", func(w *forkjoin.Worker, enter func()) any {
			return Any(w, indices(n), func(x int) bool { enter(); decided.Store(x == 1); return x == 1 })
		}, true)
		fail := errors.New("index 1")
		run("ForErr", func(w *forkjoin.Worker, enter func()) any {
			return ForErr(w, n, func(i int) error {
				enter()
				if i == 1 {
					decided.Store(true)
					return fail
				}
				return nil
			})
		}, fail)
		run("ForContext", func(w *forkjoin.Worker, enter func()) any {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			return ForContext(ctx, w, n, func(_ context.Context, i int) error {
				enter()
				if i == 1 {
					cancel()
					decided.Store(true)
				}
				return nil
			})
		}, context.Canceled)
	}
}

// TestShortLoopInsideTaskReturnsAfterShared: a loop inside a task returns
// only once every index of it has returned, helpers' included.
func TestShortLoopInsideTaskReturnsAfterShared(t *testing.T) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	defer two.Close()
	for _, n := range shortLoopSizes {
		var running atomic.Int32
		g := newPairGate()
		left := inTask(t, two, func(w *forkjoin.Worker) any {
			For(w, n, func(i int) {
				running.Add(1)
				defer running.Add(-1)
				g.enter()
				if i != 0 {
					time.Sleep(time.Millisecond)
				}
			})
			return running.Load()
		})
		require.Equal(t, int32(0), left, "n=%d: an index still running after For returned", n)
		require.False(t, g.hung.Load())
	}
}

// TestShortLoopInsideTaskOnClosedPool: a loop inside a task of a pool
// closed meanwhile (Close waits for the task) still runs every index once:
// the helpers cannot be submitted, and the task's worker runs the rest.
func TestShortLoopInsideTaskOnClosedPool(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	out := make([]int32, 50)
	f := forkjoin.Submit(p, func(w *forkjoin.Worker) bool {
		For(w, len(out), func(i int) {
			if i == 0 {
				go p.Close()
				for p.Execute(func(*forkjoin.Worker) {}) == nil {
					time.Sleep(watcherTick)
				}
				time.Sleep(20 * watcherTick) // the watcher looks meanwhile
			}
			atomic.AddInt32(&out[i], 1)
		})
		return true
	})
	var ok bool
	testenv.Within(t, "the task on the closing pool", func() { ok, _ = f.Get(context.Background()) })
	require.True(t, ok)
	for i := range out {
		require.Equal(t, int32(1), out[i], "index %d", i)
	}
	p.Close()
}

// TestShortLoopInsideTaskCanceled: a shared loop inside InvokeContext
// whose context is canceled stops claiming indices, and InvokeContext
// returns ctx.Err(); no index runs after it returns.
func TestShortLoopInsideTaskCanceled(t *testing.T) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	defer two.Close()
	const n = 200
	ctx, cancel := context.WithCancel(context.Background())
	var ran, running atomic.Int32
	g := newPairGate()
	var err error
	testenv.Within(t, "the canceled loop", func() {
		_, err = forkjoin.InvokeContext(ctx, two, func(w *forkjoin.Worker) int {
			For(w, n, func(i int) {
				running.Add(1)
				defer running.Add(-1)
				ran.Add(1)
				if i == 1 {
					cancel() // before index 0 can go on: it finds the computation canceled
				}
				if i < 2 {
					g.enter()
				}
				time.Sleep(100 * time.Microsecond)
			})
			return 0
		})
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, running.Load())
	require.Less(t, int(ran.Load()), n, "the loop ran every index despite the cancel")
	require.False(t, g.hung.Load())
}

// TestShortLoopInsideTaskStress runs short loops, whose indices now and
// then sleep, inside tasks of a pool from several goroutines at once, and
// nested in one another, checking every result: for -race.
func TestShortLoopInsideTaskStress(t *testing.T) {
	p, _ := testPools(t)
	rounds := 30
	if testing.Short() || testenv.Race {
		rounds = 10
	}
	testenv.Concurrently(t, "the stress loops", 4, func(c int) {
		rng := rand.New(rand.NewPCG(uint64(c), 11))
		for range rounds {
			l := shortLoops[rng.IntN(len(shortLoops))]
			n := 2 + rng.IntN(150)
			slow := rng.IntN(n)
			nested := rng.IntN(3) == 0
			got := forkjoin.Invoke(p, func(w *forkjoin.Worker) any {
				var r forkjoin.Runner = w
				if rng.IntN(2) == 0 {
					r = p
				}
				return l.run(r, n, func(i int) {
					if i == slow {
						time.Sleep(200 * time.Microsecond)
					}
					if nested && i%16 == 0 {
						For(p, 8, func(int) { time.Sleep(20 * time.Microsecond) })
					}
				})
			})
			if !assert.Equal(t, l.want(n), got, "%s n=%d", l.name, n) {
				return
			}
		}
	})
}

// TestShortLoopInsideTaskForNoAlloc: a short For inside a task that ends
// before the watcher shares it allocates nothing: its spec, record
// included, is recycled.
func TestShortLoopInsideTaskForNoAlloc(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector allocates")
	}
	p, _ := testPools(t)
	xs := make([]int, 100)
	body := func(i int) { xs[i]++ }
	forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { For(w, len(xs), body) }))
		return struct{}{}
	})
	require.Equal(t, 101, xs[0])
}

// TestWatcherExitsAfterTaskLoops: once no loop inside a task is
// registered, the watcher exits, also after a shared loop and a panicking
// one.
func TestWatcherExitsAfterTaskLoops(t *testing.T) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	defer two.Close()
	forkjoin.Invoke(two, func(w *forkjoin.Worker) struct{} {
		For(w, 2, func(int) { time.Sleep(3 * watcherTick) })
		_ = recoverValue(func() { For(w, 3, func(int) { time.Sleep(3 * watcherTick); panic("x") }) })
		return struct{}{}
	})
	testenv.WaitUntil(t, "the watcher to exit", func() bool { return !watcherRunning.Load() })
}

// TestShortLoopInsideTaskCompensated: with the pool's other worker busy,
// a loop whose indices block in forkjoin.Block still goes through: the
// compensating worker Block starts takes the helper task, and the index it
// runs blocks in Block in turn.
func TestShortLoopInsideTaskCompensated(t *testing.T) {
	two := heldTwoWorkerPool(t)
	g := newPairGate()
	got := inTask(t, two, func(w *forkjoin.Worker) any {
		out := make([]int, 3)
		ForW(w, 3, func(r forkjoin.Runner, i int) {
			forkjoin.Block(r.(*forkjoin.Worker), g.enter)
			out[i] = i * i
		})
		return out
	})
	require.Equal(t, squares(3), got)
	require.False(t, g.hung.Load())
}

// TestShortLoopInsideTaskSlackInline: the task probe's gate. With the
// pool's other worker busy, a task with nothing on its deque probes its
// short loops (a worker may go idle and join), and one with a fork queued
// (Surplus() >= 1) runs them inline.
func TestShortLoopInsideTaskSlackInline(t *testing.T) {
	two := heldTwoWorkerPool(t)
	testenv.Within(t, "the task", func() {
		forkjoin.Invoke(two, func(w *forkjoin.Worker) struct{} {
			assert.False(t, smallInline(w, 100, 0), "empty deque: the task probe")
			f := forkjoin.Fork(w, func(*forkjoin.Worker) int { return 1 })
			assert.True(t, smallInline(w, 100, 0), "a fork queued, no worker idle: inline")
			assert.Equal(t, 1, f.Join(w))
			return struct{}{}
		})
	})
}

// heldTwoWorkerPool returns a pool of two workers, one of them held busy
// until the test ends (released before the pool is closed, also when the
// test fails), so that the test's task has the other one to itself.
func heldTwoWorkerPool(t *testing.T) *forkjoin.Pool {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	release := make(chan struct{})
	t.Cleanup(two.Close)
	t.Cleanup(func() { close(release) }) // runs first: cleanups run last-added first
	busy := make(chan struct{})
	require.NoError(t, two.Execute(func(*forkjoin.Worker) { close(busy); <-release }))
	<-busy
	return two
}
