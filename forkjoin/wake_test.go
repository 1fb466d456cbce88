package forkjoin_test

import (
	"context"
	"fmt"
	"math/rand"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestNoLostWakeupFromOutside repeatedly lets every worker go idle and park,
// then submits one task from outside: it must always run. The random pause
// before each submission lands it sometimes while workers are still
// spinning or between registering and sleeping, sometimes when all sleep.
func TestNoLostWakeupFromOutside(t *testing.T) {
	rounds := 200
	if testenv.Race || testing.Short() {
		rounds = 50
	}
	for _, par := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("p=%d", par), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(par))
			defer closePool(t, p)
			rng := rand.New(rand.NewSource(int64(par)))
			for r := 0; r < rounds; r++ {
				waitUntil(t, "all workers idle", func() bool { return p.Stats().Idle == par })
				time.Sleep(time.Duration(rng.Intn(500)) * time.Microsecond)
				f := forkjoin.Submit(p, func(*forkjoin.Worker) int { return r })
				var got int
				var err error
				within(t, fmt.Sprintf("round %d: submitted task never ran (lost wake-up?)", r), func() {
					got, err = f.Get(context.Background())
				})
				require.NoError(t, err)
				require.Equal(t, r, got)
			}
		})
	}
}

// TestNoLostWakeupFromInside has a task wait until the other worker has
// parked, then fork a child and wait for it without joining: only the
// parked worker can run it, so it must be woken. Repeated many times.
func TestNoLostWakeupFromInside(t *testing.T) {
	rounds := 200
	if testenv.Race || testing.Short() {
		rounds = 50
	}
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	var failure string
	within(t, "rounds", func() {
		failure = forkjoin.Invoke(p, func(w *forkjoin.Worker) string {
			rng := rand.New(rand.NewSource(1))
			// The child records the park count it sees: the other worker
			// runs it, so its next park raises the count above that.
			var parksSeen uint64
			for r := 0; r < rounds; r++ {
				deadline := time.Now().Add(hangTimeout / 2)
				for p.Stats().Parks <= parksSeen {
					if time.Now().After(deadline) {
						return fmt.Sprintf("round %d: the other worker never parked", r)
					}
					runtime.Gosched()
				}
				if r%2 == 1 {
					time.Sleep(time.Duration(rng.Intn(200)) * time.Microsecond)
				}
				var ran atomic.Bool
				f := forkjoin.Fork(w, func(*forkjoin.Worker) int {
					parksSeen = p.Stats().Parks
					ran.Store(true)
					return 0
				})
				deadline = time.Now().Add(hangTimeout / 2)
				for !ran.Load() {
					if time.Now().After(deadline) {
						return fmt.Sprintf("round %d: forked task not picked up by the parked worker (lost wake-up)", r)
					}
					runtime.Gosched()
				}
				f.Join(w)
			}
			return ""
		})
	})
	require.Empty(t, failure)
}
