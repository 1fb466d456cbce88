package magpie

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestShortLoopSlackGoneGoesParallel: the slack gate re-checked between
// batches (slackgate.go), one subtest per helper with a slack-gated inline
// path (slackGoneLoops). A task on a two-worker pool forks a sibling while
// the other worker is busy (Surplus() == 1: slack), then runs the loop
// over 64 indices. Index 0 releases the other worker and waits until it
// has stolen and run the sibling: the slack is gone. Every index past the
// first batch (slackBatch) then waits until a second one is running, which
// needs the other worker: a loop run inline to the end hangs (For,
// ForRange, Map and MapInPlace before the gate was re-checked; the
// reducing, searching and per-piece helpers before they handed their rest
// over too).
func TestShortLoopSlackGoneGoesParallel(t *testing.T) {
	for name, loop := range slackGoneLoops() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testSlackGone(t, loop)
		})
	}
}

// TestRunRangeDoesNotInlineBySlack: the engine's entry, as a helper's
// rest reaches it, with slack queued again by then (an idle worker woke:
// the surplus counts idle workers) must not run the loop inline to its
// end: the helpers gate on the slack before they call it (slackgate.go).
// Every index waits until two run at once; index 0 ends the slack. With
// runRange's own slack shortcut (removed) the loop ran inline and hung.
func TestRunRangeDoesNotInlineBySlack(t *testing.T) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	t.Cleanup(two.Close)
	var stop atomic.Bool
	t.Cleanup(func() { stop.Store(true) }) // runs first: frees a hung index
	const n = 64
	var running atomic.Int32
	var seenTwo atomic.Bool
	var ran [n]atomic.Int32
	testenv.Within(t, "the loop", func() {
		inSlackTask(two, n, func(w *forkjoin.Worker, gone func()) {
			runRange(w, n, rangeBodySpec(func(lo, hi int) {
				for i := lo; i < hi; i++ {
					ran[i].Add(1)
					if i == 0 {
						gone()
					}
					if running.Add(1) >= 2 {
						seenTwo.Store(true)
					}
					for !seenTwo.Load() && !stop.Load() {
						runtime.Gosched()
					}
					running.Add(-1)
				}
			}, 0))
		})
	})
	for i := range ran {
		require.Equal(t, int32(1), ran[i].Load(), "index %d", i)
	}
}

// TestSlackGoneSequentialResult: a slack-gated loop whose slack goes at
// index j (before the first re-check, at a batch boundary, inside a later
// batch, at the last index) hands its rest over at the next re-check, and
// every helper's result is still the sequential loop's: the inline part's
// partial result comes first (Reduce with string concatenation, which is
// not commutative; IndexFunc's first match and MinFunc's first minimum in
// the rest, after elements of the inline part; Filter's order), and every
// index runs once.
func TestSlackGoneSequentialResult(t *testing.T) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	t.Cleanup(two.Close)
	for name, loop := range slackGoneLoops() {
		t.Run(name, func(t *testing.T) {
			for _, n := range []int{17, 20, 63, 64, 65, 100, 257, 300, SequentialThreshold} {
				for _, j := range []int{0, slackBatch - 1, slackBatch, 17, 63, 64, 65, 200, n - 1} {
					if j >= n {
						continue
					}
					ran := make([]atomic.Int32, n)
					testenv.Within(t, "the loop", func() {
						inSlackTask(two, n, func(w *forkjoin.Worker, gone func()) {
							loop(w, n, func(i int) {
								ran[i].Add(1)
								if i == j {
									gone()
								}
							})
						})
					})
					for i := range ran {
						require.Equal(t, int32(1), ran[i].Load(), "n=%d, slack gone at %d: index %d", n, j, i)
					}
				}
			}
		})
	}
}

