package magpie

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/quick"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// ints returns 0..n-1 scrambled, so that order mistakes show.
func ints(n int) []int {
	xs := make([]int, n)
	for i := range xs {
		xs[i] = (i*7919 + 13) % 1009
	}
	return xs
}

func TestMap(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		in := ints(n)
		got := Map(r, in, func(x int) string { return strconv.Itoa(x) }, opts...)
		if len(got) != n {
			return fmt.Errorf("len %d", len(got))
		}
		for i, x := range in {
			if got[i] != strconv.Itoa(x) {
				return fmt.Errorf("index %d: %q", i, got[i])
			}
		}
		return nil
	})
}

func TestMapInPlace(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		in := ints(n)
		s := slices.Clone(in)
		MapInPlace(r, s, func(x int) int { return 3*x - 1 }, opts...)
		for i, x := range in {
			if s[i] != 3*x-1 {
				return fmt.Errorf("index %d: %d", i, s[i])
			}
		}
		return nil
	})
}

// concatInput is the input of the concatenation tests, ints(n) cut to
// 100,000 elements (strings of a million letters only cost time), and the
// left fold of their letters: concatenation is associative and not
// commutative, so a reordered, repeated or missing piece shows.
func concatInput(n int) (in []int, want string) {
	in = ints(min(n, 100_000))
	b := make([]byte, 0, len(in))
	for _, x := range in {
		b = append(b, letter(x))
	}
	return in, string(b)
}

// letter is the letter concatInput folds x into.
func letter(x int) byte { return byte('a' + x%26) }

// TestReduceKeepsOrder reduces with string concatenation, which is
// associative but not commutative: any reordering of pieces shows.
func TestReduceKeepsOrder(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		in, want := concatInput(n)
		// A piece folds into a []byte accumulator that it owns: it starts
		// from the nil zero, and append copies when capacity runs out, so
		// pieces never share a backing array they both write.
		got := Reduce(r, in, []byte(nil),
			func(acc []byte, x int) []byte { return append(acc, letter(x)) },
			func(a, b []byte) []byte { return append(a, b...) }, opts...)
		if string(got) != want {
			return errors.New("concatenation differs from the left fold")
		}
		return nil
	})
}

// TestReduceRange folds the indices by concatenation, associative and not
// commutative, so that a reordered, repeated or missing index shows; every
// leaf call must get a non-empty subrange of [0, n).
func TestReduceRange(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		in, want := concatInput(n)
		n = len(in)
		var bad atomic.Value
		got := ReduceRange(r, n, []byte(nil), func(acc []byte, lo, hi int) []byte {
			if lo < 0 || lo >= hi || hi > n {
				bad.Store(fmt.Sprintf("leaf called on [%d, %d) of %d", lo, hi, n))
			}
			for _, x := range in[max(lo, 0):min(max(hi, lo, 0), n)] {
				acc = append(acc, letter(x))
			}
			return acc
		}, func(a, b []byte) []byte { return append(a, b...) }, opts...)
		if v := bad.Load(); v != nil {
			return errors.New(v.(string))
		}
		if string(got) != want {
			return errors.New("concatenation differs from the left fold")
		}
		return nil
	})
}

// TestReduceRangeSum: with + the result is the sequential sum, on every
// runner kind and grain, and an n of 0 returns zero without calling leaf.
func TestReduceRangeSum(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		in := ints(n)
		got := ReduceRange(r, n, 7, func(acc, lo, hi int) int {
			for _, x := range in[lo:hi] {
				acc += x
			}
			return acc
		}, func(a, b int) int { return a + b - 7 }, opts...) // zero = 7 is the identity of a+b-7
		if want := sumSeq(in) + 7; got != want {
			return fmt.Errorf("sum %d, want %d", got, want)
		}
		return nil
	})
	require.Equal(t, "zero", ReduceRange(nil, 0, "zero", func(string, int, int) string { panic("leaf called") },
		func(a, b string) string { panic("combine called") }))
}

func TestReduceSum(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		in := ints(n)
		want := 0
		for _, x := range in {
			want += x * x % 7
		}
		got := Reduce(r, in, 0, func(a, x int) int { return a + x*x%7 },
			func(a, b int) int { return a + b }, opts...)
		if got != want {
			return fmt.Errorf("got %d want %d", got, want)
		}
		if s := Sum(r, in, opts...); s != sumSeq(in) {
			return fmt.Errorf("Sum %d want %d", s, sumSeq(in))
		}
		return nil
	})
}

