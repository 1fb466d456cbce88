package magpie

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

func TestFor(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		hits := make([]int32, n)
		For(r, n, func(i int) { atomic.AddInt32(&hits[i], 1) }, opts...)
		for i, h := range hits {
			if h != 1 {
				return fmt.Errorf("index %d visited %d times", i, h)
			}
		}
		return nil
	})
}

func TestForRange(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		hits := make([]int32, n)
		grain := collectOptions(opts).grain
		var bad atomic.Value
		ForRange(r, n, func(lo, hi int) {
			if lo < 0 || lo >= hi || hi > n {
				bad.Store(fmt.Errorf("bad piece [%d,%d) of %d", lo, hi, n))
			}
			// A piece larger than the grain is only allowed when the
			// whole loop ran sequentially (one worker).
			if grain > 0 && hi-lo > grain && hi-lo != n {
				bad.Store(fmt.Errorf("piece [%d,%d) exceeds grain %d", lo, hi, grain))
			}
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&hits[i], 1)
			}
		}, opts...)
		if err, _ := bad.Load().(error); err != nil {
			return err
		}
		for i, h := range hits {
			if h != 1 {
				return fmt.Errorf("index %d visited %d times", i, h)
			}
		}
		return nil
	})
}

func TestForNilBody(t *testing.T) {
	require.PanicsWithValue(t, "magpie: For called with a nil body", func() { For(nil, 3, nil) })
	require.PanicsWithValue(t, "magpie: ForRange called with a nil body", func() { ForRange(nil, 3, nil) })
}

// TestForPanics checks that a panic in the body reaches the caller as a
// *forkjoin.PanicError whatever the size and the runner, and that the pool
// keeps working afterwards.
func TestForPanics(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(3))
	defer p.Close()
	single := forkjoin.New(forkjoin.WithParallelism(1))
	defer single.Close()
	boom := errors.New("boom")
	for _, k := range runnerKinds(p, single) {
		for _, n := range []int{1, 10, SequentialThreshold + 1, 200_000} {
			for _, g := range grainOpts[:2] {
				var got any
				k.call(func(r forkjoin.Runner) {
					defer func() { got = recover() }()
					For(r, n, func(i int) {
						if i == n/2 {
							panic(boom)
						}
					}, g.opts...)
				})
				pe, ok := got.(*forkjoin.PanicError)
				require.True(t, ok, "%s n=%d %s: recovered %T %v", k.name, n, g.name, got, got)
				require.ErrorIs(t, pe, boom)
			}
		}
		// The pool survives.
		var sum atomic.Int64
		k.call(func(r forkjoin.Runner) { For(r, 5000, func(i int) { sum.Add(int64(i)) }) })
		require.Equal(t, int64(5000*4999/2), sum.Load())
	}
}

// TestForNested runs For inside For. The outer call gets the task's
// worker; the body, which may run on any worker, passes the pool, which
// forkjoin recognizes as a call from one of its own workers and runs inline.
func TestForNested(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(4))
	defer p.Close()
	const rows, cols = 300, 700
	var grid [rows][cols]int32
	forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
		For(w, rows, func(i int) {
			ForRange(p, cols, func(lo, hi int) {
				for j := lo; j < hi; j++ {
					atomic.AddInt32(&grid[i][j], 1)
				}
			}, Grain(50))
		}, Grain(1))
		return struct{}{}
	})
	for i := range grid {
		for j := range grid[i] {
			require.Equal(t, int32(1), grid[i][j])
		}
	}
}
