package magpie

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"

	"github.com/magpie-go/magpie/internal/testenv"
)

// runnerKind names one way to call a helper: with a pool from outside,
// with the worker of a task (inside forkjoin.Invoke), or with nil.
type runnerKind struct {
	name string
	// call runs fn with the Runner of this kind.
	call func(fn func(r forkjoin.Runner))
}

// runnerKinds returns the three kinds of Runner over p, plus a one-worker
// pool, which takes the sequential path at every size.
func runnerKinds(p, single *forkjoin.Pool) []runnerKind {
	return []runnerKind{
		{"pool", func(fn func(forkjoin.Runner)) { fn(p) }},
		{"worker", func(fn func(forkjoin.Runner)) {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} { fn(w); return struct{}{} })
		}},
		{"nil", func(fn func(forkjoin.Runner)) { fn(nil) }},
		{"single", func(fn func(forkjoin.Runner)) { fn(single) }},
	}
}

// grainOpts are the splitting options every helper is tested with.
var grainOpts = []struct {
	name string
	opts []Option
}{
	{"adaptive", nil},
	{"grain1", []Option{Grain(1)}},
	{"grain7", []Option{Grain(7)}},
	{"grain64", []Option{Grain(64)}},
	{"grain0", []Option{Grain(0)}}, // taken as 1
}

// testSizes are 0..300 exhaustively, sizes around the sequential threshold
// and the probe's batches, and 1e5 and 1e6 (unless -short).
func testSizes(t *testing.T) []int {
	var ns []int
	for n := 0; n <= 300; n++ {
		ns = append(ns, n)
	}
	ns = append(ns, SequentialThreshold, SequentialThreshold+1, 5000, 33333)
	if !testing.Short() {
		ns = append(ns, 100_000)
		if !testenv.Race { // a million elements per configuration is minutes under -race
			ns = append(ns, 1_000_000)
		}
	}
	return ns
}

// forEachConfig runs check for every runner kind, grain and size; check
// reports an error instead of failing so that the loop stays cheap.
func forEachConfig(t *testing.T, check func(r forkjoin.Runner, n int, opts []Option) error) {
	t.Helper()
	p, single := testPools(t)
	sizes := testSizes(t)
	for _, k := range runnerKinds(p, single) {
		for _, g := range grainOpts {
			t.Run(k.name+"/"+g.name, func(t *testing.T) {
				for _, n := range sizes {
					if n > 300 && g.name == "grain1" && n > 100_000 {
						continue // a million single-element tasks only slows -race down
					}
					var err error
					k.call(func(r forkjoin.Runner) { err = check(r, n, g.opts) })
					require.NoError(t, err, "n=%d", n)
				}
			})
		}
	}
}

func TestRunInline(t *testing.T) {
	require.True(t, runInline(8, 0, 0))
	require.True(t, runInline(8, 1, 0))
	require.True(t, runInline(1, 1<<20, 0), "one worker")
	require.False(t, runInline(8, 2, 0), "short loops probe (probe.go)")
	require.True(t, runInline(8, 10, 10), "grain covers n")
	require.False(t, runInline(8, 11, 10))
	require.False(t, runInline(8, 2, 1))
}

// TestSmallInline: a helper runs a short loop without a Grain as a plain
// loop on a one-worker pool, and sends it to the probe on a pool of
// several workers, from outside (probe.go) and from inside a task
// (probetask.go).
func TestSmallInline(t *testing.T) {
	p, single := testPools(t)
	require.True(t, smallInline(p, 1, 0))
	require.False(t, smallInline(p, 2, 0), "from outside: the probe")
	require.False(t, smallInline(nil, SequentialThreshold, 0), "nil is Default()")
	require.False(t, smallInline(p, SequentialThreshold+1, 0))
	require.True(t, smallInline(single, SequentialThreshold, 0), "one worker")
	require.False(t, smallInline(single, SequentialThreshold+1, 0), "the engine decides")
	require.True(t, smallInline(p, 10, 10), "grain covers n")
	require.False(t, smallInline(p, 11, 10))
	forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
		assert.False(t, smallInline(w, SequentialThreshold, 0), "inside a task: the task probe")
		assert.False(t, smallInline(p, SequentialThreshold, 0), "on a worker, with the *Pool: the task probe")
		assert.True(t, smallInline(single, SequentialThreshold, 0), "on a worker, with a one-worker *Pool")
		assert.False(t, smallInline(w, SequentialThreshold+1, 0))
		return struct{}{}
	})
	forkjoin.Invoke(single, func(w *forkjoin.Worker) struct{} {
		assert.True(t, smallInline(w, SequentialThreshold, 0), "inside a task of a one-worker pool")
		return struct{}{}
	})
}

func TestNegativeN(t *testing.T) {
	require.PanicsWithValue(t, "magpie: For called with a negative n", func() { For(nil, -1, func(int) {}) })
	require.PanicsWithValue(t, "magpie: ForRange called with a negative n", func() { ForRange(nil, -5, func(int, int) {}) })
	require.PanicsWithValue(t, "magpie: ReduceRange called with a negative n", func() {
		ReduceRange(nil, -1, 0, func(a, lo, hi int) int { return a }, func(a, b int) int { return a })
	})
}

// recoverValue runs fn and returns what it panicked with (nil if it
// returned).
func recoverValue(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

// testPools returns the two pools the helpers' tests run on, closed when
// the test ends: four workers, and one (where every helper runs inline).
func testPools(t testing.TB) (p, single *forkjoin.Pool) {
	p = forkjoin.New(forkjoin.WithParallelism(4))
	single = forkjoin.New(forkjoin.WithParallelism(1))
	t.Cleanup(func() { p.Close(); single.Close() })
	return p, single
}

// TestGrainBelowOneIsOne: Grain(n) with n < 1 is Grain(1), as its doc says
// (a fixed cutoff of single elements), not the adaptive splitting that no
// Grain gives.
func TestGrainBelowOneIsOne(t *testing.T) {
	for _, n := range []int{0, -1, -5, math.MinInt} {
		require.Equal(t, 1, collectOptions([]Option{Grain(n)}).grain, "Grain(%d)", n)
	}
	require.Equal(t, 7, collectOptions([]Option{Grain(7)}).grain)
}
