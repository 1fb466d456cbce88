package sorts

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"testing/quick"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/sorttest"
	"github.com/magpie-go/magpie/internal/testenv"
)

// The algorithms' tests: the quicksort (both variants) and the merge sort
// against the standard library on every size up to 300, adversarial shapes,
// floats, bounded comparisons, properties and fuzzing, called directly
// (magpie's tests check the public functions that wrap them).

func TestSortSmallSizesAllShapes(t *testing.T) {
	p := sorttest.Pool(t, 4)
	rng := rand.New(rand.NewPCG(1, 2))
	grains := []int{0, 1, 40}
	for _, sh := range sorttest.Shapes {
		t.Run(sh.Name, func(t *testing.T) {
			for n := 0; n <= 300; n++ {
				keys := sh.Gen(rng, n)
				for _, g := range grains {
					sorttest.CheckAll(t, algorithms, p, keys, g)
				}
			}
		})
	}
}

func TestSortLargeAllShapes(t *testing.T) {
	p := sorttest.Pool(t, 4)
	sizes := []int{100_000, 1_000_000}
	if testenv.Race || testing.Short() {
		sizes = []int{30_000}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range sizes {
		for _, sh := range sorttest.Shapes {
			t.Run(fmt.Sprintf("%s/%d", sh.Name, n), func(t *testing.T) {
				keys := sh.Gen(rng, n)
				sorttest.CheckAll(t, algorithms, p, keys, 0)
				if n <= 100_000 {
					sorttest.CheckAll(t, algorithms, p, keys, 500)
				}
			})
		}
	}
}

// TestSortParallelPartition sorts inputs large enough for the parallel
// partition of the top levels (run while other workers are idle), at
// sizes around its threshold, also under the race detector.
func TestSortParallelPartition(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 21))
	sizes := []int{1<<18 - 1, 1 << 18, 300_001}
	shapes := []sorttest.Shape{sorttest.Shapes[0], sorttest.Shapes[5], sorttest.Shapes[6], sorttest.Shapes[8]}
	if testenv.Race {
		sizes, shapes = sizes[1:2], shapes[:3]
	}
	for _, workers := range []int{2, 5} {
		p := sorttest.Pool(t, workers)
		for _, n := range sizes {
			for _, sh := range shapes {
				keys := sh.Gen(rng, n)
				want := slices.Clone(keys)
				slices.Sort(want)
				got := slices.Clone(keys)
				Sort(p, got, 0, true) // the quicksort: Sort on ints is a radix sort
				require.Equal(t, want, got, "Sort %s n=%d workers=%d", sh.Name, n, workers)
				got = slices.Clone(keys)
				Func(p, got, cmp.Compare[int], 0)
				require.Equal(t, want, got, "SortFunc %s n=%d workers=%d", sh.Name, n, workers)
			}
		}
		// A comparator panicking inside the first (parallel) partition, and
		// inside a later one, leaves a permutation.
		n := sizes[len(sizes)-1]
		keys := sorttest.Shapes[0].Gen(rng, n)
		want := slices.Clone(keys)
		slices.Sort(want)
		for _, after := range []int64{int64(n) / 3, 2 * int64(n)} {
			var calls atomic.Int64
			got := slices.Clone(keys)
			require.Panics(t, func() {
				Func(p, got, func(a, b int) int {
					if calls.Add(1) > after {
						panic(errBoom)
					}
					return cmp.Compare(a, b)
				}, 0)
			})
			slices.Sort(got)
			require.Equal(t, want, got, "after %d comparisons", after)
		}
	}
}

func TestSortFloatsNaNAndZeros(t *testing.T) {
	p := sorttest.Pool(t, 2)
	rng := rand.New(rand.NewPCG(10, 11))
	special := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), -1, 1}
	for _, n := range []int{0, 1, 2, 7, 100, 1000, 30_000} {
		s := make([]float64, n)
		for i := range s {
			if rng.IntN(4) == 0 {
				s[i] = special[rng.IntN(len(special))]
			} else {
				s[i] = rng.NormFloat64()
			}
		}
		want := slices.Clone(s)
		slices.Sort(want)
		for _, grain := range []int{0, 16} {
			got := slices.Clone(s)
			Sort(p, got, grain, false)
			require.True(t, sameFloats(want, got), "Sort n=%d", n)
			require.Equal(t, floatBits(s), floatBits(got), "Sort lost or changed elements, n=%d", n)
			if n > 0 && slices.ContainsFunc(s, math.IsNaN) {
				require.True(t, math.IsNaN(got[0]), "NaNs come first")
			}

			got = slices.Clone(s)
			Func(p, got, cmp.Compare[float64], grain)
			require.True(t, sameFloats(want, got), "SortFunc n=%d", n)
			require.Equal(t, floatBits(s), floatBits(got))

			got = slices.Clone(s)
			wantStable := slices.Clone(s)
			slices.SortStableFunc(wantStable, cmp.Compare[float64])
			StableFunc(p, got, cmp.Compare[float64], grain)
			// Stable: even -0 and +0 keep their input order, bit for bit.
			require.Equal(t, bitsInOrder(wantStable), bitsInOrder(got), "SortStableFunc n=%d", n)
		}
	}
}