func sumSeq(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func TestFilterCount(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		in := ints(n)
		for _, keep := range []func(int) bool{
			func(x int) bool { return x%3 == 0 },
			func(int) bool { return false },
			func(int) bool { return true },
		} {
			want := slices.DeleteFunc(slices.Clone(in), func(x int) bool { return !keep(x) })
			got := Filter(r, in, keep, opts...)
			if !slices.Equal(got, want) {
				return fmt.Errorf("Filter: got %d elements, want %d", len(got), len(want))
			}
			if (got == nil) != (len(want) == 0) {
				return fmt.Errorf("Filter: nil result %v for %d kept, want nil exactly when nothing is kept", got == nil, len(want))
			}
			if c := Count(r, in, keep, opts...); c != len(want) {
				return fmt.Errorf("Count %d want %d", c, len(want))
			}
		}
		return nil
	})
}

func TestMinMax(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		if n == 0 {
			return nil
		}
		in := ints(n)
		if got, want := Min(r, in, opts...), slices.Min(in); got != want {
			return fmt.Errorf("Min %d want %d", got, want)
		}
		if got, want := Max(r, in, opts...), slices.Max(in); got != want {
			return fmt.Errorf("Max %d want %d", got, want)
		}
		return nil
	})
}

func TestMinMaxFloats(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(3))
	defer p.Close()
	xs := make([]float64, 5000)
	for i := range xs {
		xs[i] = math.Sin(float64(i))
	}
	xs[4000] = math.Copysign(0, -1)
	for _, g := range grainOpts {
		require.Equal(t, slices.Min(xs), Min(p, xs, g.opts...))
		require.Equal(t, slices.Max(xs), Max(p, xs, g.opts...))
	}
	xs[2345] = math.NaN()
	for _, g := range grainOpts {
		require.True(t, math.IsNaN(Min(p, xs, g.opts...)), "NaN propagates like slices.Min")
		require.True(t, math.IsNaN(Max(p, xs, g.opts...)))
	}
	zeros := []float64{0, math.Copysign(0, -1), 0}
	require.True(t, math.Signbit(Min(p, zeros, Grain(1))), "-0 is the minimum, as for slices.Min")
	require.PanicsWithValue(t, "magpie: Min called with an empty list", func() { Min(p, []int{}) })
	require.PanicsWithValue(t, "magpie: Max called with an empty list", func() { Max(p, []int(nil)) })
}

func TestSumFloatClose(t *testing.T) {
	xs := make([]float64, 100_000)
	for i := range xs {
		xs[i] = 1.0 / float64(i+1)
	}
	var want float64
	for _, x := range xs {
		want += x
	}
	require.InDelta(t, want, Sum(nil, xs), 1e-9)
	require.Equal(t, complex(3, 3), Sum(nil, []complex128{1 + 1i, 2 + 2i}))
	require.Equal(t, uint8(4), Sum(nil, []uint8{200, 60}), "wraps like the sequential sum")
	wraps := make([]int8, 100_000) // wraps many times over, across pieces
	var wrapped int8
	for i := range wraps {
		wraps[i] = int8(i*37 + 11)
		wrapped += wraps[i]
	}
	for _, g := range grainOpts {
		require.Equal(t, wrapped, Sum(nil, wraps, g.opts...), "int8 sum wraps like the sequential sum, %s", g.name)
	}
}

// TestSumGroupsAsReduce checks that Sum, Min and Max, whose leaves loop
// over a subslice with the operator inlined (reduceLeaves), cut and group
// exactly as Reduce with the same operator: with a fixed Grain the pieces
// are fixed, so a float sum is the same bits as Reduce's, on 1 worker and
// on 4, and Min and Max agree with slices.Min and slices.Max.
func TestSumGroupsAsReduce(t *testing.T) {
	p, single := testPools(t)
	r := rand.New(rand.NewPCG(16, 3))
	xs := make([]float64, 100_003)
	for i := range xs {
		xs[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10))
	}
	addF := func(a, b float64) float64 { return a + b }
	for _, pool := range []*forkjoin.Pool{p, single} {
		for _, g := range []int{1000, 4096, 33_333} {
			want := Reduce(pool, xs, 0, addF, addF, Grain(g))
			require.Equal(t, math.Float64bits(want), math.Float64bits(Sum(pool, xs, Grain(g))), "grain %d", g)
		}
		require.Equal(t, slices.Min(xs), Min(pool, xs))
		require.Equal(t, slices.Max(xs), Max(pool, xs))
	}
}

