package magpie

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// testRand returns a generator seeded from the test's name, logged so that
// a failure can be replayed.
func testRand(t *testing.T) *rand.Rand {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// randomSizes are the lengths of the large random inputs: smaller under
// -race, which slows these loops about tenfold.
func randomSizes() []int {
	if testenv.Race {
		return []int{3001, 20_000}
	}
	return []int{3001, 200_000, 1_000_003}
}

func TestMap2(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		a := ints(n)
		b := make([]string, n)
		for i := range b {
			b[i] = strconv.Itoa(i)
		}
		got := Map2(r, a, b, func(x int, s string) string { return strconv.Itoa(x) + "/" + s }, opts...)
		if len(got) != n {
			return fmt.Errorf("len %d", len(got))
		}
		for i := range a {
			if want := strconv.Itoa(a[i]) + "/" + b[i]; got[i] != want {
				return fmt.Errorf("index %d: %q, want %q", i, got[i], want)
			}
		}
		return nil
	})
}

func TestFilterMap(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		in := ints(n)
		for _, every := range []int{1, 3, 1 << 30} { // keep all, a third, none but 0
			f := func(x int) (string, bool) { return strconv.Itoa(x), x%every == 0 }
			var want []string
			for _, x := range in {
				if y, ok := f(x); ok {
					want = append(want, y)
				}
			}
			got := FilterMap(r, in, f, opts...)
			if !slices.Equal(got, want) || (want == nil) != (got == nil) {
				return fmt.Errorf("every %d: got %d elements, want %d", every, len(got), len(want))
			}
		}
		return nil
	})
}

func TestZipRandom(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(3))
	defer p.Close()
	rng := testRand(t)
	for _, n := range randomSizes() {
		a, b := make([]int64, n), make([]int64, n)
		for i := range a {
			a[i], b[i] = rng.Int64(), rng.Int64()
		}
		mul := func(x, y int64) int64 { return x*y ^ y }
		odd := func(x int64) (int64, bool) { return x / 3, x&1 == 1 }
		wantMap := make([]int64, n)
		var wantFM []int64
		for i := range a {
			wantMap[i] = mul(a[i], b[i])
			if y, ok := odd(a[i]); ok {
				wantFM = append(wantFM, y)
			}
		}
		for _, g := range grainOpts[:4] {
			require.Equal(t, wantMap, Map2(p, a, b, mul, g.opts...), "n=%d %s", n, g.name)
			require.Equal(t, wantFM, FilterMap(p, a, odd, g.opts...), "n=%d %s", n, g.name)
		}
	}
}

func TestForChunks(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		for _, size := range []int{1, 7, 100, 5000} {
			if size == 1 && n > 5000 {
				continue // a task per index only costs time
			}
			chunks := (n + size - 1) / size
			calls := make([]int32, chunks)
			var bad atomic.Value
			ForChunks(r, n, size, func(lo, hi int) {
				if lo%size != 0 || lo >= n || hi != min(lo+size, n) {
					bad.Store(fmt.Errorf("size %d: chunk [%d,%d) of %d", size, lo, hi, n))
					return
				}
				atomic.AddInt32(&calls[lo/size], 1)
			}, opts...)
			if err, _ := bad.Load().(error); err != nil {
				return err
			}
			for c, k := range calls {
				if k != 1 {
					return fmt.Errorf("size %d: chunk %d called %d times", size, c, k)
				}
			}
		}
		return nil
	})
}

// TestForChunksParallel: a few chunks, far below the sequential threshold,
// still run as tasks of their own (the chunks are the granularity).
func TestForChunksParallel(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	before := p.Stats().Submitted
	var onWorker atomic.Int32
	ForChunks(p, 4, 1, func(lo, hi int) { onWorker.Add(1) })
	require.Equal(t, int32(4), onWorker.Load())
	require.Greater(t, p.Stats().Submitted, before, "4 chunks of 1 go to the pool")
}

func TestZipInputs(t *testing.T) {
	add := func(a, b int) int { return a + b }
	require.PanicsWithValue(t, "magpie: Map2 called with a nil function", func() { Map2[int, int, int](nil, nil, nil, nil) })
	require.PanicsWithValue(t, "magpie: Map2 called with slices of different lengths (3 and 4)", func() {
		Map2(nil, make([]int, 3), make([]int, 4), add)
	})
	require.PanicsWithValue(t, "magpie: FilterMap called with a nil function", func() { FilterMap[int, int](nil, []int{1}, nil) })
	require.PanicsWithValue(t, "magpie: ForChunks called with a nil body", func() { ForChunks(nil, 3, 1, nil) })
	require.PanicsWithValue(t, "magpie: ForChunks called with a negative n", func() { ForChunks(nil, -3, 1, func(int, int) {}) })
	require.PanicsWithValue(t, "magpie: ForChunks called with a size less than 1", func() { ForChunks(nil, 3, 0, func(int, int) {}) })
	require.PanicsWithValue(t, "magpie: ForChunks called with a size less than 1", func() { ForChunks(nil, 0, -1, func(int, int) {}) })
	ForChunks(nil, 0, 5, func(int, int) { panic("no chunk") })
}

// TestForChunksHugeSizes: with n and size near math.MaxInt, the chunk
// bounds do not overflow, on the caller's path (Grain covering the two
// chunks) and on the pool's. Before the fix the second chunk was
// (2^62, math.MinInt) on the pool, and the caller's loop wrapped around
// forever (found by review).
func TestForChunksHugeSizes(t *testing.T) {
	n, size := math.MaxInt, math.MaxInt/2+1
	for _, opts := range [][]Option{{Grain(2)}, nil} {
		var mu sync.Mutex
		var got [][2]int
		testenv.Within(t, "ForChunks with huge sizes", func() {
			ForChunks(nil, n, size, func(lo, hi int) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, [2]int{lo, hi})
				if len(got) > 2 {
					panic("more than two chunks")
				}
			}, opts...)
		})
		slices.SortFunc(got, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
		require.Equal(t, [][2]int{{0, size}, {size, n}}, got)
	}
}
