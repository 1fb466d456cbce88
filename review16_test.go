package magpie

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestSortByKeyCanceledLeavesPermutation cancels SortByKey and
// SortStableByKey, run under InvokeContext, at random moments after the
// last key call (during the sort of the pairs, the gather and the
// copy-back): when the call has unwound, s must be a permutation of its
// input, as for Sort and SortStableFunc (TestCanceledSortLeavesPermutation
// in internal/sorts), and more: unmodified or sorted, as SortByKey's doc
// says. On main a cancellation during the copy-back left s part copied,
// elements lost and others duplicated.
func TestSortByKeyCanceledLeavesPermutation(t *testing.T) {
	n, rounds := 1<<18, 40
	if testenv.Race {
		n, rounds = 1<<15, 6
	}
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	rng := rand.New(rand.NewPCG(16, 16))
	// Reversed keys: the pairs are reversed, which the quicksort undoes in
	// one pass, and large elements, so that the gather and the copy-back
	// take most of the time after the keys.
	type big struct {
		k, id int
		_     [14]int64
	}
	in := make([]big, n)
	for i := range in {
		in[i] = big{k: n - i, id: i}
	}
	byID := func(a, b big) int { return cmp.Compare(a.id, b.id) }
	// How long an uncanceled call runs after its last key call: the
	// cancellations fall in that window.
	var lastKey atomic.Int64
	keyTimed := func(x big) int {
		lastKey.Store(time.Now().UnixNano())
		return x.k
	}
	window := time.Hour
	for range 3 { // the shortest of three: the first run pays page faults
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int { SortStableByKey(w, slices.Clone(in), keyTimed); return 0 })
		window = min(window, time.Since(time.Unix(0, lastKey.Load())))
	}
	window = max(window, 100*time.Microsecond)
	canceled, broken := 0, 0
	for round := range rounds {
		s := slices.Clone(in)
		ctx, cancel := context.WithCancel(context.Background())
		var calls atomic.Int64
		delay := window/3 + time.Duration(rng.Int64N(int64(window*2/3)))
		key := func(x big) int {
			if calls.Add(1) == int64(n) {
				time.AfterFunc(delay, cancel)
			}
			return x.k
		}
		var err error
		testenv.Within(t, "canceled SortByKey", func() {
			_, err = forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
				if round%2 == 0 {
					SortStableByKey(w, s, key)
				} else {
					SortByKey(w, s, key)
				}
				return 0
			})
		})
		cancel()
		testenv.WaitUntil(t, "the canceled sort to unwind", func() bool { return p.Stats().Idle == p.Parallelism() })
		if err != nil {
			require.ErrorIs(t, err, context.Canceled)
			canceled++
		}
		unmodified := slices.Equal(s, in)
		sorted := slices.IsSortedFunc(s, func(a, b big) int { return cmp.Compare(a.k, b.k) })
		if !unmodified && !sorted {
			t.Errorf("round %d (delay %v, err %v): s is neither unmodified nor sorted", round, delay, err)
		}
		got := slices.Clone(s)
		slices.SortFunc(got, byID)
		if !slices.Equal(got, in) {
			broken++
			t.Errorf("round %d (delay %v, err %v): s is not a permutation of its input", round, delay, err)
		}
	}
	t.Logf("window %v: %d of %d sorts canceled, %d left s broken", window, canceled, rounds, broken)
}