func TestMapReduceNilFunctions(t *testing.T) {
	require.PanicsWithValue(t, "magpie: Map called with a nil function", func() { Map[int, int](nil, []int{1}, nil) })
	require.PanicsWithValue(t, "magpie: MapInPlace called with a nil function", func() { MapInPlace(nil, []int{1}, nil) })
	require.PanicsWithValue(t, "magpie: Reduce called with a nil fold", func() {
		Reduce(nil, []int{1}, 0, nil, func(a, b int) int { return a })
	})
	require.PanicsWithValue(t, "magpie: Reduce called with a nil combine", func() {
		Reduce(nil, []int{1}, 0, func(a, b int) int { return a }, nil)
	})
	require.PanicsWithValue(t, "magpie: ReduceRange called with a nil leaf", func() {
		ReduceRange(nil, 1, 0, nil, func(a, b int) int { return a })
	})
	require.PanicsWithValue(t, "magpie: ReduceRange called with a nil combine", func() {
		ReduceRange(nil, 1, 0, func(a, lo, hi int) int { return a }, nil)
	})
	require.PanicsWithValue(t, "magpie: Filter called with a nil keep", func() { Filter(nil, []int{1}, nil) })
	require.PanicsWithValue(t, "magpie: Count called with a nil predicate", func() { Count(nil, []int{1}, nil) })
}

func TestMapReducePanics(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	for _, n := range []int{5, 50_000} {
		in := ints(n)
		var pe *forkjoin.PanicError
		func() {
			defer func() { pe, _ = recover().(*forkjoin.PanicError) }()
			Map(p, in, func(x int) int {
				if x == in[n-1] {
					panic("map " + strconv.Itoa(n))
				}
				return x
			})
		}()
		require.NotNil(t, pe)
		require.Equal(t, "map "+strconv.Itoa(n), pe.Value)
		pe = nil
		func() {
			defer func() { pe, _ = recover().(*forkjoin.PanicError) }()
			Reduce(p, in, 0, func(a, x int) int { return a + x }, func(a, b int) int { panic("combine") }, Grain(2))
		}()
		require.NotNil(t, pe)
		require.Equal(t, "combine", pe.Value)
		for _, what := range []string{"leaf", "combine"} {
			pe = nil
			func() {
				defer func() { pe, _ = recover().(*forkjoin.PanicError) }()
				ReduceRange(p, n, 0, func(acc, lo, hi int) int {
					if what == "leaf" && hi == n {
						panic("leaf")
					}
					return acc + hi - lo
				}, func(a, b int) int {
					if what == "combine" {
						panic("combine")
					}
					return a + b
				}, Grain(2))
			}()
			require.NotNil(t, pe, what)
			require.Equal(t, what, pe.Value)
		}
		require.Equal(t, sumSeq(in), Sum(p, in), "the pool survives")
	}
}

// The property tests compare each helper with its sequential twin on
// random inputs, with a random grain (0: adaptive) and, for half of the
// cases, a length padded past the sequential threshold.

func quickConfig() *quick.Config { return &quick.Config{MaxCount: 200} }

func pad(xs []int64, long bool) []int64 {
	if long {
		for len(xs) <= SequentialThreshold {
			xs = append(xs, xs...)
			xs = append(xs, int64(len(xs)))
		}
	}
	return xs
}

func quickOpts(g uint8) []Option {
	if g%4 == 0 {
		return nil
	}
	return []Option{Grain(int(g))}
}