// TestSlackGonePanicIsPanicError: a panic in a slack-gated loop, in the
// part run inline or in the rest handed over once the slack is gone,
// reaches the caller as a *forkjoin.PanicError, as from a loop on the
// pool.
func TestSlackGonePanicIsPanicError(t *testing.T) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	t.Cleanup(two.Close)
	const n = 64
	for name, loop := range slackGoneLoops() {
		t.Run(name, func(t *testing.T) {
			for _, j := range []int{0, 20} {
				for _, bad := range []int{5, slackBatch + 1, 40, n - 1} {
					var got any
					testenv.Within(t, "the loop", func() {
						inSlackTask(two, n, func(w *forkjoin.Worker, gone func()) {
							defer func() { got = recover() }()
							loop(w, n, func(i int) {
								if i == j {
									gone()
								}
								if i == bad {
									panic("bad index")
								}
							})
						})
					})
					var pe *forkjoin.PanicError
					require.ErrorAs(t, asError(got), &pe, "slack gone at %d, panic at %d: %v", j, bad, got)
				}
			}
		})
	}
}

// slackGoneLoops are the helpers whose short loop runs inline while the
// caller's worker has slack (smallInline), and ForChunks, each run over
// the elements 0..n-1 (indices(n)) with body(i) called exactly once per
// index, and each checking its result against the sequential loop's (a
// panic if it differs, which reaches the test through the task's join).
// No helper may stop early at a decision that leaves indices unrun: Any,
// ContainsFunc and the error helpers find nothing, All finds every
// element true, IndexFunc's match is the last index.
func slackGoneLoops() map[string]func(w *forkjoin.Worker, n int, body func(i int)) {
	pred := func(body func(int), ok func(int) bool) func(int) bool {
		return func(x int) bool { body(x); return ok(x) }
	}
	check := func(what string, ok bool) {
		if !ok {
			panic(what + "'s result differs from the sequential loop's")
		}
	}
	multipleOf3 := func(x int) bool { return x%3 == 0 }
	return map[string]func(w *forkjoin.Worker, n int, body func(i int)){
		"For": func(w *forkjoin.Worker, n int, body func(i int)) { For(w, n, body) },
		"ForRange": func(w *forkjoin.Worker, n int, body func(i int)) {
			ForRange(w, n, func(lo, hi int) { forBody(body, lo, hi) })
		},
		"Map": func(w *forkjoin.Worker, n int, body func(i int)) {
			out := Map(w, indices(n), func(i int) int { body(i); return i })
			check("Map", slices.Equal(out, indices(n)))
		},
		"MapInPlace": func(w *forkjoin.Worker, n int, body func(i int)) {
			s := indices(n)
			MapInPlace(w, s, func(i int) int { body(i); return -i })
			for i, x := range s {
				check("MapInPlace", x == -i)
			}
		},
		"Reduce": func(w *forkjoin.Worker, n int, body func(i int)) {
			got := Reduce(w, indices(n), "", func(acc string, x int) string {
				body(x)
				return acc + strconv.Itoa(x) + ","
			}, func(a, b string) string { return a + b })
			want := ""
			for x := range n {
				want += strconv.Itoa(x) + ","
			}
			check("Reduce", got == want)
		},
		"ReduceRange": func(w *forkjoin.Worker, n int, body func(i int)) {
			got := ReduceRange(w, n, "", func(acc string, lo, hi int) string {
				for x := lo; x < hi; x++ {
					body(x)
					acc += strconv.Itoa(x) + ","
				}
				return acc
			}, func(a, b string) string { return a + b })
			want := ""
			for x := range n {
				want += strconv.Itoa(x) + ","
			}
			check("ReduceRange", got == want)
		},
		"ReduceWith": func(w *forkjoin.Worker, n int, body func(i int)) {
			got := ReduceWith(w, indices(n), func() []int { return nil }, func(acc []int, x int) []int {
				body(x)
				return append(acc, x)
			}, func(a, b []int) []int { return append(a, b...) })
			check("ReduceWith", slices.Equal(got, indices(n)))
		},
		"Count": func(w *forkjoin.Worker, n int, body func(i int)) {
			check("Count", Count(w, indices(n), pred(body, multipleOf3)) == (n+2)/3)
		},
		"Filter": func(w *forkjoin.Worker, n int, body func(i int)) {
			got := Filter(w, indices(n), pred(body, multipleOf3))
			check("Filter", slices.Equal(got, slices.DeleteFunc(indices(n), func(x int) bool { return !multipleOf3(x) })))
		},
		"FilterMap": func(w *forkjoin.Worker, n int, body func(i int)) {
			got := FilterMap(w, indices(n), func(x int) (string, bool) { body(x); return strconv.Itoa(x), x%2 == 1 })
			var want []string
			for x := 1; x < n; x += 2 {
				want = append(want, strconv.Itoa(x))
			}
			check("FilterMap", slices.Equal(got, want))
		},
		"Map2": func(w *forkjoin.Worker, n int, body func(i int)) {
			got := Map2(w, indices(n), indices(n), func(x, y int) int { body(x); return x - 2*y })
			for i, x := range got {
				check("Map2", x == -i)
			}
		},
		"IndexFunc": func(w *forkjoin.Worker, n int, body func(i int)) {
			// The match is the last index: every index below it runs.
			check("IndexFunc", IndexFunc(w, indices(n), pred(body, func(x int) bool { return x == n-1 })) == n-1)
		},
		"ContainsFunc": func(w *forkjoin.Worker, n int, body func(i int)) {
			check("ContainsFunc", !ContainsFunc(w, indices(n), pred(body, func(x int) bool { return x < 0 })))
		},
		"Any": func(w *forkjoin.Worker, n int, body func(i int)) {
			check("Any", !Any(w, indices(n), pred(body, func(x int) bool { return x >= n })))
		},
		"All": func(w *forkjoin.Worker, n int, body func(i int)) {
			check("All", All(w, indices(n), pred(body, func(x int) bool { return x >= 0 })))
		},
		"MinFunc": func(w *forkjoin.Worker, n int, body func(i int)) {
			// Keys fall by steps of 8 indices: the first minimum is the
			// first index of the last step, in the rest.
			byKey := onceEach(n, body, func(x int) int { return -x / 8 })
			check("MinFunc", MinFunc(w, indices(n), byKey) == slices.MinFunc(indices(n), byKey))
		},
		"MaxFunc": func(w *forkjoin.Worker, n int, body func(i int)) {
			byKey := onceEach(n, body, func(x int) int { return x / 8 })
			check("MaxFunc", MaxFunc(w, indices(n), byKey) == slices.MaxFunc(indices(n), byKey))
		},
		"ForInit": func(w *forkjoin.Worker, n int, body func(i int)) {
			ForInit(w, n, func() *int { return new(int) }, func(last *int, i int) {
				check("ForInit", *last <= i) // a state sees increasing indices
				*last = i
				body(i)
			})
		},
		"MapInit": func(w *forkjoin.Worker, n int, body func(i int)) {
			got := MapInit(w, indices(n), func() *int { return new(int) }, func(_ *int, x int) int { body(x); return 2 * x })
			for i, x := range got {
				check("MapInit", x == 2*i)
			}
		},
		"ForW": func(w *forkjoin.Worker, n int, body func(i int)) {
			ForW(w, n, func(_ forkjoin.Runner, i int) { body(i) })
		},
		"ForRangeW": func(w *forkjoin.Worker, n int, body func(i int)) {
			ForRangeW(w, n, func(_ forkjoin.Runner, lo, hi int) { forBody(body, lo, hi) })
		},
		"ForErr": func(w *forkjoin.Worker, n int, body func(i int)) {
			check("ForErr", ForErr(w, n, func(i int) error { body(i); return nil }) == nil)
		},
		"ForContext": func(w *forkjoin.Worker, n int, body func(i int)) {
			err := ForContext(context.Background(), w, n, func(_ context.Context, i int) error { body(i); return nil })
			check("ForContext", err == nil)
		},
		"MapErr": func(w *forkjoin.Worker, n int, body func(i int)) {
			got, err := MapErr(w, indices(n), func(x int) (int, error) { body(x); return -x, nil })
			check("MapErr", err == nil && len(got) == n)
			for i, x := range got {
				check("MapErr", x == -i)
			}
		},
		"MapContext": func(w *forkjoin.Worker, n int, body func(i int)) {
			got, err := MapContext(context.Background(), w, indices(n), func(_ context.Context, x int) (int, error) {
				body(x)
				return -x, nil
			})
			check("MapContext", err == nil && len(got) == n)
			for i, x := range got {
				check("MapContext", x == -i)
			}
		},
		"ForChunks": func(w *forkjoin.Worker, n int, body func(i int)) {
			ForChunks(w, n, 1, func(lo, hi int) { forBody(body, lo, hi) })
		},
	}
}

