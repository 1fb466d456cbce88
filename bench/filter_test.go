package bench

import (
	"slices"
	"testing"

	"github.com/magpie-go/magpie"
)

// BenchmarkFilter keeps the even elements of 10M ints: the sequential loop
// against magpie.Filter and against goroutines (waitgroup: each chunk of
// GOMAXPROCS filters into its own slice, then slices.Concat).
func BenchmarkFilter(b *testing.B) {
	in := make([]int, 10_000_000)
	for i := range in {
		in[i] = i * 7919
	}
	even := func(x int) bool { return x&1 == 0 }
	b.Run("impl=seq", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var out []int
			for _, x := range in {
				if even(x) {
					out = append(out, x)
				}
			}
			_ = out
		}
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		b.ReportAllocs()
		for range b.N {
			_ = magpie.Filter(p, in, even)
		}
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = slices.Concat(chunkResults(len(in), func(lo, hi int) []int {
				var out []int
				for _, x := range in[lo:hi] {
					if even(x) {
						out = append(out, x)
					}
				}
				return out
			})...)
		}
	})
}
