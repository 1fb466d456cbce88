package magpie

import (
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// countSeq yields 0..n-1 and records what happened to it: how many
// elements it yielded, whether a yield returned false, whether it ran to
// its end, and whether a panic went through it.
type seqProbe struct {
	pulled  atomic.Int64
	refused atomic.Bool
	ended   atomic.Bool
	unwound atomic.Bool
}

func (p *seqProbe) seq(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		normal := false
		defer func() {
			if !normal {
				p.unwound.Store(true)
			}
		}()
		for i := range n {
			p.pulled.Add(1)
			if !yield(i) {
				p.refused.Store(true)
				normal = true
				return
			}
		}
		p.ended.Store(true)
		normal = true
	}
}

// TestForSeq: every element is passed to body exactly once, for every
// size 0..300 and larger ones, every runner kind and grain.
func TestForSeq(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		hits := make([]int32, n)
		var sp seqProbe
		ForSeq(r, sp.seq(n), func(i int) { atomic.AddInt32(&hits[i], 1) }, opts...)
		for i, h := range hits {
			if h != 1 {
				return fmt.Errorf("element %d passed %d times", i, h)
			}
		}
		if !sp.ended.Load() || sp.refused.Load() {
			return errors.New("seq not pulled to its end")
		}
		return nil
	})
}

// TestMapSeq: the results are f of the elements, in the order of seq, for
// every size 0..300 and larger ones, every runner kind and grain.
func TestMapSeq(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		var sp seqProbe
		got := slices.Collect(MapSeq(r, sp.seq(n), func(i int) int { return i*3 + 1 }, opts...))
		if len(got) != n {
			return fmt.Errorf("%d results", len(got))
		}
		for i, v := range got {
			if v != i*3+1 {
				return fmt.Errorf("result %d = %d", i, v)
			}
		}
		return nil
	})
}

// spinFor burns about d of CPU: a body expensive enough for the adaptive
// path to leave its probe and hand chunks to the pool.
func spinFor(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// TestForSeqAdaptiveLarge: a loop long enough to leave the probe, with a
// body of a few microseconds, on a 2-worker pool from outside and inside.
func TestForSeqAdaptiveLarge(t *testing.T) {
	n := 20_000
	if testenv.Race {
		n = 2_000
	}
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	check := func(r forkjoin.Runner) {
		hits := make([]int32, n)
		ForSeq(r, (&seqProbe{}).seq(n), func(i int) {
			spinFor(time.Microsecond)
			atomic.AddInt32(&hits[i], 1)
		})
		for i, h := range hits {
			require.EqualValues(t, 1, h, "element %d", i)
		}
		got := slices.Collect(MapSeq(r, (&seqProbe{}).seq(n), func(i int) int { spinFor(time.Microsecond); return -i }))
		require.Len(t, got, n)
		for i, v := range got {
			require.Equal(t, -i, v)
		}
	}
	testenv.Within(t, "ForSeq from outside", func() { check(p) })
	testenv.Within(t, "ForSeq on a worker", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int { check(w); return 0 })
	})
}

// TestForSeqRunsInParallel: body(0) waits until body(1) has run, which
// terminates only if two chunks run at once (Grain(1): one element each).
// Whoever runs chunk 0, the caller or a worker, another goroutine must run
// chunk 1.
func TestForSeqRunsInParallel(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	testenv.Within(t, "body(0) waiting for body(1)", func() {
		var one atomic.Bool
		ForSeq(p, (&seqProbe{}).seq(2), func(i int) {
			if i == 1 {
				one.Store(true)
				return
			}
			for !one.Load() {
				time.Sleep(10 * time.Microsecond)
			}
		}, Grain(1))
	})
}

// TestForSeqBoundedInFlight: the number of elements pulled whose body has
// not returned never exceeds (2·P + 1)·g, the documented bound, with a
// slow body that keeps the ring full.
func TestForSeqBoundedInFlight(t *testing.T) {
	const par, g = 2, 8
	p := forkjoin.New(forkjoin.WithParallelism(par))
	defer p.Close()
	var pulled, finished, worst atomic.Int64
	seq := func(yield func(int) bool) {
		for i := range 3000 {
			held := pulled.Add(1) - finished.Load()
			worst.Store(max(worst.Load(), held))
			if !yield(i) {
				return
			}
		}
	}
	testenv.Within(t, "ForSeq", func() {
		ForSeq(p, seq, func(int) {
			spinFor(2 * time.Microsecond)
			finished.Add(1)
		}, Grain(g))
	})
	require.EqualValues(t, 3000, finished.Load())
	require.LessOrEqual(t, worst.Load(), int64((2*par+1)*g))
}

