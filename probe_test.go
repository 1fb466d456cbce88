package magpie

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// pairGate makes the indices of a loop depend on each other: an index,
// once started, waits until a second index has started. A loop that runs
// its indices one after the other on the caller waits at its first index
// until the hang limit (and then records that it hung); one whose other
// indices run elsewhere meanwhile goes through.
type pairGate struct {
	started atomic.Int32
	second  chan struct{}
	hung    atomic.Bool
}

func newPairGate() *pairGate { return &pairGate{second: make(chan struct{})} }

// enter is called by every index when it starts.
func (g *pairGate) enter() {
	if g.started.Add(1) == 2 {
		close(g.second)
	}
	select {
	case <-g.second:
	case <-time.After(testenv.HangTimeout):
		g.hung.Store(true)
	}
}

// shortLoop is one helper run over [0, n) with enter(i) called at the
// start of index i; want is the sequential result.
type shortLoop struct {
	name string
	run  func(r forkjoin.Runner, n int, enter func(i int)) any
	want func(n int) any
}

// squares is the result of the loops that compute i*i per index.
func squares(n int) any {
	out := make([]int, n)
	for i := range out {
		out[i] = i * i
	}
	return out
}

// shortLoops are the helpers that share the probe: every one that runs a
// function per index through the engine.
var shortLoops = []shortLoop{
	{"For", func(r forkjoin.Runner, n int, enter func(int)) any {
		out := make([]int, n)
		For(r, n, func(i int) { enter(i); out[i] = i * i })
		return out
	}, squares},
	{"ForRange", func(r forkjoin.Runner, n int, enter func(int)) any {
		out := make([]int, n)
		ForRange(r, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				enter(i)
				out[i] = i * i
			}
		})
		return out
	}, squares},
	{"ForW", func(r forkjoin.Runner, n int, enter func(int)) any {
		out := make([]int, n)
		ForW(r, n, func(_ forkjoin.Runner, i int) { enter(i); out[i] = i * i })
		return out
	}, squares},
	{"ForInit", func(r forkjoin.Runner, n int, enter func(int)) any {
		out := make([]int, n)
		ForInit(r, n, func() int { return 0 }, func(_ int, i int) { enter(i); out[i] = i * i })
		return out
	}, squares},
	{"ForErr", func(r forkjoin.Runner, n int, enter func(int)) any {
		out := make([]int, n)
		err := ForErr(r, n, func(i int) error { enter(i); out[i] = i * i; return nil })
		return []any{out, err}
	}, func(n int) any { return []any{squares(n), nil} }},
	{"ForContext", func(r forkjoin.Runner, n int, enter func(int)) any {
		out := make([]int, n)
		err := ForContext(context.Background(), r, n, func(_ context.Context, i int) error {
			enter(i)
			out[i] = i * i
			return nil
		})
		return []any{out, err}
	}, func(n int) any { return []any{squares(n), nil} }},
	{"Map", func(r forkjoin.Runner, n int, enter func(int)) any {
		return Map(r, indices(n), func(x int) int { enter(x); return x * x })
	}, squares},
	{"MapInPlace", func(r forkjoin.Runner, n int, enter func(int)) any {
		s := indices(n)
		MapInPlace(r, s, func(x int) int { enter(x); return x * x })
		return s
	}, squares},
	{"MapInit", func(r forkjoin.Runner, n int, enter func(int)) any {
		return MapInit(r, indices(n), func() int { return 0 }, func(_ int, x int) int { enter(x); return x * x })
	}, squares},
	{"MapErr", func(r forkjoin.Runner, n int, enter func(int)) any {
		out, err := MapErr(r, indices(n), func(x int) (int, error) { enter(x); return x * x, nil })
		return []any{out, err}
	}, func(n int) any { return []any{squares(n), nil} }},
	{"Map2", func(r forkjoin.Runner, n int, enter func(int)) any {
		return Map2(r, indices(n), indices(n), func(x, y int) int { enter(x); return x * y })
	}, squares},
	{"Filter", func(r forkjoin.Runner, n int, enter func(int)) any {
		return Filter(r, indices(n), func(x int) bool { enter(x); return x%3 != 1 })
	}, func(n int) any {
		var out []int
		for x := range n {
			if x%3 != 1 {
				out = append(out, x)
			}
		}
		return out
	}},
	{"FilterMap", func(r forkjoin.Runner, n int, enter func(int)) any {
		return FilterMap(r, indices(n), func(x int) (string, bool) { enter(x); return strconv.Itoa(x), x%2 == 0 })
	}, func(n int) any {
		var out []string
		for x := 0; x < n; x += 2 {
			out = append(out, strconv.Itoa(x))
		}
		return out
	}},
	{"Reduce", func(r forkjoin.Runner, n int, enter func(int)) any {
		// Concatenation is associative, not commutative: the pieces
		// must combine in index order.
		return Reduce(r, indices(n), "", func(acc string, x int) string {
			enter(x)
			return acc + strconv.Itoa(x) + ";"
		}, func(a, b string) string { return a + b })
	}, joinedIndices},
	{"ReduceRange", func(r forkjoin.Runner, n int, enter func(int)) any {
		return ReduceRange(r, n, "", func(acc string, lo, hi int) string {
			for x := lo; x < hi; x++ {
				enter(x)
				acc += strconv.Itoa(x) + ";"
			}
			return acc
		}, func(a, b string) string { return a + b })
	}, joinedIndices},
	{"ReduceWith", func(r forkjoin.Runner, n int, enter func(int)) any {
		return ReduceWith(r, indices(n), func() []int { return nil },
			func(acc []int, x int) []int { enter(x); return append(acc, x) },
			func(a, b []int) []int { return append(a, b...) })
	}, func(n int) any { return indices(n) }},
	{"Count", func(r forkjoin.Runner, n int, enter func(int)) any {
		return Count(r, indices(n), func(x int) bool { enter(x); return x%3 == 0 })
	}, func(n int) any { return (n + 2) / 3 }},
	{"IndexFunc", func(r forkjoin.Runner, n int, enter func(int)) any {
		return IndexFunc(r, indices(n), func(x int) bool { enter(x); return x == n-1 })
	}, func(n int) any { return n - 1 }},
	{"All", func(r forkjoin.Runner, n int, enter func(int)) any {
		return All(r, indices(n), func(x int) bool { enter(x); return x >= 0 })
	}, func(n int) any { return true }},
}