func TestQuickHelpers(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(3))
	defer p.Close()
	f := func(xs []int64, g uint8, long bool) bool {
		xs = pad(xs, long)
		opts := quickOpts(g)
		sq := func(x int64) int64 { return x*x ^ 0x5555 }
		wantMap := make([]int64, len(xs))
		var wantSum int64
		var wantFilter []int64
		for i, x := range xs {
			wantMap[i] = sq(x)
			wantSum += x
			if x&1 == 0 {
				wantFilter = append(wantFilter, x)
			}
		}
		// A polynomial hash h(s) = s[0]*31^(k-1) + ... is a left fold whose
		// combine is h(a·b) = h(a)*31^len(b) + h(b): carry (hash, 31^len).
		type hp struct{ h, pow int64 }
		gotHash := Reduce(p, xs, hp{0, 1},
			func(a hp, x int64) hp { return hp{a.h*31 + x, a.pow * 31} },
			func(a, b hp) hp { return hp{a.h*b.pow + b.h, a.pow * b.pow} }, opts...)
		var wantHash int64
		for _, x := range xs {
			wantHash = wantHash*31 + x
		}
		inPlace := slices.Clone(xs)
		MapInPlace(p, inPlace, sq, opts...)
		ok := slices.Equal(Map(p, xs, sq, opts...), wantMap) &&
			slices.Equal(inPlace, wantMap) &&
			Sum(p, xs, opts...) == wantSum &&
			gotHash.h == wantHash &&
			slices.Equal(Filter(p, xs, func(x int64) bool { return x&1 == 0 }, opts...), wantFilter) &&
			Count(p, xs, func(x int64) bool { return x&1 == 0 }, opts...) == len(wantFilter)
		if len(xs) > 0 {
			ok = ok && Min(p, xs, opts...) == slices.Min(xs) && Max(p, xs, opts...) == slices.Max(xs)
		}
		return ok
	}
	require.NoError(t, quick.Check(f, quickConfig()))
}

// FuzzReduce checks Reduce against the left fold for a non-commutative,
// associative combine (the polynomial hash of TestQuickHelpers).
func FuzzReduce(f *testing.F) {
	f.Add([]byte("hello, world"), uint8(0))
	f.Add(make([]byte, 3000), uint8(3))
	p := forkjoin.New(forkjoin.WithParallelism(2))
	f.Cleanup(p.Close)
	f.Fuzz(func(t *testing.T, data []byte, g uint8) {
		type hp struct{ h, pow uint64 }
		got := Reduce(p, data, hp{0, 1},
			func(a hp, x byte) hp { return hp{a.h*131 + uint64(x), a.pow * 131} },
			func(a, b hp) hp { return hp{a.h*b.pow + b.h, a.pow * b.pow} }, quickOpts(g)...)
		var want uint64
		for _, x := range data {
			want = want*131 + uint64(x)
		}
		require.Equal(t, want, got.h)
	})
}

// TestReduceWith: a histogram accumulated in a map that fold writes into.
// Each piece gets a map of its own from newAcc, so under -race this passes
// where Reduce with a map zero (one map shared by every piece) would race;
// the result equals the sequential fold for every size and configuration.
func TestReduceWith(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		in := ints(n)
		want := map[int]int{}
		for _, x := range in {
			want[x%13]++
		}
		got := ReduceWith(r, in, func() map[int]int { return map[int]int{} },
			func(m map[int]int, x int) map[int]int { m[x%13]++; return m },
			func(a, b map[int]int) map[int]int {
				for k, v := range b {
					a[k] += v
				}
				return a
			}, opts...)
		if len(want) == 0 && len(got) == 0 {
			return nil
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("histogram %v, want %v", got, want)
		}
		return nil
	})
}

// TestReduceWithPanics: a panic in newAcc or fold reaches the caller as a
// *PanicError on the small path and the parallel one; nil functions panic
// with the package's message.
func TestReduceWithPanics(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	for _, n := range []int{10, 100_000} {
		var v any
		func() {
			defer func() { v = recover() }()
			ReduceWith(p, ints(n), func() int { panic("no accumulator") },
				func(a, x int) int { return a + x }, func(a, b int) int { return a + b })
		}()
		pe, ok := v.(*forkjoin.PanicError)
		require.True(t, ok, "n=%d: got %T %v", n, v, v)
		require.Equal(t, "no accumulator", pe.Value)
	}
	sum := func(a, b int) int { return a + b }
	require.PanicsWithValue(t, "magpie: ReduceWith called with a nil newAcc", func() { ReduceWith(p, []int{1}, nil, sum, sum) })
	require.PanicsWithValue(t, "magpie: ReduceWith called with a nil fold", func() {
		ReduceWith(p, []int{1}, func() int { return 0 }, nil, sum)
	})
	require.PanicsWithValue(t, "magpie: ReduceWith called with a nil combine", func() {
		ReduceWith(p, []int{1}, func() int { return 0 }, sum, nil)
	})
}
