package magpie_test

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestCanceledSortLeavesPermutation cancels sorts at random moments through
// forkjoin.InvokeContext: the computation stops at its next fork, and the
// slice must then be a permutation of its input (never an element lost or
// duplicated), whether the sort finished or not. It covers the quicksort
// (Sort with InPlace) and the merge sort; the radix sort has
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
	quick := func(w *forkjoin.Worker, s []int64) { magpie.Sort(w, s, magpie.InPlace()) }
	stable := func(w *forkjoin.Worker, s []int64) {
		magpie.SortStableFunc(w, s, func(a, b int64) int { return int(a - b) })
	}
	canceled := 0
	for range 20 {
		canceled += cancelSortRound(t, p, rng, in, quick, identity[int64])
		canceled += cancelSortRound(t, p, rng, in, stable, identity[int64])
	}
	t.Logf("%d of 40 sorts canceled before they finished", canceled)
}

// sortOnWorker is magpie.Sort without options, for cancelSortRound.
func sortOnWorker[E cmp.Ordered](w *forkjoin.Worker, s []E) { magpie.Sort(w, s) }

// identity is cancelSortRound's key when elements compare as themselves.
func identity[E any](s []E) []E { return s }

// cancelSortRound sorts a copy of in on p with sortFn, canceled after a random delay,
// and checks that the copy is a permutation of in (compared through key:
// the bit patterns for floats), sorted if the sort was not canceled. It
// returns 1 if the sort was canceled.
func cancelSortRound[E cmp.Ordered, K cmp.Ordered](t *testing.T, p *forkjoin.Pool, rng *rand.Rand, in []E,
	sortFn func(*forkjoin.Worker, []E), key func([]E) []K) int {
	s := slices.Clone(in)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Duration(rng.IntN(60_000))*time.Microsecond, cancel)
	_, err := forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
		sortFn(w, s)
		return 0
	})
	cancel()
	// InvokeContext returns before the computation has unwound: wait for
	// the pool to go idle before looking at the slice.
	testenv.WaitUntil(t, "the canceled sort to unwind", func() bool { return p.Stats().Idle == 2 })
	want := slices.Clone(key(slices.Clone(in)))
	slices.Sort(want)
	got := slices.Clone(key(slices.Clone(s)))
	slices.Sort(got)
	require.Equal(t, want, got, "%T: not a permutation of the input", in[0])
	if err != nil {
		require.ErrorIs(t, err, context.Canceled)
		return 1
	}
	require.True(t, slices.IsSorted(s), "%T: finished but not sorted", in[0])
	return 0
}