// joinedIndices is the concatenation "0;1;...;n-1;", the result of the
// Reduce and ReduceRange rows.
func joinedIndices(n int) any {
	s := ""
	for x := range n {
		s += strconv.Itoa(x) + ";"
	}
	return s
}

// shortLoopSizes are the lengths of the short-loop tests: the shortest
// loops that can go parallel, and a typical short one.
var shortLoopSizes = []int{2, 3, 100}

// TestShortLoopGoesParallel: a short loop called from outside the pool,
// whose first index cannot finish until a second one has started, goes
// through: the probe hands the rest to the pool while the caller is
// inside its first index (without the watcher, every loop of at most
// SequentialThreshold indices ran on the caller and this hung). The
// results are the sequential ones, in index order.
func TestShortLoopGoesParallel(t *testing.T) {
	p, _ := testPools(t)
	two := forkjoin.New(forkjoin.WithParallelism(2))
	defer two.Close()
	for _, l := range shortLoops {
		for _, n := range shortLoopSizes {
			t.Run(fmt.Sprintf("%s/n=%d", l.name, n), func(t *testing.T) {
				for _, r := range []*forkjoin.Pool{p, two} {
					g := newPairGate()
					got := l.run(r, n, func(int) { g.enter() })
					require.False(t, g.hung.Load(), "the first index waited for a second one until the hang limit")
					require.Equal(t, l.want(n), got)
				}
			})
		}
	}
}

// TestShortLoopHandedPanic: a panic in an index the probe handed to the
// pool reaches the caller as a *forkjoin.PanicError holding the value, as
// one on the caller does.
func TestShortLoopHandedPanic(t *testing.T) {
	p, _ := testPools(t)
	boom := errors.New("boom")
	for _, l := range shortLoops {
		for _, n := range shortLoopSizes {
			g := newPairGate()
			v := recoverValue(func() {
				l.run(p, n, func(i int) {
					g.enter()
					if i == n-1 {
						panic(boom)
					}
				})
			})
			var pe *forkjoin.PanicError
			require.ErrorAs(t, asError(v), &pe, "%s n=%d", l.name, n)
			require.ErrorIs(t, pe, boom, "%s n=%d", l.name, n)
			require.False(t, g.hung.Load(), "%s n=%d", l.name, n)
		}
	}
}

// asError returns v as an error (nil if it is not one).
func asError(v any) error {
	err, _ := v.(error)
	return err
}

