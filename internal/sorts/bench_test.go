package sorts

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/sorttest"
)

// BenchmarkSortRadixThreshold sorts random int64 slices of sizes around
// radixMin on a pool of GOMAXPROCS workers, radix against slices.Sort
// (which Sort uses below radixMin): where the radix sort starts to win is
// where radixMin belongs.
func BenchmarkSortRadixThreshold(b *testing.B) {
	sorted := func(s []int64) bool { return slices.IsSorted(s) }
	for _, n := range []int{1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14, 1 << 16} {
		r := rand.New(rand.NewPCG(9, 0x9e3779b97f4a7c15))
		src := make([]int64, n)
		for i := range src {
			src[i] = r.Int64()
		}
		b.Run(fmt.Sprintf("n=%d/impl=seq", n), func(b *testing.B) {
			sorttest.Time(b, src, slices.Sort[[]int64], sorted)
		})
		b.Run(fmt.Sprintf("n=%d/impl=radix", n), func(b *testing.B) {
			p := forkjoin.New(forkjoin.WithParallelism(runtime.GOMAXPROCS(0)))
			b.Cleanup(p.Close)
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return w.Index() }) // start the workers untimed
			sorttest.Time(b, src, func(s []int64) {
				if !sortRadix(p, s) {
					b.Fatal("sortRadix did not sort int64")
				}
			}, sorted)
		})
	}
}
