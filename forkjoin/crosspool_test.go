package forkjoin_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// invokeChain invokes pools[0], whose task invokes pools[1], and so on;
// the last task returns depth. Each task optionally sleeps first, so that
// the waiting worker is parked when the next invocation reaches its pool.
func invokeChain(pools []*forkjoin.Pool, sleep time.Duration) int {
	if len(pools) == 0 {
		return 0
	}
	return forkjoin.Invoke(pools[0], func(*forkjoin.Worker) int {
		time.Sleep(sleep)
		return 1 + invokeChain(pools[1:], sleep)
	})
}

// TestInvokeAcrossPools: pools of one worker each that invoke each other
// (rayon's mutual_install, with and without a sleep) complete: a worker
// that waits in Invoke on another pool keeps running its own pool's tasks,
// including the invocation that comes back to it. Chains 1→2→1, 1→2→1→2,
// and a ring of three pools twice round. (Before the fix, both workers sat
// in Invoke on a channel receive and the test hung.)
func TestInvokeAcrossPools(t *testing.T) {
	p1 := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithName("p1"))
	p2 := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithName("p2"))
	p3 := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithName("p3"))
	defer closePool(t, p1)
	defer closePool(t, p2)
	defer closePool(t, p3)
	chains := map[string][]*forkjoin.Pool{
		"1-2-1":        {p1, p2, p1},
		"1-2-1-2":      {p1, p2, p1, p2},
		"ring-3-twice": {p1, p2, p3, p1, p2, p3},
	}
	for name, chain := range chains {
		for _, sleep := range []time.Duration{0, 5 * time.Millisecond} {
			t.Run(fmt.Sprintf("%s/sleep=%v", name, sleep), func(t *testing.T) {
				within(t, "invoke chain "+name, func() {
					require.Equal(t, len(chain), invokeChain(chain, sleep))
				})
			})
		}
	}
}

// TestJoinSubmittedAcrossPools: a task on p1 joins a Future submitted to
// p2 whose task invokes p1; the joining worker keeps p1 going meanwhile.
func TestJoinSubmittedAcrossPools(t *testing.T) {
	p1 := forkjoin.New(forkjoin.WithParallelism(1))
	p2 := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p1)
	defer closePool(t, p2)
	within(t, "join across pools", func() {
		got := forkjoin.Invoke(p1, func(w *forkjoin.Worker) int {
			f := forkjoin.Submit(p2, func(*forkjoin.Worker) int {
				return 1 + forkjoin.Invoke(p1, func(*forkjoin.Worker) int { return 1 })
			})
			return f.Join(w)
		})
		require.Equal(t, 2, got)
	})
}