// TestShortLoopEarlyExit: the early exits keep working when the probe has
// handed the rest over: once a match, an error or a cancel at index 1 (run
// on the pool while the caller waits in index 0) is known, at most one
// more call starts per worker, plus the caller's.
func TestShortLoopEarlyExit(t *testing.T) {
	p, _ := testPools(t)
	bound := 1 + p.Parallelism()
	for _, n := range shortLoopSizes {
		var decided atomic.Bool
		var late atomic.Int32 // calls started once decided
		var gates []*pairGate
		// call returns the function each index calls first.
		call := func() func() {
			decided.Store(false)
			late.Store(0)
			g := newPairGate()
			gates = append(gates, g)
			return func() {
				if decided.Load() {
					late.Add(1)
				}
				g.enter()
			}
		}

		enter := call()
		i := IndexFunc(p, indices(n), func(x int) bool {
			enter()
			if x == 1 || x == n-1 {
				decided.Store(x == 1)
				return true
			}
			return false
		})
		assert.Equal(t, 1, i, "IndexFunc n=%d", n)
		assert.LessOrEqual(t, int(late.Load()), bound, "IndexFunc n=%d", n)

		enter = call()
		assert.True(t, Any(p, indices(n), func(x int) bool { enter(); decided.Store(x == 1); return x == 1 }), "Any n=%d", n)
		assert.LessOrEqual(t, int(late.Load()), bound, "Any n=%d", n)

		enter = call()
		fail := errors.New("index 1")
		err := ForErr(p, n, func(i int) error {
			enter()
			if i == 1 {
				decided.Store(true)
				return fail
			}
			return nil
		})
		assert.ErrorIs(t, err, fail, "ForErr n=%d", n)
		assert.LessOrEqual(t, int(late.Load()), bound, "ForErr n=%d", n)

		enter = call()
		ctx, cancel := context.WithCancel(context.Background())
		err = ForContext(ctx, p, n, func(_ context.Context, i int) error {
			enter()
			if i == 1 {
				cancel()
				decided.Store(true)
			}
			return nil
		})
		assert.ErrorIs(t, err, context.Canceled, "ForContext n=%d", n)
		assert.LessOrEqual(t, int(late.Load()), bound, "ForContext n=%d", n)
		for _, g := range gates {
			assert.False(t, g.hung.Load(), "n=%d", n)
		}
	}
}

// TestShortLoopReturnsAfterHandedRest: the helper returns only once the
// rest it handed to the pool has finished: no index runs after it.
func TestShortLoopReturnsAfterHandedRest(t *testing.T) {
	p, _ := testPools(t)
	for _, n := range shortLoopSizes {
		var running atomic.Int32
		g := newPairGate()
		For(p, n, func(i int) {
			running.Add(1)
			defer running.Add(-1)
			g.enter()
			if i != 0 {
				time.Sleep(time.Millisecond)
			}
		})
		require.Zero(t, running.Load(), "n=%d: an index still running after For returned", n)
		require.False(t, g.hung.Load())
	}
}

// TestShortLoopOnClosedPool: if the pool is closed when the watcher hands
// the rest over, the caller runs the rest itself.
func TestShortLoopOnClosedPool(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	out := make([]int, 3)
	For(p, 3, func(i int) {
		if i == 0 {
			p.Close()
			time.Sleep(10 * watcherTick) // the watcher looks twice meanwhile
		}
		out[i] = i * i
	})
	require.Equal(t, squares(3), out)
}

// TestShortLoopStress runs short loops whose indices now and then sleep,
// from several goroutines at once (so that loops share the watcher and
// its slots), and checks every result: for -race.
func TestShortLoopStress(t *testing.T) {
	p, _ := testPools(t)
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	testenv.Concurrently(t, "the stress loops", 4, func(c int) {
		rng := rand.New(rand.NewPCG(uint64(c), 9))
		for range rounds {
			l := shortLoops[rng.IntN(len(shortLoops))]
			n := 2 + rng.IntN(200)
			slow := rng.IntN(n)
			got := l.run(p, n, func(i int) {
				if i == slow {
					time.Sleep(200 * time.Microsecond)
				}
			})
			if !assert.Equal(t, l.want(n), got, "%s n=%d", l.name, n) {
				return
			}
		}
	})
}

// TestWatcherExitsWhenIdle: once no loop is registered, the watcher
// goroutine exits (after watcherIdleTicks ticks), so that an idle process
// runs nothing and goleak finds nothing; also after a loop whose first
// accumulator panicked (which once left its record registered forever).
func TestWatcherExitsWhenIdle(t *testing.T) {
	p, _ := testPools(t)
	sum := func(a, b int) int { return a + b }
	require.Panics(t, func() { ReduceWith(p, indices(10), func() int { panic("no accumulator") }, sum, sum) })
	For(p, 2, func(int) { time.Sleep(3 * watcherTick) })
	testenv.WaitUntil(t, "the watcher to exit", func() bool { return !watcherRunning.Load() })
	For(p, 100, func(int) {})
	testenv.WaitUntil(t, "the watcher to exit again", func() bool { return !watcherRunning.Load() })
}

// indices returns 0..n-1 in order: element x is at index x, so that the
// tests can tell an index by its element.
func indices(n int) []int {
	xs := make([]int, n)
	for i := range xs {
		xs[i] = i
	}
	return xs
}
