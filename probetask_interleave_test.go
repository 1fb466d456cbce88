package magpie

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

// countSpec is a spec whose leaf records each run of an index in loop,
// the state of the loop running now (set by the caller before each loop,
// a plain field, as For sets its body: a helper that read it after its
// loop returned races with the next loop's write, which -race reports).
// The accumulator is the list of indices run, so the combined result
// shows whether the pieces combined in index order.
type countSpec struct {
	rangeSpec[[]int]
	loop *countLoop
}

// countLoop is one loop of a countSpec. at(i), if set, is called at the
// start of index i, by whoever runs it.
type countLoop struct {
	runs     []atomic.Int32
	running  atomic.Int32 // indices running now
	returned atomic.Bool  // set once the loop has returned or unwound
	late     atomic.Int32 // indices that started after that
	at       func(i int)
}

func newCountSpec() *countSpec {
	s := &countSpec{}
	s.leaf = func(acc []int, lo, hi int) []int {
		l := s.loop
		for i := lo; i < hi; i++ {
			if l.returned.Load() {
				l.late.Add(1)
			}
			l.runs[i].Add(1)
			l.running.Add(1)
			if l.at != nil {
				func() {
					defer l.running.Add(-1)
					l.at(i)
				}()
			} else {
				l.running.Add(-1)
			}
			acc = append(acc, i)
		}
		return acc
	}
	s.combine = func(a, b []int) []int { return append(a, b...) }
	s.newZero = func() []int { return nil }
	return s
}

// run runs a loop of n indices on s from inside a task, through the task
// probe: on w, or (pool true) as a *Pool called from w's goroutine. It
// returns the result and what the loop panicked with.
func (s *countSpec) run(w *forkjoin.Worker, pool bool, n int, at func(i int)) (got []int, v any) {
	l := &countLoop{runs: make([]atomic.Int32, n), at: at}
	s.loop = l
	v = recoverValue(func() {
		if pool {
			got = taskProbeRun(&s.rangeSpec, w.Pool(), nil, w.Pool(), n)
		} else {
			got = taskProbeRun(&s.rangeSpec, w, w, w.Pool(), n)
		}
	})
	l.returned.Store(true)
	return got, v
}

// requireOnce fails the test unless every index of the last loop ran
// exactly once, none is still running or started after the loop returned,
// and got is [0, n) in order.
func (s *countSpec) requireOnce(t *testing.T, got []int, what string) {
	t.Helper()
	s.requireLeft(t, what)
	for i := range s.loop.runs {
		require.Equal(t, int32(1), s.loop.runs[i].Load(), "%s: index %d", what, i)
	}
	require.Equal(t, indices(len(s.loop.runs)), got, "%s: the pieces in index order", what)
}

// requireLeft fails the test if an index of the last loop still runs or
// started after the loop had returned or unwound.
func (s *countSpec) requireLeft(t *testing.T, what string) {
	t.Helper()
	require.Zero(t, s.loop.running.Load(), "%s: an index still running after the loop returned", what)
	require.Zero(t, s.loop.late.Load(), "%s: an index started after the loop returned", what)
}

// othersRan waits (a few ms at most) until an index other than the
// caller's has run, so that a helper took part; it returns at once if
// none can (nothing left to share).
func (l *countLoop) othersRan(before int32) {
	deadline := time.Now().Add(5 * time.Millisecond)
	for time.Now().Before(deadline) {
		total := int32(0)
		for i := range l.runs {
			total += l.runs[i].Load()
		}
		if total > before {
			return
		}
		runtime.Gosched()
	}
}

// shareCases are the loop lengths and the indices at which the tests share
// a loop: every index of the short ones, and the batch edges (1, 4, 16,
// 64 ...) and their neighbours of a longer one.
func shareCases() (cases [][2]int) {
	for _, n := range []int{2, 3, 5, 17} {
		for at := range n {
			cases = append(cases, [2]int{n, at})
		}
	}
	for _, at := range []int{0, 1, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000, 1023} {
		cases = append(cases, [2]int{1024, at})
	}
	return cases
}

