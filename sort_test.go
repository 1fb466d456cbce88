package magpie_test

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/quick"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"

	"github.com/magpie-go/magpie/internal/testenv"
)

// srtShape generates an input of n elements of one adversarial shape.
type srtShape struct {
	name string
	gen  func(r *rand.Rand, n int) []int
}

var srtShapes = []srtShape{
	{"random", func(r *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = r.Int()
		}
		return s
	}},
	{"sorted", func(_ *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		return s
	}},
	{"reversed", func(_ *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = n - i
		}
		return s
	}},
	{"equal", func(_ *rand.Rand, n int) []int { return make([]int, n) }},
	{"sawtooth", func(_ *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i % 97
		}
		return s
	}},
	{"fewDistinct", func(r *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = r.IntN(4)
		}
		return s
	}},
	{"organPipe", func(_ *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = min(i, n-1-i)
		}
		return s
	}},
	{"nearlySorted", func(r *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		for range n/100 + 1 {
			if n > 0 {
				i, j := r.IntN(n), r.IntN(n)
				s[i], s[j] = s[j], s[i]
			}
		}
		return s
	}},
	{"sortedThenRandom", func(r *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			if i < n/2 {
				s[i] = i
			} else {
				s[i] = r.IntN(n + 1)
			}
		}
		return s
	}},
}

// srtItem is what the stable sort sorts: by key, with the input position
// to check that equal keys kept their order.
type srtItem struct {
	key, pos int
}

func srtCmpItem(a, b srtItem) int { return cmp.Compare(a.key, b.key) }

func srtItems(keys []int, mod int) []srtItem {
	s := make([]srtItem, len(keys))
	for i, k := range keys {
		if mod > 0 {
			k %= mod
			if k < 0 {
				k = -k
			}
		}
		s[i] = srtItem{k, i}
	}
	return s
}

// srtRunners are the three kinds of Runner the sorts accept; each runs
// sortFn with one of them.
type srtRunner struct {
	name string
	run  func(p *forkjoin.Pool, sortFn func(r forkjoin.Runner))
}

var srtRunners = []srtRunner{
	{"pool", func(p *forkjoin.Pool, sortFn func(forkjoin.Runner)) { sortFn(p) }},
	{"worker", func(p *forkjoin.Pool, sortFn func(forkjoin.Runner)) {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
			sortFn(w)
			return struct{}{}
		})
	}},
	{"nil", func(_ *forkjoin.Pool, sortFn func(forkjoin.Runner)) { sortFn(nil) }},
}

// srtCheckAll sorts keys with the three sorts on r and compares each with
// its standard library twin.
func srtCheckAll(t *testing.T, r forkjoin.Runner, keys []int, opts ...magpie.Option) {
	t.Helper()
	want := slices.Clone(keys)
	slices.Sort(want)

	got := slices.Clone(keys)
	magpie.Sort(r, got, opts...)
	require.Equal(t, want, got, "Sort")

	// The quicksort, which Sort uses for ints below radixMin only.
	got = slices.Clone(keys)
	magpie.Sort(r, got, append(slices.Clip(opts), magpie.InPlace())...)
	require.Equal(t, want, got, "Sort with InPlace")

	got = slices.Clone(keys)
	magpie.SortFunc(r, got, func(a, b int) int { return cmp.Compare(b, a) }, opts...)
	slices.Reverse(got)
	require.Equal(t, want, got, "SortFunc (descending)")

	// Keys folded onto a few values so that stability is visible.
	items := srtItems(keys, 7)
	wantItems := slices.Clone(items)
	slices.SortStableFunc(wantItems, srtCmpItem)
	magpie.SortStableFunc(r, items, srtCmpItem, opts...)
	require.Equal(t, wantItems, items, "SortStableFunc")
}

func srtPool(t testing.TB, n int) *forkjoin.Pool {
	p := forkjoin.New(forkjoin.WithParallelism(n))
	t.Cleanup(p.Close)
	return p
}

func TestSortSmallSizesAllShapes(t *testing.T) {
	p := srtPool(t, 4)
	rng := rand.New(rand.NewPCG(1, 2))
	grains := [][]magpie.Option{nil, {magpie.Grain(1)}, {magpie.Grain(40)}}
	for _, sh := range srtShapes {
		t.Run(sh.name, func(t *testing.T) {
			for n := 0; n <= 300; n++ {
				keys := sh.gen(rng, n)
				for _, g := range grains {
					srtCheckAll(t, p, keys, g...)
				}
			}
		})
	}
}

