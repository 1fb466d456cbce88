package magpie

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// r37Elem is an element whose order key (v) repeats, and whose position
// in the input (i) shows which of equal elements a helper picked.
type r37Elem struct{ v, i int }

// r37Sink keeps FuzzRev37SearchAndOrderHelpers' slow predicate's loop.
var r37Sink atomic.Int64

// r37Input builds n elements from the fuzzer's bytes, values in [0, mod)
// so that keys repeat and matches are frequent or rare as the bytes say.
func r37Input(data []byte, n, mod int) []r37Elem {
	in := make([]r37Elem, n)
	for i := range in {
		in[i] = r37Elem{int(data[i%len(data)]^byte(i/len(data))) % mod, i}
	}
	return in
}

// FuzzRev37SearchAndOrderHelpers checks the helpers whose result names a
// position or an order among equal elements against package slices and
// the sequential loops, on a pool of two workers, inside one of its
// tasks, and on a one-worker pool, with the grain the fuzzer picks (on the
// two-worker pool also with a predicate slow enough for the probe to hand
// loops to the pool):
// IndexFunc (lowest match), ContainsFunc/Any/All, MinFunc/MaxFunc (first
// extreme), Filter/FilterMap (order), ForErr/MapErr (the sequential
// error when exactly one index fails, else one of the failures),
// SortStableFunc and SortStableByKey (stable order), SortFunc and
// SortByKey (sorted permutation), ForChunks (every index once).
func FuzzRev37SearchAndOrderHelpers(f *testing.F) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	single := forkjoin.New(forkjoin.WithParallelism(1))
	f.Cleanup(func() { p.Close(); single.Close() })
	f.Add([]byte{3, 1, 4, 1, 5, 9, 2, 6}, uint16(1025), uint8(7), uint8(3), uint8(0))
	f.Add([]byte{0}, uint16(1), uint8(0), uint8(1), uint8(1))
	f.Add([]byte{1, 2, 3, 250}, uint16(4097), uint8(1), uint8(251), uint8(2))
	f.Add([]byte{9, 9, 9}, uint16(64), uint8(64), uint8(10), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, n16 uint16, g, mod8, kind uint8) {
		if len(data) == 0 {
			return
		}
		n := int(n16 % 6000)
		mod := int(mod8) + 1
		in := r37Input(data, n, mod)
		target := int(data[0]) % mod
		opts := quickOpts(g)
		run := func(fn func(r forkjoin.Runner)) {
			switch kind % 4 {
			case 0, 3:
				fn(p)
			case 1:
				forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} { fn(w); return struct{}{} })
			default:
				fn(single)
			}
		}
		run(func(r forkjoin.Runner) { r37Check(t, r, in, target, mod, kind%4 == 3, opts) })
	})
}

func r37Check(t *testing.T, r forkjoin.Runner, in []r37Elem, target, mod int, slow bool, opts []Option) {
	n := len(in)
	is := func(x r37Elem) bool {
		if slow { // about a microsecond: the probe hands long loops to the pool
			for range 300 {
				r37Sink.Add(1)
			}
		}
		return x.v == target
	}
	require.Equal(t, slices.IndexFunc(in, is), IndexFunc(r, in, is, opts...), "IndexFunc n=%d", n)
	require.Equal(t, slices.ContainsFunc(in, is), ContainsFunc(r, in, is, opts...), "ContainsFunc")
	require.Equal(t, slices.ContainsFunc(in, is), Any(r, in, is, opts...), "Any")
	isnt := func(x r37Elem) bool { return x.v != target }
	require.Equal(t, !slices.ContainsFunc(in, is), All(r, in, isnt, opts...), "All")

	byV := func(a, b r37Elem) int { return cmp.Compare(a.v, b.v) }
	if n > 0 {
		byVSlow := func(a, b r37Elem) int {
			is(a) // slow too when slow is set
			return byV(a, b)
		}
		require.Equal(t, slices.MinFunc(in, byV), MinFunc(r, in, byVSlow, opts...), "MinFunc n=%d", n)
		require.Equal(t, slices.MaxFunc(in, byV), MaxFunc(r, in, byVSlow, opts...), "MaxFunc n=%d", n)
	}

	want := []r37Elem{}
	for _, x := range in {
		if is(x) {
			want = append(want, x)
		}
	}
	got := Filter(r, in, is, opts...)
	require.Equal(t, len(want), len(got), "Filter n=%d", n)
	if len(want) > 0 {
		require.Equal(t, want, []r37Elem(got), "Filter")
	}
	gotIdx := FilterMap(r, in, func(x r37Elem) (int, bool) { return x.i, is(x) }, opts...)
	require.Equal(t, len(want), len(gotIdx), "FilterMap")
	for k, x := range want {
		require.Equal(t, x.i, gotIdx[k], "FilterMap")
	}

	// ForErr and MapErr: fail at every index whose element matches.
	errAt := func(i int) error { return fmt.Errorf("fail %d", i) }
	var failing []int
	for _, x := range in {
		if is(x) {
			failing = append(failing, x.i)
		}
	}
	checkErr := func(api string, err error) {
		switch len(failing) {
		case 0:
			require.NoError(t, err, api)
		case 1:
			require.EqualError(t, err, errAt(failing[0]).Error(), api)
		default:
			require.Error(t, err, api)
			var k int
			_, serr := fmt.Sscanf(err.Error(), "fail %d", &k)
			require.NoError(t, serr, api)
			require.Contains(t, failing, k, api)
		}
	}
	checkErr("ForErr", ForErr(r, n, func(i int) error {
		if is(in[i]) {
			return errAt(i)
		}
		return nil
	}, opts...))
	out, err := MapErr(r, in, func(x r37Elem) (int, error) {
		if is(x) {
			return 0, errAt(x.i)
		}
		return x.i, nil
	}, opts...)
	checkErr("MapErr", err)
	if err == nil {
		require.Len(t, out, n)
		for i, y := range out {
			require.Equal(t, i, y, "MapErr")
		}
	} else {
		require.Nil(t, out, "MapErr")
	}

	// Sorts: the stable ones equal package slices' stable sort, the
	// unstable ones are sorted permutations.
	stable := slices.Clone(in)
	slices.SortStableFunc(stable, byV)
	s := slices.Clone(in)
	SortStableFunc(r, s, byV, opts...)
	require.Equal(t, stable, s, "SortStableFunc n=%d", n)
	s = slices.Clone(in)
	SortStableByKey(r, s, func(x r37Elem) int { return x.v }, opts...)
	require.Equal(t, stable, s, "SortStableByKey n=%d", n)
	byI := func(a, b r37Elem) int { return cmp.Compare(a.i, b.i) }
	for _, sortIt := range []func([]r37Elem){
		func(s []r37Elem) { SortFunc(r, s, byV, opts...) },
		func(s []r37Elem) { SortByKey(r, s, func(x r37Elem) int { return x.v }, opts...) },
	} {
		s = slices.Clone(in)
		sortIt(s)
		require.True(t, slices.IsSortedFunc(s, byV), "unstable sort n=%d", n)
		slices.SortFunc(s, byI)
		require.Equal(t, in, s, "unstable sort: not a permutation")
	}

	// ForChunks: every index once, chunks of size mod.
	seen := make([]int32, n)
	ForChunks(r, n, mod, func(lo, hi int) {
		require.True(t, lo < hi && hi <= n && lo%mod == 0 && (hi-lo == mod || hi == n))
		for i := lo; i < hi; i++ {
			seen[i]++
		}
	}, opts...)
	for i, c := range seen {
		require.EqualValues(t, 1, c, "ForChunks index %d", i)
	}
}

