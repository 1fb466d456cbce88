package magpie

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
	"github.com/stretchr/testify/require"
)

// TestRev26ForWBodyGetsClosedPool: ForW's known limit. From outside, on
// a pool that closes mid-loop, the indices the caller runs itself (the
// probe's batches, and the rest the closed pool refuses) get the outer
// Runner, the pool, now closed. A nested helper the body calls with it,
// as ForW's doc asks, is a new call on a closed pool from outside and
// panics with ErrClosed (since 85170de, for every helper; before, only on
// some paths): ForW then panics with a *PanicError holding it, part of
// the loop run, where the same loop with a body that does not nest
// finishes on the caller (TestLongLoopOnPoolClosedMidLoop). Passes on
// de64c83 only because the nested For ran on the caller there.
func TestRev26ForWBodyGetsClosedPool(t *testing.T) {
	const n = 20 * SequentialThreshold
	p := forkjoin.New(forkjoin.WithParallelism(2))
	var calls atomic.Int64
	var v any
	testenv.Within(t, "ForW", func() {
		v = recoverValue(func() {
			ForW(p, n, func(r forkjoin.Runner, i int) {
				calls.Add(1)
				if i == 0 {
					p.Close()
				}
				For(r, 4, func(int) {})
				spinFor(time.Microsecond)
			})
		})
	})
	var pe *forkjoin.PanicError
	require.ErrorAs(t, v.(error), &pe)
	require.True(t, errors.Is(pe, forkjoin.ErrClosed) || pe.Value == forkjoin.ErrClosed, "%v", pe.Value)
	require.Less(t, calls.Load(), int64(n), "the loop stopped part way")
}
