package magpie_test

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/sorttest"
	"github.com/magpie-go/magpie/internal/testenv"
)

// The public sorts' tests: every kind of Runner, Grain and InPlace reaching
// the algorithms, sorts nested in tasks and from concurrent callers, a
// comparator's panic arriving as a *forkjoin.PanicError. The algorithms
// themselves are tested in internal/sorts.

// magpieSorts are the public sorts, for sorttest.CheckAll: grain 0 passes
// no option.
var magpieSorts = sorttest.Sorts{
	Sort: func(r forkjoin.Runner, s []int, grain int, inPlace bool) {
		opts := srtOptions(grain)
		if inPlace {
			opts = append(opts, magpie.InPlace())
		}
		magpie.Sort(r, s, opts...)
	},
	Func: func(r forkjoin.Runner, s []int, cmp func(a, b int) int, grain int) {
		magpie.SortFunc(r, s, cmp, srtOptions(grain)...)
	},
	StableFunc: func(r forkjoin.Runner, s []sorttest.Item, cmp func(a, b sorttest.Item) int, grain int) {
		magpie.SortStableFunc(r, s, cmp, srtOptions(grain)...)
	},
}

// srtOptions returns Grain(grain), or no option for 0.
func srtOptions(grain int) []magpie.Option {
	if grain == 0 {
		return nil
	}
	return []magpie.Option{magpie.Grain(grain)}
}

func TestSortRunners(t *testing.T) {
	p := sorttest.Pool(t, 3)
	rng := rand.New(rand.NewPCG(5, 6))
	n := 50_000
	if testenv.Race {
		n = 10_000
	}
	for _, rn := range sorttest.Runners {
		t.Run(rn.Name, func(t *testing.T) {
			for _, sh := range sorttest.Shapes[:4] {
				keys := sh.Gen(rng, n)
				rn.Run(p, func(r forkjoin.Runner) {
					sorttest.CheckAll(t, magpieSorts, r, keys, 0)
					sorttest.CheckAll(t, magpieSorts, r, keys, 100)
				})
			}
		})
	}
}

