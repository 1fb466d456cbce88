package magpie

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
	"github.com/stretchr/testify/require"
)

// TestRev26ForWBodyGetsClosedPool: review rev26's finding, fixed. From
// outside, on a pool that closes mid-loop, the indices the caller runs
// itself (the probe's batches, and the rest the closed pool refuses) get
// the outer Runner, the pool, now closed. A nested helper the body calls
// with it, as ForW's doc asks, is a new call on a closed pool, which on
// 2bbbbe3 panicked with ErrClosed (checkRunner, since 85170de): ForW then
// panicked with a *PanicError holding it, part of the loop run. Now a
// helper runs on its caller what a closed pool refuses: the loop
// finishes, every index once, and every nested helper ran in full, with
// and without a Grain, ForW and ForRangeW.
func TestRev26ForWBodyGetsClosedPool(t *testing.T) {
	const n = 20 * SequentialThreshold
	for _, rangeW := range []bool{false, true} {
		p := forkjoin.New(forkjoin.WithParallelism(2))
		hits := make([]atomic.Int32, n)
		var nested, sorted atomic.Int64
		body := func(r forkjoin.Runner, i int) {
			hits[i].Add(1)
			if i == 0 {
				p.Close()
			}
			For(r, 4, func(int) { nested.Add(1) })
			For(r, 40, func(int) { nested.Add(1) }, Grain(2))
			if i%1024 == 0 {
				s := make([]int, 5000)
				for j := range s {
					s[j] = -j
				}
				Sort(r, s)
				if s[0] == -4999 && s[4999] == 0 {
					sorted.Add(1)
				}
			}
			spinFor(time.Microsecond)
		}
		var v any
		testenv.Within(t, "ForW", func() {
			v = recoverValue(func() {
				if rangeW {
					ForRangeW(p, n, func(r forkjoin.Runner, lo, hi int) {
						for i := lo; i < hi; i++ {
							body(r, i)
						}
					})
					return
				}
				ForW(p, n, body)
			})
		})
		require.Nil(t, v, "rangeW=%v", rangeW)
		for i := range hits {
			require.Equal(t, int32(1), hits[i].Load(), "rangeW=%v index %d", rangeW, i)
		}
		require.Equal(t, int64(44*n), nested.Load(), "rangeW=%v: every nested index ran", rangeW)
		require.Equal(t, int64(n/1024), sorted.Load(), "rangeW=%v: every nested sort", rangeW)
	}
}
