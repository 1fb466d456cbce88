package sorts

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/sorttest"
	"github.com/magpie-go/magpie/internal/testenv"
)

// rdxInt is every integer kind Sort sorts by radix.
type rdxInt interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// rdxNamed is a named integer type: Sort dispatches on the underlying kind.
type rdxNamed int32

// rdxDist is an input distribution for the radix sort, as raw 64-bit
// patterns converted (truncated) to the element type.
type rdxDist struct {
	name string
	gen  func(r *rand.Rand, n int) []uint64
}

// rdxDists are the distributions the radix sort is checked and measured
// on: the full range, and those that hurt a radix sort (equal keys, few
// distinct, presorted, a small range, one huge bucket, sparse bytes).
var rdxDists = []rdxDist{
	{"random64", func(r *rand.Rand, n int) []uint64 { return rdxFill(n, func(int) uint64 { return r.Uint64() }) }},
	{"equal", func(_ *rand.Rand, n int) []uint64 { return rdxFill(n, func(int) uint64 { return 0xdeadbeefcafe1234 }) }},
	{"fewDistinct", func(r *rand.Rand, n int) []uint64 {
		v := [4]uint64{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
		return rdxFill(n, func(int) uint64 { return v[r.IntN(4)] })
	}},
	{"sorted", func(_ *rand.Rand, n int) []uint64 { return rdxFill(n, func(i int) uint64 { return uint64(i) }) }},
	{"reverse", func(_ *rand.Rand, n int) []uint64 { return rdxFill(n, func(i int) uint64 { return uint64(n - i) }) }},
	{"smallRange", func(r *rand.Rand, n int) []uint64 {
		return rdxFill(n, func(int) uint64 { return uint64(r.IntN(100) - 50) })
	}},
	{"negative", func(r *rand.Rand, n int) []uint64 {
		return rdxFill(n, func(int) uint64 { return uint64(-r.Int64N(1 << 40)) })
	}},
	{"skewed", func(r *rand.Rand, n int) []uint64 { // one huge bucket, a few others
		return rdxFill(n, func(int) uint64 {
			if r.IntN(10) == 0 {
				return r.Uint64()
			}
			return 1<<40 | r.Uint64N(1<<20)
		})
	}},
	{"sparseBytes", func(r *rand.Rand, n int) []uint64 { // only some bytes vary
		return rdxFill(n, func(int) uint64 { return r.Uint64() & 0x00ff00000f00ff00 })
	}},
	{"nearlySorted", func(r *rand.Rand, n int) []uint64 {
		s := rdxFill(n, func(i int) uint64 { return uint64(i) << 20 })
		for range n/100 + 1 {
			i, j := r.IntN(n), r.IntN(n)
			s[i], s[j] = s[j], s[i]
		}
		return s
	}},
	{"sortedDuplicatesReversed", func(_ *rand.Rand, n int) []uint64 {
		return rdxFill(n, func(i int) uint64 { return uint64((n - i) / 3) })
	}},
	{"sortedHalfThenRandom", func(r *rand.Rand, n int) []uint64 {
		// Full-range keys whose first half is sorted: the read pass's
		// blocks there count no top-byte histogram while the others do,
		// so the first MSD level must make its own (radixSortKeys).
		s := rdxFill(n, func(int) uint64 { return r.Uint64() })
		slices.Sort(s[:n/2])
		return s
	}},
}

func rdxFill(n int, f func(i int) uint64) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = f(i)
	}
	return s
}

// rdxSizes are the lengths around the radix threshold and past the LSD leaf
// and the parallel blocks (300,001 makes 8 blocks on 2 workers; larger
// inputs are TestSortRadixWorkers'). Under -race, where the parallel
// parts are what matters, the sizes that make 1 and 2 blocks.
func rdxSizes() []int {
	if testenv.Race {
		return []int{radixMin - 1, radixMin, radixLeaf + 5}
	}
	return []int{radixMin - 1, radixMin, radixMin + 1,
		radixLeaf + 1, 3 * radixLeaf, 300_001}
}

