package magpie

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestForW: every index is visited once, with every runner kind and grain,
// and the Runner handed to the body runs a nested loop correctly.
func TestForW(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		seen := make([]atomic.Int32, n)
		var nested atomic.Int64
		ForW(r, n, func(r forkjoin.Runner, i int) {
			seen[i].Add(1)
			if i%997 == 0 { // a nested loop through the Runner handed over
				ForRange(r, 2000, func(lo, hi int) { nested.Add(int64(hi - lo)) }, Grain(500))
			}
		}, opts...)
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				return fmt.Errorf("index %d visited %d times", i, c)
			}
		}
		if want := int64((n+996)/997) * 2000; nested.Load() != want {
			return fmt.Errorf("nested loops covered %d indices, want %d", nested.Load(), want)
		}
		return nil
	})
}

// TestForRangeW: the subranges cover [0, n) once.
func TestForRangeW(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		seen := make([]atomic.Int32, n)
		ForRangeW(r, n, func(r forkjoin.Runner, lo, hi int) {
			if lo >= hi {
				panic("empty subrange")
			}
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		}, opts...)
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				return fmt.Errorf("index %d covered %d times", i, c)
			}
		}
		return nil
	})
}

// TestForWRunnerIsTheRunningWorker: on the pool the body gets the
// *forkjoin.Worker running it (a worker of that pool, the one of the
// calling goroutine); run on the caller, the caller's own Runner.
func TestForWRunnerIsTheRunningWorker(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	var onWorker, onCaller, wrong atomic.Int64
	check := func(outer forkjoin.Runner) func(r forkjoin.Runner, i int) {
		return func(r forkjoin.Runner, i int) {
			switch r := r.(type) {
			case *forkjoin.Worker:
				// The goroutine's own worker: a Join on it must not panic.
				// A worker of the loop's pool: p's, or Default()'s for the
				// nil Runner's loop once the probe handed it over.
				if r.Pool() != p && (outer != nil || r.Pool() != forkjoin.Default()) {
					wrong.Add(1)
				}
				forkjoin.Join(r, func(*forkjoin.Worker) int { return 0 }, func(*forkjoin.Worker) int { return 0 })
				onWorker.Add(1)
			default:
				if r != outer {
					wrong.Add(1)
				}
				onCaller.Add(1)
			}
		}
	}
	ForW(p, 100, check(p))                            // short: on the caller
	ForW(p, 100_000, check(p), Grain(1000))           // fixed grain: on the pool
	ForW(p, 10, check(p), Grain(1))                   // tiny pieces on the pool
	ForW(nil, 10, check(nil))                         // nil stays nil on the caller
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int { // from a task: its worker
		ForW(w, 5000, check(w), Grain(100))
		return 0
	})
	require.Zero(t, wrong.Load())
	// The two short loops start on the caller, and the probe hands what is
	// left to the pool after a tick (probe.go): on a loaded machine, under
	// -race, some of their calls ran on a worker (10 of 110 on the caller
	// once, review rev16). Only the split between those two may vary.
	require.Equal(t, int64(100+100_000+10+10+5000), onCaller.Load()+onWorker.Load())
	require.GreaterOrEqual(t, onWorker.Load(), int64(100_000+10+5000))
	require.Positive(t, onCaller.Load())
}

// TestForWPanics: a panic in the body arrives as a *forkjoin.PanicError,
// on the caller's path and on the pool's.
func TestForWPanics(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	for _, n := range []int{10, 50_000} {
		v := recoverValue(func() {
			ForW(p, n, func(_ forkjoin.Runner, i int) {
				if i == n-1 {
					panic("boom")
				}
			})
		})
		var pe *forkjoin.PanicError
		require.ErrorAs(t, v.(error), &pe, "n=%d", n)
		v = recoverValue(func() {
			ForRangeW(p, n, func(_ forkjoin.Runner, lo, hi int) {
				if hi == n {
					panic("boom")
				}
			})
		})
		require.ErrorAs(t, v.(error), &pe, "n=%d", n)
	}
	require.PanicsWithValue(t, "magpie: ForW called with a nil body", func() { ForW(p, 1, nil) })
	require.PanicsWithValue(t, "magpie: ForRangeW called with a negative n", func() {
		ForRangeW(p, -1, func(forkjoin.Runner, int, int) {})
	})
}
