package magpie

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestPanicInsideTaskIsPanicError: a helper called from a task, whose first
// chunk runs before any split (the worker has a surplus: a task queued on
// its deque and no idle worker), panics in that chunk. The caller recovers
// a *forkjoin.PanicError, as on every other path. Before the fix the value
// arrived raw (found by review; all four cases failed).
func TestPanicInsideTaskIsPanicError(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	boom := errors.New("boom")
	in := ints(5000)
	calls := map[string]func(w *forkjoin.Worker){
		"For": func(w *forkjoin.Worker) {
			For(w, 5000, func(i int) {
				if i == 0 {
					panic(boom)
				}
			})
		},
		"ForInit": func(w *forkjoin.Worker) {
			ForInit(w, 5000, func() int { return 0 }, func(_ int, i int) {
				if i == 0 {
					panic(boom)
				}
			})
		},
		"Map2": func(w *forkjoin.Worker) {
			Map2(w, in, in, func(a, _ int) int {
				if a == in[0] {
					panic(boom)
				}
				return a
			})
		},
		"MinFunc": func(w *forkjoin.Worker) { MinFunc(w, in, func(a, b int) int { panic(boom) }) },
	}
	for name, call := range calls {
		var got any
		forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
			var hold atomic.Bool
			started := make(chan struct{})
			f1 := forkjoin.Fork(w, func(*forkjoin.Worker) int { // stolen: keeps the other worker busy
				close(started)
				for !hold.Load() {
				}
				return 0
			})
			<-started
			f2 := forkjoin.Fork(w, func(*forkjoin.Worker) int { return 0 }) // a surplus on our deque
			got = recoverValue(func() { call(w) })
			hold.Store(true)
			f2.Join(w)
			f1.Join(w)
			return struct{}{}
		})
		var pe *forkjoin.PanicError
		require.ErrorAs(t, got.(error), &pe, name)
		require.ErrorIs(t, pe, boom, name)
	}
}