// TestTaskProbeShareAtEveryPoint: the watcher's share CAS taking effect
// while the caller is at any index of any batch (its first, a middle one,
// the last one, when nothing is left), with the *Worker and with a *Pool
// called from the worker: every index runs exactly once, the pieces
// combine in index order, and no index runs after the loop returned. One
// spec serves every loop, as For's recycled spec does.
func TestTaskProbeShareAtEveryPoint(t *testing.T) {
	holdTaskSlots(t)
	p := forkjoin.New(forkjoin.WithParallelism(4))
	defer p.Close()
	s := newCountSpec()
	for _, pool := range []bool{false, true} {
		for _, c := range shareCases() {
			n, at := c[0], c[1]
			var got []int
			var v any
			inTask(t, p, func(w *forkjoin.Worker) any {
				got, v = s.run(w, pool, n, func(i int) {
					// Only the caller runs index at (no helper before the
					// share), once unless the loop is broken.
					if i == at && shareNow(&s.rangeSpec) {
						s.loop.othersRan(int32(at + 1))
					}
				})
				return nil
			})
			what := fmt.Sprintf("pool=%v n=%d share at %d", pool, n, at)
			require.Nil(t, v, what)
			s.requireOnce(t, got, what)
		}
	}
}

// TestTaskProbeStaleShare: a share with a cursor the caller has moved
// past, within the loop or from the spec's previous loop (same n, same
// next: only the generation differs), changes nothing; a share of the
// current cursor afterwards takes effect, and the caller finds its own
// shared phase, not the stale one the failed attempt stored.
func TestTaskProbeStaleShare(t *testing.T) {
	holdTaskSlots(t)
	p := forkjoin.New(forkjoin.WithParallelism(4))
	defer p.Close()
	s := newCountSpec()
	const n = 100
	var prev uint64 // the cursor at index 0 of the previous loop
	for round := range 3 {
		var got []int
		var v any
		inTask(t, p, func(w *forkjoin.Worker) any {
			got, v = s.run(w, false, n, func(i int) {
				cur := &s.tprobe.rec.cur
				switch i {
				case 0:
					if prev != 0 {
						assert.True(t, taskOpen(prev))
						s.share(prev) // the previous loop's cursor, at this loop's index
						assert.Zero(t, cur.Load()&tpShared, "round %d: a share of the previous loop took this one", round)
					}
					prev = cur.Load()
				case 1:
					// Unless a stale share took effect above: then a helper
					// may run this index, and share has a single caller.
					if cur.Load()&tpShared == 0 {
						s.share(prev) // this loop's cursor at index 0: moved past since
						assert.Zero(t, cur.Load()&tpShared, "round %d: a stale share took effect", round)
					}
				case 2:
					assert.True(t, cur.Load()&tpShared == 0 && shareNow(&s.rangeSpec), "round %d: shared already", round)
					assert.NotZero(t, cur.Load()&tpShared, "round %d", round)
					s.loop.othersRan(3)
				}
			})
			return nil
		})
		require.Nil(t, v)
		s.requireOnce(t, got, fmt.Sprintf("round %d", round))
	}
}

// TestTaskProbeGenerationWrap: a record whose generation is at the top of
// its 41 bits wraps to 0 at the next loop, and that loop, shared, still
// finds its shared phase (sharedFor compares the generations modulo the
// field's width).
func TestTaskProbeGenerationWrap(t *testing.T) {
	holdTaskSlots(t)
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	s := newCountSpec()
	const top = uint64(1)<<(64-tpGenShift) - 1
	for _, n := range []int{2, 100} {
		s.tprobe.rec.cur.Store(top<<tpGenShift | uint64(n)<<tpBits | uint64(n)) // a closed loop of the last generation
		var got []int
		var v any
		inTask(t, p, func(w *forkjoin.Worker) any {
			got, v = s.run(w, false, n, func(i int) {
				if i == 0 {
					assert.Zero(t, s.tprobe.rec.cur.Load()>>tpGenShift, "the generation wraps to 0")
					assert.True(t, shareNow(&s.rangeSpec))
				}
			})
			return nil
		})
		require.Nil(t, v, "n=%d", n)
		s.requireOnce(t, got, fmt.Sprintf("n=%d", n))
	}
}

// TestTaskProbeLateHelper: helpers that start only after their loop has
// ended (the pool's other worker was busy), while the spec serves the
// next loop, find the loop left and return: they claim nothing, touch no
// index of the next loop, and do not panic (a helper joining a finished
// loop would close its done channel a second time).
func TestTaskProbeLateHelper(t *testing.T) {
	holdTaskSlots(t)
	var panics atomic.Int32
	two := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) { panics.Add(1) }))
	release := make(chan struct{})
	busy := make(chan struct{})
	require.NoError(t, two.Execute(func(*forkjoin.Worker) { close(busy); <-release }))
	<-busy
	s := newCountSpec()
	const n = 50
	var loops []*countLoop
	for round := range 3 {
		var got []int
		var v any
		inTask(t, two, func(w *forkjoin.Worker) any {
			got, v = s.run(w, round%2 == 1, n, func(i int) {
				if i == 0 {
					assert.True(t, shareNow(&s.rangeSpec)) // its helper stays queued
				}
			})
			return nil
		})
		require.Nil(t, v)
		s.requireOnce(t, got, fmt.Sprintf("round %d", round))
		loops = append(loops, s.loop)
	}
	close(release)
	two.Close() // waits for the queued helpers
	require.Zero(t, panics.Load(), "a late helper panicked")
	for round, l := range loops {
		s.loop = l
		s.requireOnce(t, indices(n), fmt.Sprintf("after the late helpers, round %d", round))
	}
}

