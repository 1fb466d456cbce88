package magpie

import (
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestShortLoopSlackGoneGoesParallel: the slack gate re-checked between
// batches (slackgate.go), for For, ForRange, Map and MapInPlace. A task on
// a two-worker pool forks a sibling while the other worker is busy
// (Surplus() == 1: slack), then runs the loop over 64 indices. Index 0 releases the other worker and waits until it
// has stolen and run the sibling: the slack is gone. Every index past the
// first batch (slackBatch)
// then waits until a second one is running, which needs the other
// worker: run inline to the end (main before this fix), the loop hangs.
func TestShortLoopSlackGoneGoesParallel(t *testing.T) {
	loops := map[string]func(w *forkjoin.Worker, n int, body func(i int)){
		"For": func(w *forkjoin.Worker, n int, body func(i int)) { For(w, n, body) },
		"ForRange": func(w *forkjoin.Worker, n int, body func(i int)) {
			ForRange(w, n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					body(i)
				}
			})
		},
		"Map": func(w *forkjoin.Worker, n int, body func(i int)) {
			out := Map(w, indices(n), func(i int) int { body(i); return i })
			if !slices.Equal(out, indices(n)) {
				panic("Map's result is wrong")
			}
		},
		"MapInPlace": func(w *forkjoin.Worker, n int, body func(i int)) {
			s := indices(n)
			MapInPlace(w, s, func(i int) int { body(i); return -i })
			for i, x := range s {
				if x != -i {
					panic("MapInPlace's result is wrong")
				}
			}
		},
	}
	for name, loop := range loops {
		t.Run(name, func(t *testing.T) { testSlackGone(t, loop) })
	}
}

func testSlackGone(t *testing.T, loop func(w *forkjoin.Worker, n int, body func(i int))) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	t.Cleanup(two.Close)
	var stop atomic.Bool
	t.Cleanup(func() { stop.Store(true) }) // runs first: frees a hung index
	release, busy := make(chan struct{}), make(chan struct{})
	require.NoError(t, two.Execute(func(*forkjoin.Worker) { close(busy); <-release }))
	<-busy
	var running atomic.Int32
	var seenTwo atomic.Bool
	var ran [64]atomic.Int32
	testenv.Within(t, "the loop", func() {
		forkjoin.Invoke(two, func(w *forkjoin.Worker) struct{} {
			stolen := make(chan struct{})
			f := forkjoin.Fork(w, func(*forkjoin.Worker) int { close(stolen); return 1 })
			if !smallInline(w, 64, 0) {
				panic("no slack at the loop's start: the test does not test the gate")
			}
			loop(w, 64, func(i int) {
				ran[i].Add(1)
				if i == 0 {
					close(release)
					<-stolen
					return
				}
				if i < slackBatch {
					return
				}
				if running.Add(1) >= 2 {
					seenTwo.Store(true)
				}
				for !seenTwo.Load() && !stop.Load() {
					runtime.Gosched()
				}
				running.Add(-1)
			})
			f.Join(w)
			return struct{}{}
		})
	})
	for i := range ran {
		require.Equal(t, int32(1), ran[i].Load(), "index %d", i)
	}
}
