package forkjoin_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// The submission queue's wake-up protocol (injector.take's check without
// the lock, injector.go mayBeReady): a worker that finds every level
// without a ready oldest slot after registering as a sleeper sleeps, and
// the submitter of that slot wakes it. These tests drive the protocol
// across block boundaries (64 slots) and priority levels, with a hang limit
// on every wait: a lost wake-up leaves a task queued while every worker
// sleeps, and the wait for it times out.

// TestSubmissionBurstsWakeSleepers: each round waits until every worker
// sleeps, then submits a burst of 1 to 150 tasks (so that bursts start and
// end anywhere in a block) at random priorities from 1 to 3 goroutines,
// and waits for all of them to run.
func TestSubmissionBurstsWakeSleepers(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	for _, par := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", par), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(par))
			defer closePool(t, p)
			rng := rand.New(rand.NewSource(int64(par)))
			var ran atomic.Int64
			want := int64(0)
			for r := range rounds {
				waitUntil(t, fmt.Sprintf("round %d: every worker asleep", r), func() bool { return forkjoin.SleepersOf(p) == par })
				burst, subs := 1+rng.Intn(150), 1+rng.Intn(3)
				prios := make([]forkjoin.Priority, burst)
				for i := range prios {
					prios[i] = forkjoin.Priority(rng.Intn(forkjoin.NumPriorities) - 1)
				}
				var wg sync.WaitGroup
				for g := range subs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := g; i < burst; i += subs {
							require.NoError(t, p.ExecutePriority(prios[i], func(*forkjoin.Worker) { ran.Add(1) }))
						}
					}()
				}
				wg.Wait()
				want += int64(burst)
				waitUntil(t, fmt.Sprintf("round %d: %d tasks run (lost wake-up?)", r, want), func() bool { return ran.Load() == want })
			}
		})
	}
}

// TestSubmitWhileCloseExactlyOnce: 4 goroutines submit (Execute and
// Submit, random priorities) while the pool is closed under them: every
// accepted task runs exactly once, every other submission fails with
// ErrClosed, and Close returns (it waits for in flight, accepted minus
// finished, to reach 0). Repeated over many pools.
func TestSubmitWhileCloseExactlyOnce(t *testing.T) {
	pools := 100
	if testing.Short() {
		pools = 20
	}
	for r := range pools {
		p := forkjoin.New(forkjoin.WithParallelism(1 + r%3))
		rng := rand.New(rand.NewSource(int64(r)))
		closeAfter := rng.Intn(2000)
		var accepted, ran atomic.Int64
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					prio := forkjoin.Priority((g+i)%forkjoin.NumPriorities - 1)
					var err error
					if i%2 == 0 {
						err = p.ExecutePriority(prio, func(*forkjoin.Worker) { ran.Add(1) })
					} else {
						f := forkjoin.SubmitPriority(p, prio, func(*forkjoin.Worker) int { ran.Add(1); return 0 })
						_, err = f.Get(context.Background())
					}
					if errors.Is(err, forkjoin.ErrClosed) {
						return
					}
					require.NoError(t, err)
					accepted.Add(1)
				}
			}()
		}
		for accepted.Load() < int64(closeAfter) {
			runtime.Gosched() // let the submitters get going
		}
		within(t, fmt.Sprintf("pool %d: Close with submitters racing", r), p.Close)
		within(t, fmt.Sprintf("pool %d: submitters see ErrClosed", r), wg.Wait)
		// Submit's Get returned, so its task ran; an accepted Execute ran
		// before Close returned.
		require.Equal(t, accepted.Load(), ran.Load(), "pool %d: accepted tasks run exactly once", r)
	}
}