// TestTaskProbeUnwindWaitsForHelpers: the caller panics, or calls
// runtime.Goexit, in its batch while a helper is inside a chunk, with the
// share seen by the caller (a later batch) or not yet (the share took
// effect during the batch that unwinds): the loop unwinds only after the
// helper's index has returned, a panic as one *forkjoin.PanicError; and a
// panic in a batch of an unshared loop closes the cursor (the caller
// finds no shared phase to wait for).
func TestTaskProbeUnwindWaitsForHelpers(t *testing.T) {
	holdTaskSlots(t)
	var reported atomic.Int32 // the pool's handler sees a Goexit of a task too
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) { reported.Add(1) }))
	defer p.Close()
	s := newCountSpec()
	boom := errors.New("boom")
	const n = 40
	for _, goexit := range []bool{false, true} {
		for _, c := range []struct {
			name      string
			share, at int // share at index share (-1: never), unwind at index at
		}{{"unseen", 0, 0}, {"seen", 0, 30}, {"unshared", -1, 2}, {"unshared-last", -1, 39}} {
			what := fmt.Sprintf("%s goexit=%v", c.name, goexit)
			inHelper := make(chan struct{})
			var v any
			testenv.Within(t, what, func() {
				v = recoverValue(func() {
					forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
						_, v := s.run(w, false, n, func(i int) {
							switch {
							case i == c.share:
								assert.True(t, shareNow(&s.rangeSpec))
							case i == c.at:
							case i == 1 && c.share >= 0: // the helper's first index
								close(inHelper)
								time.Sleep(5 * time.Millisecond)
								return
							default:
								return
							}
							if i != c.at {
								return
							}
							if c.share >= 0 {
								<-inHelper
							}
							if goexit {
								runtime.Goexit()
							}
							panic(boom)
						})
						panic(v) // the loop's own unwinding, on to Invoke
					})
				})
			})
			s.requireLeft(t, what)
			var pe *forkjoin.PanicError
			require.ErrorAs(t, asError(v), &pe, what)
			if goexit {
				require.ErrorIs(t, pe, forkjoin.ErrGoexit, what)
			} else {
				require.Equal(t, boom, pe.Value, "%s: wrapped once", what)
			}
		}
	}
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
		return reduceCombinePanics(w, g, boom) // shared: a helper runs index 1
	})
	requireCombinePanic(t, g, got, boom)
}

// reduceCombinePanics runs a Reduce of 100 indices on r whose indices 0
// and 1 meet at g (so the loop is shared or handed over) and whose combine
// panics with boom when given the caller's part, [0, 1); it returns what
// the caller recovered.
func reduceCombinePanics(r forkjoin.Runner, g *pairGate, boom error) any {
	return recoverValue(func() {
		Reduce(r, indices(100), 0, func(acc, x int) int {
			if x < 2 {
				g.enter() // index 0 waits until another worker runs index 1
			}
			return acc + x
		}, func(a, b int) int {
			if a == 0 { // only the caller's part, [0, 1), sums to 0
				panic(boom)
			}
			return a + b
		})
	})
}

// requireCombinePanic checks that the loop did not hang at g and that the
// combine's panic reached the caller as a *forkjoin.PanicError of boom.
func requireCombinePanic(t *testing.T, g *pairGate, got any, boom error) {
	t.Helper()
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
		got = reduceCombinePanics(two, g, boom) // handed over: the pool runs index 1
	})
	requireCombinePanic(t, g, got, boom)
}