// rdxCheckInts sorts every distribution at every size as E with Sort on
// each kind of Runner, and requires slices.Sort's result.
func rdxCheckInts[E rdxInt](t *testing.T, p *forkjoin.Pool) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, d := range rdxDists {
		for _, n := range rdxSizes() {
			raw := d.gen(rng, n)
			in := make([]E, n)
			for i, v := range raw {
				in[i] = E(v)
			}
			want := slices.Clone(in)
			slices.Sort(want)
			runners := sorttest.Runners
			if unsafe.Sizeof(in[0]) != 8 || testenv.Race {
				runners = runners[:1] // the other Runners once per size class
			}
			for _, rn := range runners {
				got := slices.Clone(in)
				rn.Run(p, func(r forkjoin.Runner) { Sort(r, got, 0, false) })
				require.Equal(t, want, got, "%T %s n=%d %s", in[0], d.name, n, rn.Name)
			}
		}
	}
}

// TestSortRadixIntegerTypes: for every integer type, and a named one, Sort
// gives slices.Sort's result on random, equal, few distinct, sorted,
// reversed, small range, negative, skewed, sparse-byte and nearly sorted
// inputs, at sizes around radixMin and past the leaf and block sizes.
func TestSortRadixIntegerTypes(t *testing.T) {
	p := sorttest.Pool(t, 2)
	t.Run("int", func(t *testing.T) { rdxCheckInts[int](t, p) })
	t.Run("int8", func(t *testing.T) { rdxCheckInts[int8](t, p) })
	t.Run("int16", func(t *testing.T) { rdxCheckInts[int16](t, p) })
	t.Run("int32", func(t *testing.T) { rdxCheckInts[int32](t, p) })
	t.Run("int64", func(t *testing.T) { rdxCheckInts[int64](t, p) })
	t.Run("uint", func(t *testing.T) { rdxCheckInts[uint](t, p) })
	t.Run("uint8", func(t *testing.T) { rdxCheckInts[uint8](t, p) })
	t.Run("uint16", func(t *testing.T) { rdxCheckInts[uint16](t, p) })
	t.Run("uint32", func(t *testing.T) { rdxCheckInts[uint32](t, p) })
	t.Run("uint64", func(t *testing.T) { rdxCheckInts[uint64](t, p) })
	t.Run("uintptr", func(t *testing.T) { rdxCheckInts[uintptr](t, p) })
	t.Run("named", func(t *testing.T) { rdxCheckInts[rdxNamed](t, p) })
}

// TestSortRadixWorkers sorts on pools of 1, 3 and 5 workers (block counts
// and bucket groups differ).
func TestSortRadixWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	n := 500_000
	if testenv.Race {
		n = 150_000
	}
	for _, workers := range []int{1, 3, 5} {
		p := sorttest.Pool(t, workers)
		for _, d := range rdxDists {
			in := make([]int64, n)
			for i, v := range d.gen(rng, n) {
				in[i] = int64(v)
			}
			want := slices.Clone(in)
			slices.Sort(want)
			Sort(p, in, 0, false)
			require.Equal(t, want, in, "%s workers=%d", d.name, workers)
		}
	}
}

// rdxFloatSpecials are the values the float order is about.
var rdxFloatSpecials = []float64{
	math.NaN(), -math.NaN(), math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff8000000000123),
	math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1),
	math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 1, -1,
}

func rdxFloats(r *rand.Rand, n int, specials float64, pool []float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		switch {
		case r.Float64() < specials:
			s[i] = pool[r.IntN(len(pool))]
		case r.IntN(2) == 0:
			s[i] = r.NormFloat64() * 1e6
		default:
			s[i] = math.Float64frombits(r.Uint64()) // any pattern, NaNs included
		}
	}
	return s
}

