package sorts

import (
	"cmp"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/sorttest"
)

// What the tests of package sorts share.

// algorithms are this package's sorts, for sorttest.CheckAll.
var algorithms = sorttest.Sorts{
	Sort:       Sort[int],
	Func:       Func[int],
	StableFunc: StableFunc[sorttest.Item],
}

var errBoom = errors.New("comparator exploded")

// sameFloats reports whether a and b are equal element by element, NaN
// matching NaN and -0 matching +0 (slices.Sort does not order them).
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if cmp.Compare(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// floatBits returns the sorted bit patterns of s: equal for two permutations.
func floatBits(s []float64) []uint64 {
	b := bitsInOrder(s)
	slices.Sort(b)
	return b
}

// bitsInOrder returns the bit patterns of s in order.
func bitsInOrder(s []float64) []uint64 {
	b := make([]uint64, len(s))
	for i, x := range s {
		b[i] = math.Float64bits(x)
	}
	return b
}

// identity is cancelRound's key when elements compare as themselves.
func identity[E any](s []E) []E { return s }

// cancelRound sorts a copy of in on p with sortFn, canceled after a random
// delay, and checks that the copy is a permutation of in (compared through
// key: the bit patterns for floats), sorted if the sort was not canceled.
// It returns 1 if the sort was canceled.
func cancelRound[E cmp.Ordered, K cmp.Ordered](t *testing.T, p *forkjoin.Pool, rng *rand.Rand, in []E,
	sortFn func(*forkjoin.Worker, []E), key func([]E) []K) int {
	s := slices.Clone(in)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Duration(rng.IntN(60_000))*time.Microsecond, cancel)
	_, err := forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
		sortFn(w, s)
		return 0
	})
	cancel()
	// InvokeContext returns only once no task of the computation runs
	// (TestInvokeContextWaitsForItsTasks):
	// the slice can be read at once. (This comment said the opposite, and
	// the test waited for the pool to go idle, until review rev16.)
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
