package forkjoin_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestJoinerRunsTasksOfItsComputation: a worker whose joined task was
// stolen runs other tasks of its computation while it waits (the join with
// helping of the package doc and the README). On 2 workers the root forks
// b and waits until the other worker has started it; b forks and joins
// small tasks until one of them has run on the root's worker, which can
// happen only while the root is waiting in b's Join. A join that blocked
// without helping would leave b forking to the hang limit. (A round where
// the root ran b itself, helping in the Join of one of its own small
// forks, proves nothing and is only counted.)
func TestJoinerRunsTasksOfItsComputation(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	stolen := 0
	for round := range 20 {
		var root, bOn atomic.Pointer[forkjoin.Worker]
		var helped atomic.Bool
		within(t, "b until the joiner helps", func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				root.Store(w)
				b := forkjoin.Fork(w, func(bw *forkjoin.Worker) int {
					bOn.Store(bw)
					if bw == root.Load() {
						return 0
					}
					for !helped.Load() {
						e := forkjoin.Fork(bw, func(ew *forkjoin.Worker) int {
							if ew == root.Load() {
								helped.Store(true)
							}
							return 0
						})
						e.Join(bw)
					}
					return 0
				})
				// Publish b (forks are private until a thief asks, and
				// published at the next fork) until the other worker has
				// taken it.
				for bOn.Load() == nil {
					forkjoin.Fork(w, func(*forkjoin.Worker) int { return 0 }).Join(w)
					time.Sleep(time.Microsecond)
				}
				return b.Join(w)
			})
		})
		if bOn.Load() != root.Load() {
			stolen++
			require.True(t, helped.Load(), "round %d", round)
		}
	}
	t.Logf("%d of 20 rounds had b stolen", stolen)
}