// TestSortOtherTypes covers strings and a named slice type.
func TestSortOtherTypes(t *testing.T) {
	p := sorttest.Pool(t, 2)
	type names []string
	rng := rand.New(rand.NewPCG(12, 13))
	s := make(names, 10_000)
	for i := range s {
		s[i] = fmt.Sprintf("k%05d", rng.IntN(3000))
	}
	want := slices.Clone(s)
	slices.Sort(want)
	got := slices.Clone(s)
	Sort(p, got, 64, false)
	require.Equal(t, want, got)
	got = slices.Clone(s)
	Func(p, got, func(a, b string) int { return cmp.Compare(a, b) }, 0)
	require.Equal(t, want, got)
}

// TestSortComparisonsBounded checks that no shape drives the sorts into
// quadratic behaviour, by counting comparisons (a deterministic fact, not
// a timing): the bound is a small multiple of n log2 n.
func TestSortComparisonsBounded(t *testing.T) {
	p := sorttest.Pool(t, 2)
	n := 200_000
	if testenv.Race {
		n = 20_000
	}
	bound := int64(4 * float64(n) * math.Log2(float64(n)))
	rng := rand.New(rand.NewPCG(14, 15))
	shapes := append(slices.Clone(sorttest.Shapes), sorttest.Shape{Name: "median3Killer", Gen: medianOf3Killer})
	for _, sh := range shapes {
		keys := sh.Gen(rng, n)
		for _, grain := range []int{0, 32} {
			var count atomic.Int64
			counting := func(a, b int) int {
				count.Add(1)
				return cmp.Compare(a, b)
			}
			s := slices.Clone(keys)
			Func(p, s, counting, grain)
			require.True(t, slices.IsSorted(s))
			require.LessOrEqual(t, count.Load(), bound, "SortFunc %s: %d comparisons", sh.Name, count.Load())

			count.Store(0)
			s = slices.Clone(keys)
			StableFunc(p, s, counting, grain)
			require.True(t, slices.IsSorted(s))
			require.LessOrEqual(t, count.Load(), bound, "SortStableFunc %s: %d comparisons", sh.Name, count.Load())
		}
	}
}

// medianOf3Killer is Musser's sequence that defeats plain
// median-of-three quicksort.
func medianOf3Killer(_ *rand.Rand, n int) []int {
	s := make([]int, n)
	k := n / 2
	for i := 0; i < k; i++ {
		if i%2 == 0 {
			s[i] = i + 1
		} else {
			s[i] = k + i + 1
		}
		s[k+i] = 2 * (i + 1)
	}
	if n%2 == 1 {
		s[n-1] = n
	}
	return s
}

func TestSortPropertyQuick(t *testing.T) {
	p := sorttest.Pool(t, 3)
	cfg := &quick.Config{MaxCount: 300}
	if testenv.Race {
		cfg.MaxCount = 60
	}
	prop := func(keys []int16, grain uint8, stretch uint8) bool {
		// Stretch the input so that the parallel levels run too.
		in := make([]int, 0, len(keys)*(int(stretch%8)+1))
		for range int(stretch%8) + 1 {
			for _, k := range keys {
				in = append(in, int(k))
			}
		}
		want := slices.Clone(in)
		slices.Sort(want)
		got := slices.Clone(in)
		Sort(p, got, int(grain), true) // grain is the quicksort's
		if !slices.Equal(want, got) {
			return false
		}
		got = slices.Clone(in)
		Func(p, got, cmp.Compare[int], int(grain))
		if !slices.Equal(want, got) {
			return false
		}
		items := sorttest.Items(in, 10)
		wantItems := slices.Clone(items)
		slices.SortStableFunc(wantItems, sorttest.CmpItem)
		StableFunc(p, items, sorttest.CmpItem, int(grain))
		return slices.Equal(wantItems, items)
	}
	require.NoError(t, quick.Check(prop, cfg))
}

func FuzzSort(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add([]byte{3, 1, 2}, uint8(1))
	f.Add([]byte("the quick brown fox jumps over the lazy dog, again and again"), uint8(16))
	p := forkjoin.New(forkjoin.WithParallelism(2))
	f.Cleanup(p.Close)
	f.Fuzz(func(t *testing.T, data []byte, grain uint8) {
		in := make([]int, len(data)*4)
		for i := range in {
			in[i] = int(data[i%len(data)]) ^ (i % 3)
		}
		want := slices.Clone(in)
		slices.Sort(want)
		got := slices.Clone(in)
		Sort(p, got, int(grain), true) // grain is the quicksort's
		require.Equal(t, want, got)
		items := sorttest.Items(in, 5)
		wantItems := slices.Clone(items)
		slices.SortStableFunc(wantItems, sorttest.CmpItem)
		StableFunc(p, items, sorttest.CmpItem, int(grain))
		require.Equal(t, wantItems, items)
	})
}

// TestSortStableLargeElements sorts a struct too big to be cheap to move,
// with many equal keys.
func TestSortStableLargeElements(t *testing.T) {
	type big struct {
		key int
		pad [6]int
		pos int
	}
	p := sorttest.Pool(t, 2)
	rng := rand.New(rand.NewPCG(18, 19))
	n := 60_000
	if testenv.Race {
		n = 10_000
	}
	s := make([]big, n)
	for i := range s {
		s[i] = big{key: rng.IntN(100), pos: i}
	}
	byKey := func(a, b big) int { return cmp.Compare(a.key, b.key) }
	want := slices.Clone(s)
	slices.SortStableFunc(want, byKey)
	StableFunc(p, s, byKey, 0)
	require.Equal(t, want, s)
}
