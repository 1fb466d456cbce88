package forkjoin_test

// Adversarial tests of the submission path at the pool level: Close's
// count of work in flight (accepted minus finished, Execute tasks counted
// per worker: pool.go, inflight, execDone) and the wake-up of a worker
// going to sleep while a submission races its last check (injector.go,
// mayBeReady; internal/park).

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestCloseReturnsAfterEveryAcceptedTask: 3 goroutines submit while the
// pool is closed under them, mixing every way a submitted task finishes:
// Execute (counted on the worker that ran it, Worker.execDone), Execute
// that panics (counted from the deferred path), Execute that calls Block
// (so that spare workers run some, counted on the spare), and Submit
// (counted in finished). Each task marks itself finished as its last act.
// Every other pool paces the submitters (at most about 2 tasks accepted
// and not started), so that Close often finds the queue nearly empty and
// the workers about to exit just as a submission is accepted.
// The marks are copied the moment Close returns: every task whose
// submission was accepted must be marked in that copy (Close returns only
// once all accepted work has finished), and must have run exactly once.
func TestCloseReturnsAfterEveryAcceptedTask(t *testing.T) {
	pools, each := 60, 3000
	if testenv.Race {
		pools, each = 20, 1000
	}
	const submitters = 3
	for r := range pools {
		p := forkjoin.New(forkjoin.WithParallelism(1+r%2), forkjoin.WithMaxBlocked(4),
			forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}))
		n := submitters * each
		fin := make([]atomic.Bool, n)
		runs := make([]atomic.Int32, n)
		acc := make([]atomic.Bool, n)
		futures := make([]*forkjoin.Future[int], n)
		var accepted, ranAll atomic.Int64
		var wg sync.WaitGroup
		for g := range submitters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					id := g*each + i
					prio := forkjoin.Priority(i%forkjoin.NumPriorities - 1)
					for r%2 == 1 && accepted.Load()-ranAll.Load() > 2 {
						runtime.Gosched() // paced: Close finds the queue nearly empty
					}
					body := func() {
						ranAll.Add(1)
						runs[id].Add(1)
						time.Sleep(time.Duration(id%3) * time.Microsecond)
					}
					var err error
					switch i % 4 {
					case 0:
						err = p.ExecutePriority(prio, func(*forkjoin.Worker) { body(); fin[id].Store(true) })
					case 1:
						err = p.ExecutePriority(prio, func(*forkjoin.Worker) {
							defer fin[id].Store(true)
							body()
							panic("review: a panicking Execute")
						})
					case 2:
						err = p.ExecutePriority(prio, func(w *forkjoin.Worker) {
							forkjoin.Block(w, body)
							fin[id].Store(true)
						})
					case 3:
						futures[id] = forkjoin.SubmitPriority(p, prio, func(*forkjoin.Worker) int {
							defer fin[id].Store(true)
							body()
							return id
						})
					}
					if err == nil && futures[id] == nil {
						acc[id].Store(true)
						accepted.Add(1)
					}
					if errors.Is(err, forkjoin.ErrClosed) {
						return
					}
					require.NoError(t, err)
				}
			}()
		}
		closeAfter := int64(r * 37 % (n / 2))
		for accepted.Load() < closeAfter {
			runtime.Gosched()
		}
		var snap []bool
		within(t, fmt.Sprintf("pool %d: Close with submitters racing", r), func() {
			p.Close()
			snap = make([]bool, n)
			for id := range fin {
				snap[id] = fin[id].Load()
			}
		})
		within(t, fmt.Sprintf("pool %d: submitters see ErrClosed", r), wg.Wait)
		for id := range n {
			if f := futures[id]; f != nil {
				v, err := f.Get(context.Background())
				if errors.Is(err, forkjoin.ErrClosed) {
					continue
				}
				require.NoError(t, err)
				require.Equal(t, id, v)
				acc[id].Store(true)
			}
			if !acc[id].Load() {
				require.Zero(t, runs[id].Load(), "pool %d: task %d rejected but ran", r, id)
				continue
			}
			require.True(t, snap[id], "pool %d: task %d (kind %d) accepted but not finished when Close returned", r, id, id%each%4)
			require.Equal(t, int32(1), runs[id].Load(), "pool %d: task %d", r, id)
		}
	}
}

// TestSubmitRacesWorkerGoingToSleep: a one- or two-worker pool runs a
// chain of tasks submitted from outside, one at a time: the submitter
// waits for task i to start, waits a varying while (0 to about 40 us, so
// that the next push lands anywhere in the worker's way from its last
// take through backoff, Prepare and the re-check to Sleep), and submits
// task i+1 at a varying priority. Every task must start within the hang
// limit: a push that the worker's last check missed, with no wake-up,
// leaves it queued while every worker sleeps. The chain crosses a 64-slot
// block every 64 tasks of a level, so the check also races block changes
// and reuse.
func TestSubmitRacesWorkerGoingToSleep(t *testing.T) {
	chain := 20_000
	if testenv.Race {
		chain = 4_000
	}
	for _, par := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", par), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(par))
			defer closePool(t, p)
			started := make(chan struct{}, 1)
			for i := range chain {
				prio := forkjoin.Priority(i*i%7%forkjoin.NumPriorities - 1)
				require.NoError(t, p.ExecutePriority(prio, func(*forkjoin.Worker) { started <- struct{}{} }))
				select {
				case <-started:
				case <-time.After(hangTimeout):
					t.Fatalf("task %d not started after %v with the pool idle (lost wake-up); stats: %v", i, hangTimeout, p.Stats())
				}
				spin(time.Duration(i*7919%41) * time.Microsecond)
			}
		})
	}
}
