package sorts

import (
	"cmp"
	"math/rand/v2"
	"testing"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestCanceledSortLeavesPermutation cancels sorts at random moments through
// forkjoin.InvokeContext: the computation stops at its next fork, and the
// slice must then be a permutation of its input (never an element lost or
// duplicated), whether the sort finished or not. It covers the quicksort
// (Sort with inPlace) and the merge sort; the radix sort has
// TestCanceledRadixSortLeavesPermutation.
func TestCanceledSortLeavesPermutation(t *testing.T) {
	n := 1 << 20
	if testenv.Race {
		n = 1 << 16
	}
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]int64, n)
	for i := range in {
		in[i] = rng.Int64N(1000)
	}
	quick := func(w *forkjoin.Worker, s []int64) { Sort(w, s, 0, true) }
	stable := func(w *forkjoin.Worker, s []int64) {
		StableFunc(w, s, func(a, b int64) int { return int(a - b) }, 0)
	}
	canceled := 0
	for range 20 {
		canceled += cancelRound(t, p, rng, in, quick, identity[int64])
		canceled += cancelRound(t, p, rng, in, stable, identity[int64])
	}
	t.Logf("%d of 40 sorts canceled before they finished", canceled)
}

// sortOnWorker is Sort by radix (or by quicksort below radixMin), for
// cancelRound.
func sortOnWorker[E cmp.Ordered](w *forkjoin.Worker, s []E) { Sort(w, s, 0, false) }
