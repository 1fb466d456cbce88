package magpie_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

// The radix sort's own tuning benchmarks: where radixMin belongs and which
// input distributions hurt the radix sort. They stay in this package, not
// in the comparative suite of the bench module, because the threshold
// benchmark calls the radix sort below radixMin (SortRadixForBench, an
// export of sort_radix_export_test.go) and the distributions are the radix
// tests' rdxDists. They are the code of the comparative suite's
// BenchmarkSortRadixDists and BenchmarkSortRadixThreshold before the suite
// moved (the same inputs, pool warm-up and heap warm-up). Run them at one
// GOMAXPROCS per process:
//
//	go test -c -o magpie.test . && ./magpie.test -test.run '^$' -test.bench SortRadix -test.benchtime 1x -test.cpu 2

// rdxBenchN is the input size of BenchmarkSortRadixDists (80 MB of int64).
const rdxBenchN = 10_000_000

// rdxBenchDists are the distributions of BenchmarkSortRadixDists: those
// that hurt a radix sort (few or no distinct keys, presorted input, a small
// range, which leaves most bytes equal) beside the full 64-bit range.
var rdxBenchDists = []string{"random64", "equal", "fewDistinct", "sorted", "reverse", "smallRange"}

// rdxBenchRand is the generator of the benchmarks' inputs: the same seeds
// as the comparative suite's benchRand, so that the inputs are the ones
// the figures in docs were measured on.
func rdxBenchRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// rdxBenchPool starts a pool of GOMAXPROCS workers, closed when the
// benchmark returns, and wakes every worker once so that the first timed
// iteration does not pay for goroutine start-up.
func rdxBenchPool(b *testing.B) *forkjoin.Pool {
	p := srtPool(b, runtime.GOMAXPROCS(0))
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return w.Index() })
	return p
}

// rdxHeapSink keeps rdxWarmHeap's buffers from being optimised away.
var rdxHeapSink []byte

// rdxWarmHeap allocates and writes a buffer of n bytes 20 times before
// BenchmarkSortRadixDists, whose radix rows allocate a buffer that large
// per sort: in a fresh process the first such allocations cost several
// times the steady-state ones (fresh pages, GC pacing still growing the
// heap), which would penalise whichever implementation runs first.
func rdxWarmHeap(n int) {
	for range 20 {
		rdxHeapSink = make([]byte, n)
		for i := 0; i < n; i += 4096 {
			rdxHeapSink[i] = 1
		}
	}
	rdxHeapSink = nil
}

// rdxBenchSort times sortFn on a fresh copy of src per iteration (the copy
// is not timed) and checks the last result.
func rdxBenchSort(b *testing.B, src []int64, sortFn func([]int64)) {
	b.Helper()
	b.ReportAllocs()
	work := make([]int64, len(src))
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		copy(work, src)
		b.StartTimer()
		sortFn(work)
	}
	b.StopTimer()
	if !slices.IsSorted(work) {
		b.Fatal("result is not sorted")
	}
}

// BenchmarkSortRadixDists sorts 10M int64 of each distribution in
// rdxBenchDists with slices.Sort, magpie.Sort (radix) and magpie.Sort
// with InPlace (quicksort), on a pool of GOMAXPROCS workers.
func BenchmarkSortRadixDists(b *testing.B) {
	rdxWarmHeap(8 * rdxBenchN)
	for _, name := range rdxBenchDists {
		var src []int64
		for _, d := range rdxDists {
			if d.name == name {
				for _, v := range d.gen(rdxBenchRand(7), rdxBenchN) {
					src = append(src, int64(v))
				}
			}
		}
		b.Run("dist="+name+"/impl=seq", func(b *testing.B) {
			rdxBenchSort(b, src, slices.Sort[[]int64])
		})
		b.Run("dist="+name+"/impl=magpie", func(b *testing.B) {
			p := rdxBenchPool(b)
			rdxBenchSort(b, src, func(s []int64) { magpie.Sort(p, s) })
		})
		b.Run("dist="+name+"/impl=magpie-inplace", func(b *testing.B) {
			p := rdxBenchPool(b)
			rdxBenchSort(b, src, func(s []int64) { magpie.Sort(p, s, magpie.InPlace()) })
		})
	}
}

// BenchmarkSortRadixThreshold sorts random int64 slices of sizes around
// radixMin on a pool of GOMAXPROCS workers, radix against slices.Sort
// (which Sort uses below radixMin): where the radix sort starts to win is
// where radixMin belongs.
func BenchmarkSortRadixThreshold(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14, 1 << 16} {
		r := rdxBenchRand(9)
		src := make([]int64, n)
		for i := range src {
			src[i] = r.Int64()
		}
		b.Run(fmt.Sprintf("n=%d/impl=seq", n), func(b *testing.B) {
			rdxBenchSort(b, src, slices.Sort[[]int64])
		})
		b.Run(fmt.Sprintf("n=%d/impl=radix", n), func(b *testing.B) {
			p := rdxBenchPool(b)
			rdxBenchSort(b, src, func(s []int64) { magpie.SortRadixForBench(p, s) })
		})
	}
}
