package magpie

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// hashPair is a polynomial hash with its power, h(s) and 31^len(s): its op
// is associative but not commutative, so a block combined in the wrong
// order, or an offset applied on the wrong side, changes the result.
type hashPair struct{ h, pow uint64 }

func hashOp(a, b hashPair) hashPair { return hashPair{a.h*b.pow + b.h, a.pow * b.pow} }

func hashInput(xs []int) []hashPair {
	s := make([]hashPair, len(xs))
	for i, x := range xs {
		s[i] = hashPair{uint64(x), 31}
	}
	return s
}

// scanWant is the sequential loop Scan's doc names.
func scanWant[E any](s []E, op func(E, E) E) []E {
	s = slices.Clone(s)
	for i := 1; i < len(s); i++ {
		s[i] = op(s[i-1], s[i])
	}
	return s
}

func TestScan(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		in := hashInput(ints(n))
		want := scanWant(in, hashOp)
		Scan(r, in, hashOp, opts...)
		for i := range want {
			if in[i] != want[i] {
				return fmt.Errorf("index %d: %v, want %v", i, in[i], want[i])
			}
		}
		// Integer addition, the common case, and a named slice type.
		type series []int64
		sums := make(series, n)
		for i := range sums {
			sums[i] = int64(i%7) - 3
		}
		wantSums := scanWant(sums, add[int64])
		Scan(r, sums, add[int64], opts...)
		if !slices.Equal(sums, wantSums) {
			return fmt.Errorf("sums differ")
		}
		return nil
	})
}

func TestScanRandom(t *testing.T) {
	rng := testRand(t)
	for _, workers := range []int{2, 3, 8} {
		p := forkjoin.New(forkjoin.WithParallelism(workers))
		for _, n := range randomSizes() {
			xs := make([]int, n)
			for i := range xs {
				xs[i] = rng.IntN(1 << 20)
			}
			want := scanWant(hashInput(xs), hashOp)
			for _, g := range append(grainOpts[:1], grainOpts[2:4]...) {
				s := hashInput(xs)
				Scan(p, s, hashOp, g.opts...)
				require.Equal(t, want, s, "workers %d n=%d %s", workers, n, g.name)
			}
		}
		p.Close()
	}
}

// TestScanWork checks the cost the doc states: a parallel scan calls op
// fewer than 2n times (the tail is never reduced; with two workers about
// 4/3·n when the pieces split evenly), and the sequential path n-1 times.
func TestScanWork(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	const n = 300_000
	var calls atomic.Int64
	op := func(a, b int64) int64 { calls.Add(1); return a + b }
	s := make([]int64, n)
	Scan(p, s, op)
	got := calls.Load()
	t.Logf("%d op calls for n = %d (%.2f n)", got, n, float64(got)/n)
	require.Less(t, got, int64(5*n/3), "the tail third is scanned once, not reduced")
	calls.Store(0)
	Scan(p, s[:1000], op)
	require.Equal(t, int64(999), calls.Load())
}

func TestScanInputs(t *testing.T) {
	require.PanicsWithValue(t, "magpie: Scan called with a nil op", func() { Scan[[]int](nil, []int{1}, nil) })
	Scan(nil, []int{}, func(a, b int) int { panic("not called") })
	one := []int{5}
	Scan(nil, one, func(a, b int) int { panic("not called") })
	require.Equal(t, []int{5}, one)
}