func TestSortLargeAllShapes(t *testing.T) {
	p := srtPool(t, 4)
	sizes := []int{100_000, 1_000_000}
	if testenv.Race || testing.Short() {
		sizes = []int{30_000}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range sizes {
		for _, sh := range srtShapes {
			t.Run(fmt.Sprintf("%s/%d", sh.name, n), func(t *testing.T) {
				keys := sh.gen(rng, n)
				srtCheckAll(t, p, keys)
				if n <= 100_000 {
					srtCheckAll(t, p, keys, magpie.Grain(500))
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
	shapes := []srtShape{srtShapes[0], srtShapes[5], srtShapes[6], srtShapes[8]}
	if testenv.Race {
		sizes, shapes = sizes[1:2], shapes[:3]
	}
	for _, workers := range []int{2, 5} {
		p := srtPool(t, workers)
		for _, n := range sizes {
			for _, sh := range shapes {
				keys := sh.gen(rng, n)
				want := slices.Clone(keys)
				slices.Sort(want)
				got := slices.Clone(keys)
				magpie.Sort(p, got, magpie.InPlace()) // the quicksort: Sort on ints is a radix sort
				require.Equal(t, want, got, "Sort %s n=%d workers=%d", sh.name, n, workers)
				got = slices.Clone(keys)
				magpie.SortFunc(p, got, cmp.Compare[int])
				require.Equal(t, want, got, "SortFunc %s n=%d workers=%d", sh.name, n, workers)
			}
		}
		// A comparator panicking inside the first (parallel) partition, and
		// inside a later one, leaves a permutation.
		n := sizes[len(sizes)-1]
		keys := srtShapes[0].gen(rng, n)
		want := slices.Clone(keys)
		slices.Sort(want)
		for _, after := range []int64{int64(n) / 3, 2 * int64(n)} {
			var calls atomic.Int64
			got := slices.Clone(keys)
			require.Panics(t, func() {
				magpie.SortFunc(p, got, func(a, b int) int {
					if calls.Add(1) > after {
						panic(errSrtBoom)
					}
					return cmp.Compare(a, b)
				})
			})
			slices.Sort(got)
			require.Equal(t, want, got, "after %d comparisons", after)
		}
	}
}

func TestSortRunners(t *testing.T) {
	p := srtPool(t, 3)
	rng := rand.New(rand.NewPCG(5, 6))
	n := 50_000
	if testenv.Race {
		n = 10_000
	}
	for _, rn := range srtRunners {
		t.Run(rn.name, func(t *testing.T) {
			for _, sh := range srtShapes[:4] {
				keys := sh.gen(rng, n)
				rn.run(p, func(r forkjoin.Runner) {
					srtCheckAll(t, r, keys)
					srtCheckAll(t, r, keys, magpie.Grain(100))
				})
			}
		})
	}
}

// TestSortNestedInTasks sorts several slices at once from tasks of one
// computation, each passing its own worker.
func TestSortNestedInTasks(t *testing.T) {
	p := srtPool(t, 4)
	const slicesN, n = 8, 20_000
	rng := rand.New(rand.NewPCG(7, 8))
	inputs := make([][]int, slicesN)
	for i := range inputs {
		inputs[i] = srtShapes[0].gen(rng, n)
	}
	got := make([][]int, slicesN)
	forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
		futures := make([]*forkjoin.Future[[]int], slicesN)
		for i := range inputs {
			futures[i] = forkjoin.Fork(w, func(w *forkjoin.Worker) []int {
				s := slices.Clone(inputs[i])
				switch i % 3 {
				case 0:
					magpie.Sort(w, s)
				case 1:
					magpie.SortFunc(w, s, cmp.Compare[int])
				default:
					magpie.SortStableFunc(w, s, cmp.Compare[int])
				}
				return s
			})
		}
		for i, f := range futures {
			got[i] = f.Join(w)
		}
		return struct{}{}
	})
	for i := range inputs {
		want := slices.Clone(inputs[i])
		slices.Sort(want)
		require.Equal(t, want, got[i])
	}
}

// TestSortConcurrentCallers sorts from several goroutines on one pool.
func TestSortConcurrentCallers(t *testing.T) {
	p := srtPool(t, 2)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			keys := srtShapes[g%len(srtShapes)].gen(rng, 20_000)
			want := slices.Clone(keys)
			slices.Sort(want)
			got := slices.Clone(keys)
			magpie.Sort(p, got)
			if !slices.Equal(want, got) {
				t.Errorf("goroutine %d: Sort differs from slices.Sort", g)
			}
			got = slices.Clone(keys)
			magpie.SortStableFunc(p, got, cmp.Compare[int])
			if !slices.Equal(want, got) {
				t.Errorf("goroutine %d: SortStableFunc differs from slices.Sort", g)
			}
		}()
	}
	srtWait(t, &wg)
}

func srtWait(t *testing.T, wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("sorts did not finish")
	}
}

// srtSameFloats reports whether a and b are equal element by element,
// NaN matching NaN and -0 matching +0 (slices.Sort does not order them).
func srtSameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if cmp.Compare(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// srtBits returns the sorted bit patterns of s: equal for two permutations.
func srtBits(s []float64) []uint64 {
	b := make([]uint64, len(s))
	for i, x := range s {
		b[i] = math.Float64bits(x)
	}
	slices.Sort(b)
	return b
}

func TestSortFloatsNaNAndZeros(t *testing.T) {
	p := srtPool(t, 2)
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
		for _, opts := range [][]magpie.Option{nil, {magpie.Grain(16)}} {
			got := slices.Clone(s)
			magpie.Sort(p, got, opts...)
			require.True(t, srtSameFloats(want, got), "Sort n=%d", n)
			require.Equal(t, srtBits(s), srtBits(got), "Sort lost or changed elements, n=%d", n)
			if n > 0 && slices.ContainsFunc(s, math.IsNaN) {
				require.True(t, math.IsNaN(got[0]), "NaNs come first")
			}

			got = slices.Clone(s)
			magpie.SortFunc(p, got, cmp.Compare[float64], opts...)
			require.True(t, srtSameFloats(want, got), "SortFunc n=%d", n)
			require.Equal(t, srtBits(s), srtBits(got))

			got = slices.Clone(s)
			wantStable := slices.Clone(s)
			slices.SortStableFunc(wantStable, cmp.Compare[float64])
			magpie.SortStableFunc(p, got, cmp.Compare[float64], opts...)
			// Stable: even -0 and +0 keep their input order, bit for bit.
			require.Equal(t, srtBitsInOrder(wantStable), srtBitsInOrder(got), "SortStableFunc n=%d", n)
		}
	}
}

func srtBitsInOrder(s []float64) []uint64 {
	b := make([]uint64, len(s))
	for i, x := range s {
		b[i] = math.Float64bits(x)
	}
	return b
}

// TestSortOtherTypes covers strings and a named slice type.
func TestSortOtherTypes(t *testing.T) {
	p := srtPool(t, 2)
	type names []string
	rng := rand.New(rand.NewPCG(12, 13))
	s := make(names, 10_000)
	for i := range s {
		s[i] = fmt.Sprintf("k%05d", rng.IntN(3000))
	}
	want := slices.Clone(s)
	slices.Sort(want)
	got := slices.Clone(s)
	magpie.Sort(p, got, magpie.Grain(64))
	require.Equal(t, want, got)
	got = slices.Clone(s)
	magpie.SortFunc(p, got, func(a, b string) int { return cmp.Compare(a, b) })
	require.Equal(t, want, got)
}

// TestSortComparisonsBounded checks that no shape drives the sorts into
// quadratic behaviour, by counting comparisons (a deterministic fact, not
// a timing): the bound is a small multiple of n log2 n.
func TestSortComparisonsBounded(t *testing.T) {
	p := srtPool(t, 2)
	n := 200_000
	if testenv.Race {
		n = 20_000
	}
	bound := int64(4 * float64(n) * math.Log2(float64(n)))
	rng := rand.New(rand.NewPCG(14, 15))
	shapes := append(slices.Clone(srtShapes), srtShape{"median3Killer", srtMedianOf3Killer})
	for _, sh := range shapes {
		keys := sh.gen(rng, n)
		for _, opts := range [][]magpie.Option{nil, {magpie.Grain(32)}} {
			var count atomic.Int64
			counting := func(a, b int) int {
				count.Add(1)
				return cmp.Compare(a, b)
			}
			s := slices.Clone(keys)
			magpie.SortFunc(p, s, counting, opts...)
			require.True(t, slices.IsSorted(s))
			require.LessOrEqual(t, count.Load(), bound, "SortFunc %s: %d comparisons", sh.name, count.Load())

			count.Store(0)
			s = slices.Clone(keys)
			magpie.SortStableFunc(p, s, counting, opts...)
			require.True(t, slices.IsSorted(s))
			require.LessOrEqual(t, count.Load(), bound, "SortStableFunc %s: %d comparisons", sh.name, count.Load())
		}
	}
}

// srtMedianOf3Killer is Musser's sequence that defeats plain
// median-of-three quicksort.
func srtMedianOf3Killer(_ *rand.Rand, n int) []int {
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
	p := srtPool(t, 3)
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
		opts := []magpie.Option{magpie.Grain(int(grain))}
		want := slices.Clone(in)
		slices.Sort(want)
		got := slices.Clone(in)
		magpie.Sort(p, got, magpie.Grain(int(grain)), magpie.InPlace()) // Grain is the quicksort's
		if !slices.Equal(want, got) {
			return false
		}
		got = slices.Clone(in)
		magpie.SortFunc(p, got, cmp.Compare[int], opts...)
		if !slices.Equal(want, got) {
			return false
		}
		items := srtItems(in, 10)
		wantItems := slices.Clone(items)
		slices.SortStableFunc(wantItems, srtCmpItem)
		magpie.SortStableFunc(p, items, srtCmpItem, opts...)
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
		magpie.Sort(p, got, magpie.Grain(int(grain)), magpie.InPlace()) // Grain is the quicksort's
		require.Equal(t, want, got)
		items := srtItems(in, 5)
		wantItems := slices.Clone(items)
		slices.SortStableFunc(wantItems, srtCmpItem)
		magpie.SortStableFunc(p, items, srtCmpItem, magpie.Grain(int(grain)))
		require.Equal(t, wantItems, items)
	})
}