// TestSortNestedInTasks sorts several slices at once from tasks of one
// computation, each passing its own worker.
func TestSortNestedInTasks(t *testing.T) {
	p := sorttest.Pool(t, 4)
	const slicesN, n = 8, 20_000
	rng := rand.New(rand.NewPCG(7, 8))
	inputs := make([][]int, slicesN)
	for i := range inputs {
		inputs[i] = sorttest.Shapes[0].Gen(rng, n)
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
	p := sorttest.Pool(t, 2)
	testenv.Concurrently(t, "the concurrent sorts", 6, func(g int) {
		rng := rand.New(rand.NewPCG(uint64(g), 9))
		keys := sorttest.Shapes[g%len(sorttest.Shapes)].Gen(rng, 20_000)
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
	})
}

var errSrtBoom = errors.New("comparator exploded")

// TestSortComparatorPanic makes the comparator panic after k calls, at
// every stage of the sorts: the panic reaches the caller as a
// *forkjoin.PanicError, the slice is still a permutation of its input, and
// the pool keeps working.
func TestSortComparatorPanic(t *testing.T) {
	p := sorttest.Pool(t, 3)
	n := 100_000
	if testenv.Race {
		n = 20_000
	}
	rng := rand.New(rand.NewPCG(16, 17))
	keys := sorttest.Shapes[0].Gen(rng, n)
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
			for _, rn := range sorttest.Runners {
				for _, opts := range [][]magpie.Option{nil, {magpie.Grain(64)}} {
					name := fmt.Sprintf("%s/%s/after%d/grain%v", so.name, rn.Name, after, opts != nil)
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
						rn.Run(p, func(r forkjoin.Runner) { so.sort(r, s, bomb, opts...) })
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
		for _, rn := range sorttest.Runners {
			s := []int{3, 1, 2, 5, 4}
			var rec any
			func() {
				defer func() { rec = recover() }()
				rn.Run(p, func(r forkjoin.Runner) {
					so.sort(r, s, func(a, b int) int { panic(errSrtBoom) })
				})
			}()
			pe, ok := rec.(*forkjoin.PanicError)
			require.True(t, ok, "%s/%s small: recovered %T, want *forkjoin.PanicError", so.name, rn.Name, rec)
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

// TestSortRadixInPlace: with InPlace, Sort on integers allocates no
// scratch buffer (well under the slice's size), and without it the radix
// sort allocates about one slice's worth; both give slices.Sort's result.
func TestSortRadixInPlace(t *testing.T) {
	p := sorttest.Pool(t, 2)
	n := 1 << 20
	if testenv.Race {
		n = 1 << 17
	}
	rng := rand.New(rand.NewPCG(37, 38))
	in := make([]int64, n)
	for i := range in {
		in[i] = rng.Int64()
	}
	want := slices.Clone(in)
	slices.Sort(want)
	alloc := func(opts ...magpie.Option) uint64 {
		s := slices.Clone(in)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		magpie.Sort(p, s, opts...)
		runtime.ReadMemStats(&after)
		require.Equal(t, want, s)
		return after.TotalAlloc - before.TotalAlloc
	}
	size := uint64(n) * 8
	require.Less(t, alloc(magpie.InPlace()), size/8, "InPlace allocated a buffer")
	require.GreaterOrEqual(t, alloc(), size, "the radix sort's buffer")
	require.Less(t, alloc(), 2*size, "the radix sort's buffer")
}

// TestSortMemoryAsDocumented: the memory each sort's doc states, measured
// as the bytes allocated during one call (the least of three, so that an
// allocation elsewhere in the process cannot fail it) on 1<<18 int64s
// (1<<16 under -race):
// Sort's radix sort a scratch buffer of len(s) elements, SortStableFunc
// one buffer of len(s) elements, SortByKey and SortStableByKey n (key,
// int) pairs and n elements; SortFunc, Sort with InPlace and Sort of
// strings no buffer, a few small objects whatever len(s) (under 64 KiB,
// an eighth of the smallest buffer here).
func TestSortMemoryAsDocumented(t *testing.T) {
	n := 1 << 18
	if testenv.Race {
		n = 1 << 16
	}
	const elem, pair = 8, 16 // int64, and its (key int64, index int) pair
	const slack = 64 << 10
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	in := make([]int64, n)
	rnd := rand.New(rand.NewPCG(11, 12))
	for i := range in {
		in[i] = rnd.Int64()
	}
	strs := make([]string, n)
	for i := range strs {
		strs[i] = fmt.Sprint(in[i])
	}
	key := func(x int64) int64 { return -x }
	for _, c := range []struct {
		name string
		sort func(s []int64, t []string)
		want int // bytes of buffers: the allocation must be in [want, want+slack)
	}{
		{"Sort", func(s []int64, _ []string) { magpie.Sort(p, s) }, n * elem},
		{"Sort InPlace", func(s []int64, _ []string) { magpie.Sort(p, s, magpie.InPlace()) }, 0},
		{"Sort strings", func(_ []int64, t []string) { magpie.Sort(p, t) }, 0},
		{"SortFunc", func(s []int64, _ []string) { magpie.SortFunc(p, s, cmp.Compare[int64]) }, 0},
		{"SortStableFunc", func(s []int64, _ []string) { magpie.SortStableFunc(p, s, cmp.Compare[int64]) }, n * elem},
		{"SortByKey", func(s []int64, _ []string) { magpie.SortByKey(p, s, key) }, n * (pair + elem)},
		{"SortStableByKey", func(s []int64, _ []string) { magpie.SortStableByKey(p, s, key) }, n * (pair + elem)},
	} {
		least := uint64(1<<63 - 1)
		for range 3 {
			s, ts := slices.Clone(in), slices.Clone(strs)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			c.sort(s, ts)
			runtime.ReadMemStats(&after)
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		t.Logf("%s: %d bytes allocated for %d elements", c.name, least, n)
		require.GreaterOrEqual(t, least, uint64(c.want), c.name)
		require.Less(t, least, uint64(c.want+slack), c.name)
	}
}

// TestSortFuncNilCmp: SortFunc and SortStableFunc refuse a nil cmp with a
// message naming themselves, whatever the length of s, as every other
// helper refuses a nil function (SortByKey a nil key): before, an empty or
// one-element s was accepted and a longer one failed inside the sort with
// a nil dereference wrapped in a *forkjoin.PanicError.
func TestSortFuncNilCmp(t *testing.T) {
	for _, n := range []int{0, 1, 2, 100_000} {
		s := make([]int, n)
		require.PanicsWithValue(t, "magpie: SortFunc called with a nil cmp",
			func() { magpie.SortFunc(nil, s, nil) }, "n=%d", n)
		require.PanicsWithValue(t, "magpie: SortStableFunc called with a nil cmp",
			func() { magpie.SortStableFunc(nil, s, nil) }, "n=%d", n)
	}
}