// rdxRadixFloatOrder checks the documented order of Sort on floats above
// radixMin: slices.Sort's order (NaNs first, then cmp.Compare), with
// -0.0 before +0.0, NaNs equal in bits adjacent, a permutation of the
// input, and a result that depends only on the input's multiset.
func rdxRadixFloatOrder[F float32 | float64](t *testing.T, p *forkjoin.Pool, in []F, name string) {
	got := slices.Clone(in)
	Sort(p, got, 0, false)
	require.True(t, slices.IsSorted(got), "%s: not sorted", name)
	patterns := func(s []F) []uint64 {
		b := make([]uint64, len(s))
		for i, v := range s {
			switch x := any(v).(type) {
			case float32:
				b[i] = uint64(math.Float32bits(x))
			case float64:
				b[i] = math.Float64bits(x)
			}
		}
		return b
	}
	gb, ib := patterns(got), patterns(in)
	slices.Sort(ib)
	sortedGot := slices.Clone(gb)
	slices.Sort(sortedGot)
	require.Equal(t, ib, sortedGot, "%s: not a permutation (bitwise)", name)
	// -0.0 before +0.0; NaNs grouped by bit pattern.
	seenPos := false
	seenNaN := map[uint64]bool{}
	for i, v := range got {
		if v == 0 {
			if math.Signbit(float64(v)) {
				require.False(t, seenPos, "%s: -0 after +0 at %d", name, i)
			} else {
				seenPos = true
			}
		}
		if v != v {
			if i > 0 && gb[i-1] != gb[i] {
				require.False(t, seenNaN[gb[i]], "%s: NaN %x not grouped", name, gb[i])
			}
			seenNaN[gb[i]] = true
		}
	}
	// The same multiset in another order gives the same bits.
	shuffled := slices.Clone(in)
	rand.New(rand.NewPCG(1, uint64(len(in)))).Shuffle(len(shuffled), func(i, j int) {
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	})
	Sort(p, shuffled, 0, false)
	require.Equal(t, gb, patterns(shuffled), "%s: result depends on the input order", name)
}

// TestSortRadixFloats: float32 and float64 with NaNs (several payloads,
// both signs), ±0, ±Inf, subnormals: the order of rdxRadixFloatOrder; and,
// when the input has a single NaN pattern and a single zero, bit for bit
// slices.Sort's result.
func TestSortRadixFloats(t *testing.T) {
	p := sorttest.Pool(t, 2)
	rng := rand.New(rand.NewPCG(35, 36))
	for _, n := range rdxSizes()[1:] { // radixMin and up
		for _, spec := range []float64{0, 0.01, 0.5, 1} {
			in := rdxFloats(rng, n, spec, rdxFloatSpecials)
			name := fmt.Sprintf("n=%d specials=%v", n, spec)
			rdxRadixFloatOrder(t, p, in, "float64 "+name)
			in32 := make([]float32, n)
			for i, v := range in {
				in32[i] = float32(v)
			}
			rdxRadixFloatOrder(t, p, in32, "float32 "+name)

			// One NaN pattern, one zero, no random bit patterns: the same
			// bits as slices.Sort.
			plain := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -1, 1, math.MaxFloat64}
			in = rdxFloats(rng, n, 1.1, plain)
			for i := range in {
				if rng.IntN(2) == 0 {
					in[i] = rng.NormFloat64()
				}
			}
			want := slices.Clone(in)
			slices.Sort(want)
			got := slices.Clone(in)
			Sort(p, got, 0, false)
			require.Equal(t, bitsInOrder(want), bitsInOrder(got), "float64 plain "+name)
		}
	}
}

// TestSortInPlaceQuicksortLarge keeps the in-place quicksort of Sort
// covered on integers now that Sort sorts them by radix.
func TestSortInPlaceQuicksortLarge(t *testing.T) {
	p := sorttest.Pool(t, 2)
	rng := rand.New(rand.NewPCG(39, 40))
	n := 300_001
	if testenv.Race {
		n = 50_000
	}
	for _, sh := range sorttest.Shapes {
		keys := sh.Gen(rng, n)
		want := slices.Clone(keys)
		slices.Sort(want)
		Sort(p, keys, 0, true)
		require.Equal(t, want, keys, sh.Name)
	}
}