var errSrtBoom = errors.New("comparator exploded")

// TestSortComparatorPanic makes the comparator panic after k calls, at
// every stage of the sorts: the panic reaches the caller as a
// *forkjoin.PanicError, the slice is still a permutation of its input, and
// the pool keeps working.
func TestSortComparatorPanic(t *testing.T) {
	p := srtPool(t, 3)
	n := 100_000
	if testenv.Race {
		n = 20_000
	}
	rng := rand.New(rand.NewPCG(16, 17))
	keys := srtShapes[0].gen(rng, n)
	sorted := slices.Clone(keys)
	slices.Sort(sorted)

	type sorter struct {
		name string
		sort func(r forkjoin.Runner, s []int, c func(a, b int) int, opts ...magpie.Option)
	}
	sorters := []sorter{
		{"SortFunc", magpie.SortFunc[[]int, int]},
		{"SortStableFunc", magpie.SortStableFunc[[]int, int]},
	}
	// Calls before the panic: early (top partition or leaves), in the
	// middle, late (top-level merges).
	for _, after := range []int64{0, 10, 1000, int64(n), 5 * int64(n), 14 * int64(n)} {
		for _, so := range sorters {
			for _, rn := range srtRunners {
				for _, opts := range [][]magpie.Option{nil, {magpie.Grain(64)}} {
					name := fmt.Sprintf("%s/%s/after%d/grain%v", so.name, rn.name, after, opts != nil)
					var calls atomic.Int64
					bomb := func(a, b int) int {
						if calls.Add(1) > after {
							panic(errSrtBoom)
						}
						return cmp.Compare(a, b)
					}
					s := slices.Clone(keys)
					var rec any
					func() {
						defer func() { rec = recover() }()
						rn.run(p, func(r forkjoin.Runner) { so.sort(r, s, bomb, opts...) })
					}()
					if after < int64(n)-1 {
						// Any sort of n elements makes at least n-1 comparisons.
						require.NotNil(t, rec, "%s: the comparator's panic was lost", name)
					}
					if rec == nil {
						// The sort needed fewer calls than that.
						require.Equal(t, sorted, s, name)
						continue
					}
					pe, ok := rec.(*forkjoin.PanicError)
					require.True(t, ok, "%s: recovered %T, want *forkjoin.PanicError", name, rec)
					require.ErrorIs(t, pe, errSrtBoom, name)
					perm := slices.Clone(s)
					slices.Sort(perm)
					require.Equal(t, sorted, perm, "%s: the slice is no longer a permutation of its input", name)
				}
			}
		}
	}
	// Small slices, sorted without splitting, panic the same way.
	for _, so := range sorters {
		for _, rn := range srtRunners {
			s := []int{3, 1, 2, 5, 4}
			var rec any
			func() {
				defer func() { rec = recover() }()
				rn.run(p, func(r forkjoin.Runner) {
					so.sort(r, s, func(a, b int) int { panic(errSrtBoom) })
				})
			}()
			pe, ok := rec.(*forkjoin.PanicError)
			require.True(t, ok, "%s/%s small: recovered %T, want *forkjoin.PanicError", so.name, rn.name, rec)
			require.ErrorIs(t, pe, errSrtBoom)
			require.ElementsMatch(t, []int{1, 2, 3, 4, 5}, s)
		}
	}
	// The pool survived.
	s := slices.Clone(keys)
	magpie.SortStableFunc(p, s, cmp.Compare[int])
	require.Equal(t, sorted, s)
	magpie.Sort(p, s)
	require.Equal(t, sorted, s)
}

// TestSortStableLargeElements sorts a struct too big to be cheap to move,
// with many equal keys.
func TestSortStableLargeElements(t *testing.T) {
	type big struct {
		key int
		pad [6]int
		pos int
	}
	p := srtPool(t, 2)
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
	magpie.SortStableFunc(p, s, byKey)
	require.Equal(t, want, s)
}