// TestMapSeqBoundedInFlight: MapSeq's bound, as TestForSeqBoundedInFlight
// ForSeq's: with a consumer slower than f, the elements pulled and not yet
// consumed never exceed (2·P + 1)·g (the chunks held, with their results),
// on 2 and 4 workers.
func TestMapSeqBoundedInFlight(t *testing.T) {
	const g = 8
	for _, par := range []int{2, 4} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var pulled, consumed, worst atomic.Int64
		seq := func(yield func(int) bool) {
			for i := range 3000 {
				held := pulled.Add(1) - consumed.Load()
				worst.Store(max(worst.Load(), held))
				if !yield(i) {
					return
				}
			}
		}
		testenv.Within(t, "MapSeq", func() {
			next := 0
			for v := range MapSeq(p, seq, func(i int) int { return i }, Grain(g)) {
				require.Equal(t, next, v)
				next++
				spinFor(5 * time.Microsecond)
				consumed.Add(1)
			}
			require.Equal(t, 3000, next)
		})
		p.Close()
		require.LessOrEqual(t, worst.Load(), int64((2*par+1)*g), "P=%d", par)
	}
}

// TestMapSeqEarlyStop: a consumer that breaks after k results stops the
// producer (the seq's yield returns false, the seq returns before the loop
// statement ends), no call of f is running once the loop has ended, the
// seq was pulled at most (2·P + 1)·g elements past the break, and no
// goroutine is left behind.
func TestMapSeqEarlyStop(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const par, g = 2, 4
	p := forkjoin.New(forkjoin.WithParallelism(par))
	defer p.Close()
	for _, k := range []int{0, 1, 3, 4, 5, 17, 100, 999} {
		for _, opts := range [][]Option{{Grain(g)}, nil} {
			var sp seqProbe
			var running atomic.Int32
			f := func(i int) int {
				running.Add(1)
				defer running.Add(-1)
				spinFor(time.Microsecond)
				return i
			}
			testenv.Within(t, "MapSeq with break", func() {
				got := 0
				for v := range MapSeq(p, sp.seq(1_000_000), f, opts...) {
					require.Equal(t, got, v)
					if got == k {
						break
					}
					got++
				}
				require.Zero(t, running.Load(), "f still running after the loop")
				require.True(t, sp.refused.Load(), "the seq's yield did not return false")
				require.False(t, sp.ended.Load())
				if opts != nil {
					require.LessOrEqual(t, sp.pulled.Load(), int64(k+1+(2*par+1)*g))
				}
			})
		}
	}
}

// TestSeqBodyPanics: a panic in body or f stops the pulling through yield's
// false (nothing unwinds through the seq), arrives as a *PanicError holding
// the value, and no call is running any more when it arrives; on every
// path (probe on the caller, chunks on the pool, one worker).
func TestSeqBodyPanics(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	single := forkjoin.New(forkjoin.WithParallelism(1))
	defer single.Close()
	n := 5000
	for _, k := range runnerKinds(p, single) {
		for _, g := range grainOpts {
			for _, bad := range []int{0, 10, n - 1} {
				for _, mapSeq := range []bool{false, true} {
					var sp seqProbe
					var running atomic.Int32
					body := func(i int) int {
						running.Add(1)
						defer running.Add(-1)
						if i == bad {
							panic("boom")
						}
						return i
					}
					var v any
					testenv.Within(t, "panicking loop", func() {
						k.call(func(r forkjoin.Runner) {
							defer func() { v = recover() }()
							if mapSeq {
								for range MapSeq(r, sp.seq(n), body, g.opts...) {
								}
							} else {
								ForSeq(r, sp.seq(n), func(i int) { body(i) }, g.opts...)
							}
						})
					})
					name := fmt.Sprintf("%s/%s/bad=%d/map=%v", k.name, g.name, bad, mapSeq)
					pe, ok := v.(*forkjoin.PanicError)
					require.True(t, ok, "%s: recovered %#v", name, v)
					require.Equal(t, "boom", pe.Value, name)
					require.Zero(t, running.Load(), name)
					require.False(t, sp.unwound.Load(), "%s: the panic went through the seq", name)
					if bad < n-1 {
						require.True(t, sp.refused.Load(), "%s: the seq's yield did not return false", name)
					}
				}
			}
		}
	}
}

