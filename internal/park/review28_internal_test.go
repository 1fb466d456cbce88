package park

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestSleeperSetStaysExact (review rev28; passed on ea2d076, kept as a
// regression test) runs workers that register, sleep or cancel, and
// re-register, as the pool's do, against a waker that calls WakeOne,
// WakeIdle, WakeAll and Unpark at random, and checks what the protocol
// relies on:
//
//   - the count is exact: under the lock, n == len(stack) == the number
//     of listed workers, and every listed worker is on the stack once;
//   - Cancel's fast path (n == 0, no lock) never leaves its worker
//     listed: right after Cancel(i), i is not listed. It holds because
//     only i lists itself, and n, changed under the lock with listed,
//     counts i while i is listed (n >= 1);
//   - a worker that sleeps is always woken (hang limit), and at the end
//     nobody is left registered.
func TestSleeperSetStaysExact(t *testing.T) {
	const workers = 4
	rounds := 50_000
	if testenv.Race {
		rounds = 10_000
	}
	s := New(workers)
	var (
		stale   atomic.Int64 // a worker still listed after its own Cancel
		bad     atomic.Value // the first invariant violation the checker saw
		done    atomic.Int32 // workers finished
		sleeps  atomic.Int64
		wg      sync.WaitGroup
		checker sync.WaitGroup
	)
	check := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		listed, seen := 0, make([]int, workers)
		for _, l := range s.listed {
			if l {
				listed++
			}
		}
		for _, i := range s.stack {
			seen[i]++
			if seen[i] > 1 || !s.listed[i] {
				bad.CompareAndSwap(nil, fmt.Sprintf("stack %v, listed %v", s.stack, s.listed))
			}
		}
		if int(s.n.Load()) != len(s.stack) || len(s.stack) != listed {
			bad.CompareAndSwap(nil, fmt.Sprintf("n %d, stack %v, listed %v", s.n.Load(), s.stack, s.listed))
		}
	}
	testenv.Within(t, "workers and waker", func() {
		for i := range workers {
			wg.Go(func() {
				defer done.Add(1)
				rng := rand.New(rand.NewPCG(uint64(i), 28))
				for range rounds {
					s.Prepare(i, rng.IntN(2) == 0)
					if rng.IntN(2) == 0 {
						s.Sleep(i) // a token from the waker, or one left over
						sleeps.Add(1)
					}
					s.Cancel(i)
					s.mu.Lock()
					if s.listed[i] {
						stale.Add(1)
					}
					s.mu.Unlock()
				}
			})
		}
		checker.Go(func() {
			rng := rand.New(rand.NewPCG(99, 28))
			for done.Load() < workers {
				switch rng.IntN(8) {
				case 0:
					s.WakeAll()
				case 1, 2:
					s.WakeIdle()
				case 3:
					s.Unpark(rng.IntN(workers))
				default:
					s.WakeOne()
				}
				check()
				runtime.Gosched()
			}
		})
		wg.Wait()
		checker.Wait()
	})
	check()
	require.Nil(t, bad.Load(), "the sleeper set's invariant broke")
	require.Zero(t, stale.Load(), "a worker was still listed after its own Cancel")
	require.Zero(t, s.Count(), "nobody is registered at the end")
	require.Empty(t, s.stack)
	t.Logf("%d sleeps", sleeps.Load())
}