// TestTaskProbeShareStress races the watcher's share against the callers'
// claims with no two-tick delay: one goroutine, acting as the watcher,
// shares any open loop of a fixed set of specs as fast as it can, while
// tasks on a pool of four run loops on specs they take from a free list
// and give back (For's recycling), some as a *Pool called from the
// worker, some with an early exit, some with a panic. Every loop checks
// that each index ran once (at most once beyond an early exit), that the
// pieces combined in order, and that no index ran after the loop
// returned; -race checks the plain fields (a helper reading the spec's
// loop after its loop returned races with the next loop's write).
func TestTaskProbeShareStress(t *testing.T) {
	holdTaskSlots(t)
	p := forkjoin.New(forkjoin.WithParallelism(4))
	defer p.Close()
	specs := make([]*countSpec, 4) // few: a spec comes back soon after its loop
	free := make(chan *countSpec, len(specs))
	for i := range specs {
		specs[i] = newCountSpec()
		free <- specs[i]
	}
	stop := make(chan struct{})
	watcherDone := make(chan struct{})
	var shares atomic.Int64
	go func() { // the only sharer, as the watcher is
		defer close(watcherDone)
		rng := rand.New(rand.NewPCG(7, 7))
		for {
			select {
			case <-stop:
				return
			default:
			}
			if shareNow(&specs[rng.IntN(len(specs))].rangeSpec) {
				shares.Add(1)
			}
			runtime.Gosched()
		}
	}()
	defer func() { close(stop); <-watcherDone }()
	rounds := 300
	if testenv.Race {
		rounds = 60
	}
	boom := errors.New("boom")
	testenv.Concurrently(t, "the loops", 3, func(g int) {
		rng := rand.New(rand.NewPCG(uint64(g), 3))
		for round := range rounds {
			n := 2 + rng.IntN(300)
			exitAt, panicAt := -1, -1
			switch rng.IntN(4) {
			case 0:
				exitAt = rng.IntN(n)
			case 1:
				panicAt = rng.IntN(n)
			}
			pool := rng.IntN(3) == 0
			s := <-free
			var got []int
			var v any
			forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
				s.limit = nil
				if exitAt >= 0 {
					s.limit = newRangeLimit(n)
				}
				got, v = s.run(w, pool, n, func(i int) {
					if i%7 == 0 {
						runtime.Gosched() // a chance for the sharer and the helpers to move
					}
					if i == exitAt {
						s.limit.lower(i + 1)
					}
					if i == panicAt {
						panic(boom)
					}
				})
				return struct{}{}
			})
			l := s.loop
			what := fmt.Sprintf("g=%d round=%d n=%d exit=%d panic=%d pool=%v", g, round, n, exitAt, panicAt, pool)
			ok := assert.Zero(t, l.running.Load(), "%s: running after return", what) &&
				assert.Zero(t, l.late.Load(), "%s: started after return", what)
			for i := range l.runs {
				r := l.runs[i].Load()
				if exitAt < 0 && panicAt < 0 || i <= exitAt {
					ok = ok && assert.Equal(t, int32(1), r, "%s: index %d", what, i)
				} else {
					ok = ok && assert.LessOrEqual(t, r, int32(1), "%s: index %d", what, i)
				}
			}
			switch {
			case panicAt >= 0:
				var pe *forkjoin.PanicError
				ok = ok && assert.ErrorAs(t, asError(v), &pe, what) && assert.Equal(t, boom, pe.Value, what)
			case exitAt >= 0:
				ok = ok && assert.Nil(t, v, what) && assert.Equal(t, indices(exitAt+1), got[:min(len(got), exitAt+1)], what)
				for j := 1; ok && j < len(got); j++ {
					ok = assert.Less(t, got[j-1], got[j], "%s: pieces out of order", what)
				}
			default:
				ok = ok && assert.Nil(t, v, what) && assert.Equal(t, indices(n), got, what)
			}
			free <- s
			if !ok {
				return
			}
		}
	})
	t.Logf("%d shares", shares.Load())
}

// TestTaskProbeShareOnFullQueue: the watcher shares a loop on a pool whose
// bounded submission queue (WithMaxQueued) is full and whose other worker
// is busy: Execute refuses the helpers at once (the watcher must never
// block: every loop of the process waits on it), and the caller runs
// every index.
func TestTaskProbeShareOnFullQueue(t *testing.T) {
	holdTaskSlots(t)
	two := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxQueued(1))
	release := make(chan struct{})
	busy := make(chan struct{})
	require.NoError(t, two.Execute(func(*forkjoin.Worker) { close(busy); <-release }))
	<-busy
	defer two.Close()
	defer close(release)
	s := newCountSpec()
	const n = 30
	var got []int
	var v any
	inTask(t, two, func(w *forkjoin.Worker) any {
		// The queue is empty now (the task was taken): fill it from
		// outside (a submission from the pool's own worker is not
		// bounded: see forkjoin.WithMaxQueued).
		errs := make(chan error, 2)
		go func() {
			errs <- two.Execute(func(*forkjoin.Worker) {})
			errs <- two.Execute(func(*forkjoin.Worker) {})
		}()
		assert.NoError(t, <-errs)
		assert.ErrorIs(t, <-errs, forkjoin.ErrQueueFull)
		got, v = s.run(w, false, n, func(i int) {
			if i == 0 {
				assert.True(t, shareNow(&s.rangeSpec))
			}
		})
		return nil
	})
	require.Nil(t, v)
	s.requireOnce(t, got, "full queue")
}