// TestSeqSourcePanics: a panic in the seq itself, or in the loop's body
// ranging over MapSeq, propagates with its own value once no chunk is
// running.
func TestSeqSourcePanics(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	var running atomic.Int32
	work := func(i int) int {
		running.Add(1)
		defer running.Add(-1)
		spinFor(time.Microsecond)
		return i
	}
	bad := func(yield func(int) bool) {
		for i := range 3000 {
			if i == 2500 {
				panic("seq broke")
			}
			if !yield(i) {
				return
			}
		}
	}
	for _, opts := range [][]Option{nil, {Grain(16)}} {
		testenv.Within(t, "seq panics", func() {
			require.PanicsWithValue(t, "seq broke", func() { ForSeq(p, bad, func(i int) { work(i) }, opts...) })
			require.Zero(t, running.Load())
			require.PanicsWithValue(t, "seq broke", func() {
				for range MapSeq(p, bad, work, opts...) {
				}
			})
			require.Zero(t, running.Load())
			require.PanicsWithValue(t, "consumer broke", func() {
				for v := range MapSeq(p, (&seqProbe{}).seq(3000), work, opts...) {
					if v == 2000 {
						panic("consumer broke")
					}
				}
			})
			require.Zero(t, running.Load())
		})
	}
}

// TestForSeqNested: body calls back into the pool (For, and ForSeq itself,
// with the *Pool), and ForSeq runs from tasks with the *Pool on every
// worker at once, on pools of one and two workers: nothing deadlocks, since
// a caller never sleeps on a chunk no task has started.
func TestForSeqNested(t *testing.T) {
	for _, par := range []int{1, 2} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var total atomic.Int64
		inner := func() {
			ForSeq(p, (&seqProbe{}).seq(50), func(int) {
				For(p, 8, func(int) { total.Add(1) }, Grain(1))
			}, Grain(1))
		}
		testenv.Within(t, fmt.Sprintf("nested ForSeq, %d workers", par), func() {
			// From outside, each element's body starting inner loops.
			ForSeq(p, (&seqProbe{}).seq(6), func(int) { inner() }, Grain(1))
			// From every worker at once, with the *Pool.
			fns := make([]func(), 2*par)
			for i := range fns {
				fns[i] = inner
			}
			Do(p, fns...)
			// From a task, with its *Worker, bodies calling the pool.
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				ForSeq(w, (&seqProbe{}).seq(6), func(int) { inner() }, Grain(1))
				for range MapSeq(w, (&seqProbe{}).seq(6), func(int) int { inner(); return 0 }, Grain(1)) {
				}
				return 0
			})
		})
		require.EqualValues(t, (6+2*par+12)*50*8, total.Load())
		p.Close()
	}
}

// TestForSeqRefusedChunks: a pool that refuses chunks (a queue bounded by
// WithMaxQueued, a pool closed while the loop runs, or one closed before
// the call) gets the chunks run by the caller. On 2bbbbe3 a pool closed
// before the call made ForSeq and MapSeq panic with ErrClosed.
func TestForSeqRefusedChunks(t *testing.T) {
	for _, kind := range []string{"bounded", "closing", "closed"} {
		newPool := func() *forkjoin.Pool {
			switch kind {
			case "bounded":
				return forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxQueued(1))
			case "closed":
				p := forkjoin.New(forkjoin.WithParallelism(2))
				p.Close()
				return p
			}
			return forkjoin.New(forkjoin.WithParallelism(2))
		}
		// closeAt closes p when the seq yields element 10, on the caller.
		closeAt := func(p *forkjoin.Pool, seq iter.Seq[int]) iter.Seq[int] {
			return func(yield func(int) bool) {
				for i := range seq {
					if i == 10 && kind == "closing" {
						p.Close()
					}
					if !yield(i) {
						return
					}
				}
			}
		}
		p := newPool()
		var sum atomic.Int64
		testenv.Within(t, "ForSeq on a refusing pool", func() {
			ForSeq(p, closeAt(p, (&seqProbe{}).seq(1000)), func(i int) { sum.Add(int64(i)) }, Grain(3))
		})
		require.EqualValues(t, 999*1000/2, sum.Load(), kind)
		p.Close()
		p = newPool()
		got := slices.Collect(MapSeq(p, closeAt(p, (&seqProbe{}).seq(1000)), func(i int) int { return i }, Grain(3)))
		require.Equal(t, 1000, len(got), kind)
		require.True(t, slices.IsSorted(got), kind)
		p.Close()
	}
}

