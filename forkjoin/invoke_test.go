package forkjoin_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"

	"github.com/magpie-go/magpie/internal/testenv"
)

func TestOptions(t *testing.T) {
	cases := []struct {
		opts []forkjoin.Option
		par  int
		mode forkjoin.Mode
	}{
		{nil, runtime.GOMAXPROCS(0), forkjoin.LIFO},
		{[]forkjoin.Option{forkjoin.WithParallelism(0)}, runtime.GOMAXPROCS(0), forkjoin.LIFO},
		{[]forkjoin.Option{forkjoin.WithParallelism(-3)}, runtime.GOMAXPROCS(0), forkjoin.LIFO},
		{[]forkjoin.Option{forkjoin.WithParallelism(3), forkjoin.WithMode(forkjoin.FIFO)}, 3, forkjoin.FIFO},
		{[]forkjoin.Option{forkjoin.WithParallelism(forkjoin.MaxParallelism + 1)}, forkjoin.MaxParallelism, forkjoin.LIFO},
	}
	for _, c := range cases {
		if testenv.Race && c.par == forkjoin.MaxParallelism {
			continue // 1024 goroutines under the race detector take seconds
		}
		p := forkjoin.New(c.opts...)
		require.Equal(t, c.par, p.Parallelism())
		require.Equal(t, c.mode, p.Mode())
		require.Equal(t, c.par, p.Stats().Workers)
		within(t, "Close", p.Close)
	}
	// An invalid mode is rejected when the pool is built, before any
	// goroutine starts.
	require.Panics(t, func() { forkjoin.New(forkjoin.WithMode(forkjoin.Mode(7))) })
	require.Equal(t, "LIFO", forkjoin.LIFO.String())
	require.Equal(t, "FIFO", forkjoin.FIFO.String())
	require.Equal(t, "Mode(7)", forkjoin.Mode(7).String())
}

// TestWorkerIdentity checks that tasks see their own pool's workers, with
// every index in 0..Parallelism()-1 in use.
func TestWorkerIdentity(t *testing.T) {
	const par = 3
	p := forkjoin.New(forkjoin.WithParallelism(par))
	defer closePool(t, p)
	var mu sync.Mutex
	seen := map[int]bool{}
	foreign := 0 // tasks that saw another pool
	var wg sync.WaitGroup
	// Each task blocks until all workers hold one, so every index shows up.
	var barrier sync.WaitGroup
	barrier.Add(par)
	for i := 0; i < par; i++ {
		wg.Add(1)
		require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
			defer wg.Done()
			mu.Lock()
			if w.Pool() != p {
				foreign++
			}
			seen[w.Index()] = true
			mu.Unlock()
			barrier.Done()
			barrier.Wait()
		}))
	}
	within(t, "tasks", wg.Wait)
	require.Zero(t, foreign, "w.Pool() is not the pool running the task")
	for i := 0; i < par; i++ {
		require.True(t, seen[i], "worker index %d never seen: %v", i, seen)
	}
}

// TestSurplus checks Surplus where it is deterministic: on one worker no
// thief is idle, so it equals the number of own queued tasks.
func TestSurplus(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	var got []int
	within(t, "Surplus", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			got = append(got, w.Surplus())
			fs := make([]*forkjoin.Future[int], 5)
			for i := range fs {
				fs[i] = forkjoin.Fork(w, func(*forkjoin.Worker) int { return i })
			}
			got = append(got, w.Surplus())
			fs[4].Join(w)
			got = append(got, w.Surplus())
			for _, f := range fs {
				f.Join(w)
			}
			got = append(got, w.Surplus())
			return 0
		})
	})
	require.Equal(t, []int{0, 5, 4, 0}, got)
}

func TestDefaultPool(t *testing.T) {
	d := forkjoin.Default()
	require.Same(t, d, forkjoin.Default())
	require.Equal(t, runtime.GOMAXPROCS(0), d.Parallelism())
	require.Equal(t, forkjoin.LIFO, d.Mode())
	d.Close() // a no-op for the shared pool
	var got int
	var pool *forkjoin.Pool
	within(t, "Invoke on Default after Close", func() {
		got = forkjoin.Invoke(d, func(w *forkjoin.Worker) int {
			pool = w.Pool()
			return fibJoin(w, 15)
		})
	})
	require.Equal(t, fibSeq(15), got)
	require.Same(t, d, pool)
	require.NoError(t, d.Execute(func(*forkjoin.Worker) {}))
	require.Equal(t, d.Parallelism(), d.Stats().Workers)
}

// TestRun checks the bridge: inline on a worker, Invoke on a pool, the
// Default pool for nil.
func TestRun(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)

	var onPool *forkjoin.Pool
	within(t, "Run(pool)", func() {
		onPool = forkjoin.Run(p, func(w *forkjoin.Worker) *forkjoin.Pool { return w.Pool() })
	})
	require.Same(t, p, onPool)

	var same bool
	within(t, "Run(worker)", func() {
		same = forkjoin.Invoke(p, func(w *forkjoin.Worker) bool {
			return forkjoin.Run(w, func(w2 *forkjoin.Worker) bool { return w2 == w })
		})
	})
	require.True(t, same, "Run on a worker must run inline on that worker")

	within(t, "Run(nil)", func() {
		onPool = forkjoin.Run(nil, func(w *forkjoin.Worker) *forkjoin.Pool { return w.Pool() })
	})
	require.Same(t, forkjoin.Default(), onPool)
	var nilPool *forkjoin.Pool
	within(t, "Run(nil *Pool)", func() {
		onPool = forkjoin.Run(nilPool, func(w *forkjoin.Worker) *forkjoin.Pool { return w.Pool() })
	})
	require.Same(t, forkjoin.Default(), onPool)

	var nilWorker *forkjoin.Worker
	require.Panics(t, func() { forkjoin.Run(nilWorker, func(*forkjoin.Worker) int { return 0 }) })
}

