package magpie

import (
	"cmp"

	"github.com/magpie-go/magpie/forkjoin"
)

// RadixMin and RadixLeaf expose the radix sort's thresholds to the tests of
// package magpie_test.
const (
	RadixMin  = radixMin
	RadixLeaf = radixLeaf
)

// SortRadixForBench sorts s by radix whatever its length (Sort does below
// radixMin only), for BenchmarkSortRadixThreshold.
func SortRadixForBench[E cmp.Ordered](r forkjoin.Runner, s []E) {
	if !sortRadix(r, s, nil) {
		panic("magpie: SortRadixForBench called with a type the radix sort does not sort")
	}
}