// onceEach returns a comparator of elements 0..n-1 by key that calls
// body(i) the first time it sees element i, earlier argument first:
// MinFunc and MaxFunc compare some elements more than once (a piece's
// best again when pieces combine), and bodies must run once per index.
// slices.MinFunc, which the tests compare with, sees them all again: body
// is called only once, before it.
func onceEach(n int, body func(i int), key func(x int) int) func(a, b int) int {
	seen := make([]atomic.Bool, n)
	see := func(i int) {
		if !seen[i].Swap(true) {
			body(i)
		}
	}
	return func(a, b int) int {
		see(b)
		see(a)
		return cmp.Compare(key(a), key(b))
	}
}

// testSlackGone runs loop over 64 indices inside a task on a two-worker
// pool, with slack queued when the loop starts (see
// TestShortLoopSlackGoneGoesParallel), and fails if it hangs or if an
// index is not run exactly once. loop calls body(i) for every index i.
func testSlackGone(t *testing.T, loop func(w *forkjoin.Worker, n int, body func(i int))) {
	two := forkjoin.New(forkjoin.WithParallelism(2))
	t.Cleanup(two.Close)
	var stop atomic.Bool
	t.Cleanup(func() { stop.Store(true) }) // runs first: frees a hung index
	var running atomic.Int32
	var seenTwo atomic.Bool
	var ran [64]atomic.Int32
	testenv.Within(t, "the loop", func() {
		inSlackTask(two, 64, func(w *forkjoin.Worker, gone func()) {
			loop(w, 64, func(i int) {
				ran[i].Add(1)
				if i == 0 {
					gone()
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
		})
	})
	for i := range ran {
		require.Equal(t, int32(1), ran[i].Load(), "index %d", i)
	}
}

// inSlackTask runs loop inside a task on two, a pool of two workers, at a
// moment when the task's worker has slack queued for a loop of n indices
// (smallInline true; it panics otherwise): the other worker is busy and
// the task has forked a sibling. gone, which loop may call from the
// caller's goroutine, any number of times, ends the slack: it frees the
// other worker and returns once that worker has stolen and run the
// sibling. inSlackTask returns once the other worker is free again.
func inSlackTask(two *forkjoin.Pool, n int, loop func(w *forkjoin.Worker, gone func())) {
	release, busy := make(chan struct{}), make(chan struct{})
	var freed sync.Once
	free := func() { freed.Do(func() { close(release) }) }
	defer free()
	// A compensating worker that an earlier loop's Block started (a probe
	// waiting for its helper) lives until it is between two tasks or
	// finds no work, idle meanwhile here, and an idle worker is no slack:
	// wait until it has gone (callers hold a hang limit).
	for two.Stats().Workers > two.Parallelism() {
		runtime.Gosched()
	}
	if err := two.Execute(func(*forkjoin.Worker) { close(busy); <-release }); err != nil {
		panic(err)
	}
	<-busy
	forkjoin.Invoke(two, func(w *forkjoin.Worker) struct{} {
		stolen := make(chan struct{})
		f := forkjoin.Fork(w, func(*forkjoin.Worker) int { close(stolen); return 1 })
		if !smallInline(w, n, 0) {
			panic(fmt.Sprintf("no slack at the loop's start: the test does not test the gate (surplus %d, %v)", w.Surplus(), two.Stats()))
		}
		loop(w, func() { free(); <-stolen })
		free() // gone not called: w joins its own sibling
		f.Join(w)
		return struct{}{}
	})
}
