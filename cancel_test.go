package magpie_test

import (
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
// duplicated), whether the sort finished or not.
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
	want := slices.Clone(in)
	slices.Sort(want)
	canceled := 0
	for round := 0; round < 20; round++ {
		for _, stable := range []bool{false, true} {
			s := slices.Clone(in)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Duration(rng.IntN(60_000))*time.Microsecond, cancel) // some finish first
			_, err := forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
				if stable {
					magpie.SortStableFunc(w, s, func(a, b int64) int { return int(a - b) })
				} else {
					magpie.Sort(w, s)
				}
				return 0
			})
			cancel()
			if err != nil {
				require.ErrorIs(t, err, context.Canceled)
				canceled++
			}
			// InvokeContext returns before the computation has unwound:
			// wait for the pool to go idle before looking at the slice.
			require.Eventually(t, func() bool { return p.Stats().Idle == 2 }, 30*time.Second, time.Millisecond)
			got := slices.Clone(s)
			slices.Sort(got)
			require.Equal(t, want, got, "round %d stable=%v: not a permutation of the input", round, stable)
			if err == nil {
				require.True(t, slices.IsSorted(s))
			}
		}
	}
	t.Logf("%d of 40 sorts canceled before they finished", canceled)
}