// TestSeqNilArguments: the nil-function messages, checked when MapSeq is
// called, not when its result is ranged over.
func TestSeqNilArguments(t *testing.T) {
	seq := (&seqProbe{}).seq(3)
	require.PanicsWithValue(t, "magpie: ForSeq called with a nil seq", func() { ForSeq[int](nil, nil, func(int) {}) })
	require.PanicsWithValue(t, "magpie: ForSeq called with a nil body", func() { ForSeq(nil, seq, nil) })
	require.PanicsWithValue(t, "magpie: MapSeq called with a nil seq", func() { MapSeq[int, int](nil, nil, func(int) int { return 0 }) })
	require.PanicsWithValue(t, "magpie: MapSeq called with a nil function", func() { MapSeq[int, int](nil, seq, nil) })
}

// TestForSeqNoStaleTasks: while every worker is busy (each is itself a
// ForSeq caller, with Grain(1), so the callers take back most chunks),
// the submission queue holds at most the window of tasks of each loop,
// 2·P per loop, however long the seq. (Before the fix every chunk taken
// back left a no-op task queued: the reviewer saw 99,516.)
func TestForSeqNoStaleTasks(t *testing.T) {
	const par = 2
	n := 50_000
	if testenv.Race {
		n = 5_000
	}
	p := forkjoin.New(forkjoin.WithParallelism(par))
	defer p.Close()
	var worst atomic.Int64
	var ready, done sync.WaitGroup
	ready.Add(par)
	done.Add(par)
	for range par {
		require.NoError(t, p.Execute(func(w *forkjoin.Worker) { // every worker a ForSeq caller
			defer done.Done()
			ready.Done()
			ready.Wait()
			var i atomic.Int64
			ForSeq(w, (&seqProbe{}).seq(n), func(int) {
				if i.Add(1)%100 == 0 {
					q := int64(p.Stats().Queued)
					for m := worst.Load(); q > m && !worst.CompareAndSwap(m, q); m = worst.Load() {
					}
				}
			}, Grain(1))
		}))
	}
	testenv.Within(t, "a ForSeq on every worker", done.Wait)
	t.Logf("most tasks queued: %d", worst.Load())
	require.LessOrEqual(t, worst.Load(), int64(par*2*par))
}

// TestForSeqBoundedQueueAfterReturn: with both workers blocked, a ForSeq
// runs on its caller; once it has returned, at most its window (2·P) of
// no-op tasks stay queued, so a WithMaxQueued(64) queue still accepts an
// unrelated Execute. (Before the fix the stale tasks filled the queue.)
func TestForSeqBoundedQueueAfterReturn(t *testing.T) {
	const par = 2
	p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMaxQueued(64))
	defer p.Close()
	release := make(chan struct{})
	started := make(chan struct{}, par)
	for range par { // both workers blocked (a long task, a blocking read)
		require.NoError(t, p.Execute(func(*forkjoin.Worker) { started <- struct{}{}; <-release }))
	}
	for range par {
		<-started
	}
	var sum atomic.Int64
	testenv.Within(t, "ForSeq with the workers blocked", func() {
		ForSeq(p, (&seqProbe{}).seq(10_000), func(i int) { sum.Add(int64(i)) }, Grain(1))
	})
	q := p.Stats().Queued
	err := p.Execute(func(*forkjoin.Worker) {})
	close(release)
	require.EqualValues(t, 9_999*10_000/2, sum.Load())
	require.LessOrEqual(t, q, 2*par, "no-op tasks left queued (the documented 2·P)")
	require.NoError(t, err, "an unrelated Execute after ForSeq returned")
}

