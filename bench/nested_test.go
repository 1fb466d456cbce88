package bench

import (
	"testing"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

// BenchmarkNestedFor: an outer loop of 10,000 indices whose body runs a
// nested loop of 4 pieces (Grain(4) over 16 indices): impl=outer passes the
// outer *Pool to the nested loop (forkjoin looks up the calling goroutine's
// worker), impl=handed passes the Runner ForW hands
// the body (the running worker: a fork).
func BenchmarkNestedFor(b *testing.B) {
	const outer, inner = 10_000, 16
	sink := make([]int64, outer)
	nested := func(r forkjoin.Runner, i int) {
		magpie.ForRange(r, inner, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				sink[i] += int64(j)
			}
		}, magpie.Grain(4))
	}
	b.Run("impl=outer", func(b *testing.B) {
		p := benchPool(b)
		b.ReportAllocs()
		for range b.N {
			magpie.For(p, outer, func(i int) { nested(p, i) }, magpie.Grain(64))
		}
	})
	b.Run("impl=handed", func(b *testing.B) {
		p := benchPool(b)
		b.ReportAllocs()
		for range b.N {
			magpie.ForW(p, outer, nested, magpie.Grain(64))
		}
	})
}