// TestCanceledRadixSortLeavesPermutation cancels radix sorts (full-range
// and skewed int64, uint8, float64 with NaNs) at random moments: the slice
// is then a permutation of its input bit for bit, sorted if the sort
// finished.
func TestCanceledRadixSortLeavesPermutation(t *testing.T) {
	n := 1 << 20
	if testenv.Race {
		n = 1 << 17
	}
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	rng := rand.New(rand.NewPCG(41, 42))
	ints := make([]int64, n)
	for i, v := range rdxDists[0].gen(rng, n) {
		ints[i] = int64(v)
	}
	skewed := make([]int64, n)
	for i, v := range rdxDists[7].gen(rng, n) {
		skewed[i] = int64(v)
	}
	bytes := make([]uint8, n)
	for i := range bytes {
		bytes[i] = uint8(rng.Uint32())
	}
	floats := rdxFloats(rng, n, 0.1, rdxFloatSpecials)
	canceled := 0
	for range 6 {
		canceled += cancelRound(t, p, rng, ints, sortOnWorker[int64], identity[int64])
		canceled += cancelRound(t, p, rng, skewed, sortOnWorker[int64], identity[int64])
		canceled += cancelRound(t, p, rng, bytes, sortOnWorker[uint8], identity[uint8])
		canceled += cancelRound(t, p, rng, floats, sortOnWorker[float64], floatBits)
	}
	t.Logf("%d of 24 sorts canceled before they finished", canceled)
}

// FuzzSortRadix sorts slices built from the fuzzer's bytes, as int64,
// int16 and float64, stretched past radixMin (and, with extra, past the
// leaf size) by repeating them: Sort must give slices.Sort's result (for
// floats, the order of rdxRadixFloatOrder, and slices.Sort's bits when the
// input has no NaN and no zero).
func FuzzSortRadix(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 255, 0, 0, 0, 0, 0, 0, 128}, uint16(0))
	f.Add([]byte{0x7f, 0xf8, 0, 0, 0, 0, 0, 1, 0x80, 0, 0, 0, 0, 0, 0, 0}, uint16(40000))
	f.Add([]byte{9}, uint16(7))
	p := sorttest.Pool(f, 2)
	f.Fuzz(func(t *testing.T, data []byte, extra uint16) {
		if len(data) == 0 {
			return
		}
		n := radixMin + int(extra)
		word := func(i int) uint64 {
			var w uint64
			for j := range 8 {
				w = w<<8 | uint64(data[(8*i+j)%len(data)])
			}
			// Vary the repetitions a little so that not every value
			// repeats: the low byte takes the repetition number.
			return w ^ uint64(8*i/len(data))&0xff
		}
		i64 := make([]int64, n)
		i16 := make([]int16, n)
		f64 := make([]float64, n)
		for i := range n {
			w := word(i)
			i64[i] = int64(w)
			i16[i] = int16(w)
			f64[i] = math.Float64frombits(w)
		}
		want64 := slices.Clone(i64)
		slices.Sort(want64)
		Sort(p, i64, 0, false)
		require.Equal(t, want64, i64)
		want16 := slices.Clone(i16)
		slices.Sort(want16)
		Sort(p, i16, 0, false)
		require.Equal(t, want16, i16)
		rdxRadixFloatOrder(t, p, f64, "fuzz")
		plain := slices.DeleteFunc(slices.Clone(f64), func(x float64) bool { return x != x || x == 0 })
		if len(plain) >= radixMin {
			want := slices.Clone(plain)
			slices.Sort(want)
			Sort(p, plain, 0, false)
			require.Equal(t, bitsInOrder(want), bitsInOrder(plain))
		}
	})
}

// TestRadixSortAllocatesOnlyItsBuffer sorts 1M non-negative int64 (63-bit
// keys, as rand's Int64 gives: 128 top-level buckets of about 8K) and
// counts allocations: the scratch buffer and a few per MSD level (the
// histograms, the passes' closures), never one per bucket. Each bucket of
// the last MSD level used to enter sortRange, whose bucket-offset arrays
// escape with its closures: 2-4 KiB per bucket (66.6K allocations and
// ~77 MB per sort of 10M keys in bench/'s SortInt64).
func TestRadixSortAllocatesOnlyItsBuffer(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector's bookkeeping allocates")
	}
	n := 1 << 20
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	src := make([]int64, n)
	for i := range src {
		src[i] = rng.Int64()
	}
	work := make([]int64, n)
	allocs := testing.AllocsPerRun(3, func() {
		copy(work, src)
		require.True(t, sortRadix(p, work))
	})
	require.True(t, slices.IsSorted(work))
	assert.LessOrEqual(t, allocs, 40.0, "allocations per radix sort of 1M int64")
}