// TestRev37FloatExtremes: Min and Max on floats equal slices.Min and
// slices.Max bit for bit (-0 before +0 whatever the cut, NaN if any
// element is NaN), and MinFunc/MaxFunc with cmp.Compare return the first
// extreme as slices.MinFunc/MaxFunc do (the first of -0 and +0, which
// cmp.Compare finds equal; NaN the least), on every runner and grain.
func TestRev37FloatExtremes(t *testing.T) {
	negz := math.Copysign(0, -1)
	shapes := map[string]func(i int) float64{
		"zeros": func(i int) float64 {
			if i%3 == 1 {
				return negz
			}
			return 0
		},
		"negzFirst": func(i int) float64 {
			if i == 0 {
				return negz
			}
			return 0
		},
		"negzLast": func(i int) float64 { return [2]float64{0, negz}[i%2] },
		"nanLate": func(i int) float64 {
			if i%997 == 996 {
				return math.NaN()
			}
			return float64(i % 7)
		},
		"infs": func(i int) float64 { return [3]float64{math.Inf(1), math.Inf(-1), 1}[i%3] },
	}
	bitsEq := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		if n == 0 || n > 5000 {
			return nil
		}
		for name, shape := range shapes {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = shape(i)
			}
			if got, want := Min(r, xs, opts...), slices.Min(xs); !bitsEq(got, want) {
				return fmt.Errorf("%s: Min %v, want %v", name, got, want)
			}
			if got, want := Max(r, xs, opts...), slices.Max(xs); !bitsEq(got, want) {
				return fmt.Errorf("%s: Max %v, want %v", name, got, want)
			}
			type fe struct {
				x float64
				i int
			}
			es := make([]fe, n)
			for i, x := range xs {
				es[i] = fe{x, i}
			}
			c := func(a, b fe) int { return cmp.Compare(a.x, b.x) }
			if got, want := MinFunc(r, es, c, opts...), slices.MinFunc(es, c); got.i != want.i {
				return fmt.Errorf("%s: MinFunc at %d, want %d", name, got.i, want.i)
			}
			if got, want := MaxFunc(r, es, c, opts...), slices.MaxFunc(es, c); got.i != want.i {
				return fmt.Errorf("%s: MaxFunc at %d, want %d", name, got.i, want.i)
			}
		}
		return nil
	})
}

// TestRev37PrefixSumNegativeZeros: PrefixSum's sequential definition,
// s[i] += s[i-1], adds no zero, so a slice of -0.0 stays -0.0 everywhere
// (-0 + -0 = -0), whatever the association of the adds. Its parallel
// reduction (addAll4) started its four partial sums from +0, so a block
// reduced to its sum gave +0 and every element after it became +0
// (failed on main 55b483e). Checked with every runner and grain, and on
// float32 and complex128, whose zeros have signs too.
func TestRev37PrefixSumNegativeZeros(t *testing.T) {
	negz := math.Copysign(0, -1)
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		if n > 100_000 {
			return nil
		}
		xs := make([]float64, n)
		f32 := make([]float32, n)
		cs := make([]complex128, n)
		for i := range xs {
			xs[i] = negz
			f32[i] = float32(negz)
			cs[i] = complex(negz, negz)
		}
		PrefixSum(r, xs, opts...)
		PrefixSum(r, f32, opts...)
		PrefixSum(r, cs, opts...)
		for i := range xs {
			if !math.Signbit(xs[i]) || !math.Signbit(float64(f32[i])) ||
				!math.Signbit(real(cs[i])) || !math.Signbit(imag(cs[i])) {
				return fmt.Errorf("index %d: %v %v %v, want -0 (the loop's)", i, xs[i], f32[i], cs[i])
			}
		}
		return nil
	})
}