func TestNilArguments(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	require.Panics(t, func() { _ = p.Execute(nil) })
	require.Panics(t, func() { forkjoin.Submit[int](p, nil) })
	require.Panics(t, func() { forkjoin.Invoke[int](p, nil) })
	require.Panics(t, func() { forkjoin.Fork(nil, func(*forkjoin.Worker) int { return 0 }) })
	require.Panics(t, func() {
		forkjoin.Join(nil, func(*forkjoin.Worker) int { return 0 }, func(*forkjoin.Worker) int { return 0 })
	})
	var caught []any
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
		caught = append(caught,
			recoverPanic(func() { forkjoin.Fork[int](w, nil) }),
			recoverPanic(func() { forkjoin.Join[int, int](w, nil, func(*forkjoin.Worker) int { return 0 }) }),
			recoverPanic(func() { forkjoin.Join[int, int](w, func(*forkjoin.Worker) int { return 0 }, nil) }))
		return 0
	})
	for i, c := range caught {
		require.NotNil(t, c, "call %d should have panicked", i)
	}
	// The pool is unharmed.
	require.Equal(t, fibSeq(10), forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibJoin(w, 10) }))
}

// TestInvokeFromOwnTask calls Invoke (and Submit+Join) on a pool from
// inside one of its own tasks at parallelism 1, where blocking the only
// worker would deadlock: Invoke must run inline.
func TestInvokeFromOwnTask(t *testing.T) {
	for _, par := range []int{1, 2} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var got, nested int
		within(t, "Invoke inside Invoke", func() {
			got = forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				return forkjoin.Invoke(p, func(w2 *forkjoin.Worker) int {
					nested = forkjoin.Invoke(p, func(w3 *forkjoin.Worker) int { return fibJoin(w3, 12) })
					return fibJoin(w2, 15)
				})
			})
		})
		require.Equal(t, fibSeq(15), got)
		require.Equal(t, fibSeq(12), nested)

		// A Submit from inside, joined with helping: the joiner runs the
		// submission itself if nobody else does.
		within(t, "Submit+Join inside", func() {
			got = forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				f := forkjoin.Submit(p, func(w *forkjoin.Worker) int { return fibJoin(w, 15) })
				return f.Join(w)
			})
		})
		require.Equal(t, fibSeq(15), got)

		// Invoke from inside an Execute task and from a forked task.
		done := make(chan int, 1)
		require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
			f := forkjoin.Fork(w, func(*forkjoin.Worker) int {
				return forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibJoin(w, 10) })
			})
			done <- f.Join(w)
		}))
		within(t, "Invoke inside Execute", func() { got = <-done })
		require.Equal(t, fibSeq(10), got)
		within(t, "Close", p.Close)
	}
}

// TestNestedPools has tasks of pool A invoke pool B (and B's tasks fork),
// from many A tasks at once.
func TestNestedPools(t *testing.T) {
	for _, par := range []int{1, 2, 4} {
		a := forkjoin.New(forkjoin.WithParallelism(par))
		b := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(forkjoin.FIFO))
		var got int
		within(t, "nested", func() {
			got = forkjoin.Invoke(a, func(w *forkjoin.Worker) int {
				x, y := forkjoin.Join(w,
					func(*forkjoin.Worker) int {
						return forkjoin.Invoke(b, func(wb *forkjoin.Worker) int {
							if wb.Pool() != b {
								panic("task of B runs on a worker of another pool")
							}
							return fibJoin(wb, 15)
						})
					},
					func(w *forkjoin.Worker) int {
						return forkjoin.Run(b, func(wb *forkjoin.Worker) int { return fibTask(14).Compute(wb) }) +
							fibJoin(w, 10)
					})
				return x + y
			})
		})
		require.Equal(t, fibSeq(15)+fibSeq(14)+fibSeq(10), got)
		within(t, "Close B", b.Close)
		within(t, "Close A", a.Close)
	}
}

// TestConcurrentInvokes has 64 goroutines invoke the same pool at once.
func TestConcurrentInvokes(t *testing.T) {
	for _, par := range []int{1, 2, 4} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		const goroutines = 64
		results := make([]int, goroutines)
		var wg sync.WaitGroup
		within(t, "64 invokers", func() {
			for g := 0; g < goroutines; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := 5 + g%12
					for r := 0; r < 5; r++ {
						results[g] += forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibJoin(w, n) })
					}
				}()
			}
			wg.Wait()
		})
		for g, r := range results {
			require.Equal(t, 5*fibSeq(5+g%12), r, "goroutine %d", g)
		}
		within(t, "Close", p.Close)
		require.EqualValues(t, goroutines*5, p.Stats().Submitted)
	}
}