// speculativePanic is f for the MapSeq panic tests: with Grain(10), chunk
// 1 (elements 10..19) panics at 15, and every call of chunk 0 waits until
// it has, so the panic is always recorded before the consumer has seen
// element 0. Chunk 1 always runs: the caller never sleeps on a queued
// chunk, and chunk 0 cannot finish first.
func speculativePanic(panicked *atomic.Bool) func(int) int {
	return func(x int) int {
		if x == 15 {
			panicked.Store(true)
			panic("speculative")
		}
		for x < 10 && !panicked.Load() {
			runtime.Gosched()
		}
		return x
	}
}

// TestMapSeqPanicAfterBreak: a consumer that breaks at the first result
// never reaches the element whose f panicked (f ran ahead of it), so the
// range ends without a panic, as the sequential loop would. (Before the
// fix the panic ended the range, and the consumer never saw element 0.)
func TestMapSeqPanicAfterBreak(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	for range 20 {
		var panicked atomic.Bool
		var got []int
		testenv.Within(t, "MapSeq with a break before the panic", func() {
			for v := range MapSeq(p, (&seqProbe{}).seq(1000), speculativePanic(&panicked), Grain(10)) {
				got = append(got, v)
				break
			}
		})
		require.True(t, panicked.Load())
		require.Equal(t, []int{0}, got)
	}
}

// TestMapSeqPanicInOrder: a panic recorded ahead of the consumer is raised
// when the consumer reaches the panicking element, after every result
// before it, in order.
func TestMapSeqPanicInOrder(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	for range 20 {
		var panicked atomic.Bool
		var got []int
		var v any
		testenv.Within(t, "MapSeq panicking at 15", func() {
			defer func() { v = recover() }()
			for x := range MapSeq(p, (&seqProbe{}).seq(1000), speculativePanic(&panicked), Grain(10)) {
				got = append(got, x)
			}
		})
		pe, ok := v.(*forkjoin.PanicError)
		require.True(t, ok, "recovered %#v", v)
		require.Equal(t, "speculative", pe.Value)
		require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, got)
	}
}

// TestSeqPulledOnCallingGoroutine: ForSeq and MapSeq pull seq on the
// goroutine that calls ForSeq or ranges over MapSeq's result, never on a
// worker running chunks: from outside and from a task (with its *Worker and
// with the *Pool), with chunks of one element (Grain(1)) and adaptive ones
// past the probe, while a slow body keeps the pool busy.
func TestSeqPulledOnCallingGoroutine(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	n := 3000
	if testenv.Race {
		n = 600
	}
	// seq yields 0..n-1 and records every goroutine it was pulled on.
	seq := func(pullers *sync.Map) iter.Seq[int] {
		return func(yield func(int) bool) {
			for i := range n {
				pullers.Store(goroutineID(), true)
				if !yield(i) {
					return
				}
			}
		}
	}
	body := func(int) { spinFor(20 * time.Microsecond) }
	check := func(what string, r forkjoin.Runner, opts []Option) {
		caller := goroutineID()
		for _, mapSeq := range []bool{false, true} {
			var pullers sync.Map
			if mapSeq {
				got := 0
				for range MapSeq(r, seq(&pullers), func(i int) int { body(i); return i }, opts...) {
					got++
				}
				require.Equal(t, n, got, what)
			} else {
				ForSeq(r, seq(&pullers), body, opts...)
			}
			pullers.Range(func(g, _ any) bool {
				require.Equal(t, caller, g, "%s, MapSeq %v: seq pulled on goroutine %s, not the caller's", what, mapSeq, g)
				return true
			})
		}
	}
	for _, opts := range [][]Option{{Grain(1)}, nil} {
		testenv.Within(t, "from outside", func() { check("from outside", p, opts) })
		testenv.Within(t, "from a task", func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				check("from a task, its *Worker", w, opts)
				check("from a task, the *Pool", p, opts)
				return 0
			})
		})
	}
}
