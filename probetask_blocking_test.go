package magpie

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestShortLoopInsideTaskOtherPoolNoSpare: TestShortLoopInsideTaskOtherPool
// on a caller's pool that may start no compensating worker
// (WithMaxBlocked(0)): the caller, A's only worker, waits for the loop,
// and the loop's index 1, on B, calls Invoke on A. forkjoin.Blocking then
// waits plainly, holding A's only worker, and the Invoke on A never runs;
// the caller must wait as Invoke does, running A's queued tasks meanwhile.
func TestShortLoopInsideTaskOtherPoolNoSpare(t *testing.T) {
	a := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(0))
	b := forkjoin.New(forkjoin.WithParallelism(2))
	var ranOnA atomic.Int32
	g := newPairGate()
	got := inTask(t, a, func(*forkjoin.Worker) any {
		out := make([]int, 2)
		For(b, 2, func(i int) {
			g.enter() // index 0 (the caller) waits until a helper on B has started index 1
			if i == 1 {
				forkjoin.Invoke(a, func(*forkjoin.Worker) struct{} { ranOnA.Add(1); return struct{}{} })
			}
			out[i] = i * i
		})
		return out
	})
	require.False(t, g.hung.Load())
	require.Equal(t, squares(2), got)
	require.Equal(t, int32(1), ranOnA.Load())
	b.Close()
	a.Close()
}
