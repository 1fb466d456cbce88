package magpie

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// The task probe's interleavings, forced (an adversarial review of
// probetask.go against the Go memory model). The real watcher shares a
// loop only after two ticks, so the races that matter (the caller's claim
// CAS against the watcher's share CAS, a share with a stale cursor, a
// helper that starts after the loop) are rare with it. These tests take
// the watcher's part themselves: holdTaskSlots keeps the real watcher from
// ever seeing the test's records, and the test calls share, the watcher's
// side, at the point it wants, from the one goroutine that acts as the
// watcher (share's precondition: a single sharer).

// noShare is the owner of the records holdTaskSlots puts in the slots:
// the watcher may try to share them, and nothing happens.
type noShare struct{}

func (noShare) share(uint64) {}

// holdTaskSlots fills every task slot with a record of its own whose
// cursor stays open (so the watcher never clears it), until the test ends:
// a loop run meanwhile finds no free slot and runs unwatched, so that only
// the test shares it. It waits for the slots the watcher still has to
// clear (records of earlier loops).
func holdTaskSlots(t *testing.T) {
	t.Helper()
	recs := make([]taskRecord, taskSlots)
	for i := range recs {
		recs[i].owner = noShare{}
		recs[i].cur.Store(2 << tpBits) // n = 2, next = 0: open
	}
	testenv.WaitUntil(t, "every task slot to be free once", func() bool {
		held := true
		for i := range taskLoops {
			slot := &taskLoops[i].rec
			if slot.Load() != &recs[i] && !slot.CompareAndSwap(nil, &recs[i]) {
				held = false
			}
		}
		return held
	})
	startWatcher() // the slots were taken without it: it clears them after the test
	t.Cleanup(func() {
		for i := range taskLoops {
			taskLoops[i].rec.CompareAndSwap(&recs[i], nil)
		}
	})
}

// shareNow is the watcher's side, called by the test: share s's loop if
// its cursor is open. It reports whether the cursor was open.
func shareNow[A any](s *rangeSpec[A]) bool {
	c := s.tprobe.rec.cur.Load()
	if !taskOpen(c) {
		return false
	}
	s.share(c)
	return true
}

// countSpec is a spec whose leaf counts the runs of each index in runs
// (set per loop, as For sets its body) and calls at(i) first; the
// accumulator is the list of indices run, so the combined result shows
// whether the pieces combined in index order.
type countSpec struct {
	rangeSpec[[]int]
	runs []atomic.Int32
	at   func(i int)
}

func newCountSpec() *countSpec {
	s := &countSpec{}
	s.leaf = func(acc []int, lo, hi int) []int {
		for i := lo; i < hi; i++ {
			s.runs[i].Add(1)
			if s.at != nil {
				s.at(i)
			}
			acc = append(acc, i)
		}
		return acc
	}
	s.combine = func(a, b []int) []int { return append(a, b...) }
	s.newZero = func() []int { return nil }
	return s
}

// requireOnce fails the test unless every index of the last loop ran
// exactly once and got is [0, n) in order.
func (s *countSpec) requireOnce(t *testing.T, got []int, what string) {
	t.Helper()
	for i := range s.runs {
		require.Equal(t, int32(1), s.runs[i].Load(), "%s: index %d", what, i)
	}
	require.Equal(t, indices(len(s.runs)), got, "%s: the pieces in index order", what)
}

// TestShortLoopInsideTaskCombinePanic: a panic in the combine of a shared
// loop inside a task (Reduce's combine, a user function, runs when the
// caller joins the chunks' results) reaches the caller as a
// *forkjoin.PanicError, as it does when the engine runs the loop. Before
// the fix it escaped taskProbeRun raw.
func TestShortLoopInsideTaskCombinePanic(t *testing.T) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	defer two.Close()
	boom := errors.New("boom in combine")
	g := newPairGate()
	got := inTask(t, two, func(w *forkjoin.Worker) any {
		return recoverValue(func() {
			Reduce(w, indices(100), 0, func(acc, x int) int {
				if x < 2 {
					g.enter() // index 0 waits until a helper runs index 1: shared
				}
				return acc + x
			}, func(a, b int) int {
				if a == 0 { // only the caller's part, [0, 1), sums to 0
					panic(boom)
				}
				return a + b
			})
		})
	})
	require.False(t, g.hung.Load())
	var pe *forkjoin.PanicError
	require.ErrorAs(t, asError(got), &pe, "the combine's panic arrived raw: %v", got)
	require.Equal(t, boom, pe.Value)
}

// TestShortLoopCombinePanic is TestShortLoopInsideTaskCombinePanic from
// outside the pool: the watcher hands the rest of the loop over, and the
// caller's combine of its part with the rest panics. Before the fix the
// value escaped combineRest raw.
func TestShortLoopCombinePanic(t *testing.T) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	defer two.Close()
	boom := errors.New("boom in combine")
	g := newPairGate()
	var got any
	testenv.Within(t, "the loop", func() {
		got = recoverValue(func() {
			Reduce(two, indices(100), 0, func(acc, x int) int {
				if x < 2 {
					g.enter() // index 0 waits until the pool runs index 1: handed over
				}
				return acc + x
			}, func(a, b int) int {
				if a == 0 { // only the caller's part, [0, 1), sums to 0
					panic(boom)
				}
				return a + b
			})
		})
	})
	require.False(t, g.hung.Load())
	var pe *forkjoin.PanicError
	require.ErrorAs(t, asError(got), &pe, "the combine's panic arrived raw: %v", got)
	require.Equal(t, boom, pe.Value)
}