// TestShortLoopInsideTaskOtherPool: a short loop called with a *Pool (B)
// from a worker of another pool (A, one worker), whose index 1, run by a
// helper on B once the loop is shared, calls into A (Invoke on A from B's
// worker queues a task on A and waits for it): the loop goes through.
// The caller, A's only worker, waits for that helper; a plain wait there
// holds A's one worker, and the helper's task on A never runs.
func TestShortLoopInsideTaskOtherPool(t *testing.T) {
	a := forkjoin.New(forkjoin.WithParallelism(1))
	defer a.Close()
	b := forkjoin.New(forkjoin.WithParallelism(2))
	defer b.Close()
	for _, n := range []int{3, 50} {
		crossPoolLoop(t, a, b, n, func() {})
	}
}

// crossPoolLoop runs, inside a task of a, For(b, n, ...) whose indices 0
// and 1 run at once (index 0 waits until a helper on b has started index
// 1), index 1 calling Invoke on a after beforeInvoke; it checks the
// loop's result and that the Invoke on a ran once.
func crossPoolLoop(t *testing.T, a, b *forkjoin.Pool, n int, beforeInvoke func()) {
	t.Helper()
	var ranOnA atomic.Int32
	g := newPairGate()
	got := inTask(t, a, func(*forkjoin.Worker) any {
		out := make([]int, n)
		For(b, n, func(i int) {
			if i < 2 {
				g.enter()
			}
			if i == 1 {
				beforeInvoke()
				forkjoin.Invoke(a, func(*forkjoin.Worker) struct{} { ranOnA.Add(1); return struct{}{} })
			}
			out[i] = i * i
		})
		return out
	})
	require.False(t, g.hung.Load())
	require.Equal(t, squares(n), got, "n=%d", n)
	require.Equal(t, int32(1), ranOnA.Load())
}

// TestShortLoopInsideTaskOtherPoolWaiterNotHelped: as
// TestShortLoopInsideTaskOtherPool, with one of B's two workers held by a
// task of its own, so that the loop's helper runs on the other, and its
// index 1 calling into A only once the caller has started waiting (or
// after 200 ms if the caller's wait queues nothing on B). B's worker,
// waiting for its Invoke on A, helps with B's queued tasks. The caller
// used to wait through a task queued on B that blocked until the loop was
// done: B's worker took it while it waited inside index 1 and blocked on
// itself, for good (hung under -race in CI; every run here). The caller now
// waits in forkjoin.Blocking: nothing of it is queued on B.
func TestShortLoopInsideTaskOtherPoolWaiterNotHelped(t *testing.T) {
	a := forkjoin.New(forkjoin.WithParallelism(1))
	defer a.Close()
	b := forkjoin.New(forkjoin.WithParallelism(2))
	defer b.Close()
	held, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	require.NoError(t, b.Execute(func(*forkjoin.Worker) { close(held); <-release }))
	<-held
	crossPoolLoop(t, a, b, 2, func() {
		deadline := time.Now().Add(200 * time.Millisecond)
		for b.Stats().QueuedNormal == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	})
}

// TestShortLoopHandedPanicErrClosed: a handed-over rest whose body panics
// with forkjoin.ErrClosed (a body that called Invoke on a pool closed
// meanwhile) is a panic of the loop, not a closed pool: it reaches the
// caller as a *PanicError, and no index runs twice. Before the fix,
// runRest took any panic matching ErrClosed for the pool's refusal of the
// rest, and the caller ran the whole rest again.
func TestShortLoopHandedPanicErrClosed(t *testing.T) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	defer two.Close()
	const n = 100
	runs := make([]atomic.Int32, n)
	g := newPairGate()
	var v any
	testenv.Within(t, "the loop", func() {
		v = recoverValue(func() {
			For(two, n, func(i int) {
				runs[i].Add(1)
				if i < 2 {
					g.enter() // index 0 waits until the pool runs index 1: handed over
				}
				if i == n-1 {
					panic(forkjoin.ErrClosed)
				}
			})
		})
	})
	require.False(t, g.hung.Load())
	var pe *forkjoin.PanicError
	require.ErrorAs(t, asError(v), &pe)
	require.Equal(t, forkjoin.ErrClosed, pe.Value)
	for i := range runs {
		require.LessOrEqual(t, runs[i].Load(), int32(1), "index %d ran twice", i)
	}
}
