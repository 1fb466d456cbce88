package main

// The workloads, with the parameters and inputs that Cross.java and
// rust/src/main.rs use too (bench/cross/README.md has the table of them).
// Each builder returns the implementations to time at the given pool size:
// the sequential ones only with one worker.

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

const (
	fibFine   = 30         // fib30: fork at every level (n >= 2)
	fibCoarse = 40         // fib40: fork while n >= fibCutoff
	fibCutoff = 20         // below this n, fib40 recurses sequentially
	sortN     = 10_000_000 // sort: int64 from splitmix64(42), full range
	sumN      = 10_000_000 // sum: int64 from splitmix64(42) >> 32
	tasksN    = 1_000_000  // tasks: out[i] = i*i + 1, submitted one by one
	spawnN    = 1_000_000  // spawn: the same job, spawned from inside one pool task
	chanCap   = 1024       // tasks: the channel pool's buffer
)

var workloads = map[string]func(p *forkjoin.Pool, workers int) []impl{
	"fib30": func(p *forkjoin.Pool, workers int) []impl { return fibImpls(p, workers, fibFine, 0, 832040) },
	"fib40": func(p *forkjoin.Pool, workers int) []impl {
		return fibImpls(p, workers, fibCoarse, fibCutoff, 102334155)
	},
	"sort":  sortImpls,
	"sum":   sumImpls,
	"tasks": tasksImpls,
	"spawn": spawnImpls,
}

// seqOnly returns impls with seq in front when the process has one worker.
func seqOnly(workers int, seq impl, impls ...impl) []impl {
	if workers == 1 {
		return append([]impl{seq}, impls...)
	}
	return impls
}

// --- fib: naive recursion, forking at every level above cutoff ---

func fibSeq(n int) int {
	if n < 2 {
		return n
	}
	return fibSeq(n-1) + fibSeq(n-2)
}

// fibTask is the typed task for task.InvokeBoth (which inlines to
// forkjoin.JoinTasks): stored unboxed in a recycled node, so a fork nobody
// steals allocates nothing. It is magpie's cheapest public fork.
type fibTask struct{ n, cutoff int }

func (t fibTask) Compute(w *forkjoin.Worker) int {
	if t.n < 2 || t.n < t.cutoff {
		return fibSeq(t.n)
	}
	a, b := task.InvokeBoth[int, int](w, fibTask{t.n - 1, t.cutoff}, fibTask{t.n - 2, t.cutoff})
	return a + b
}

// fibJoin forks closures with forkjoin.Join, the shape of rayon::join: the
// convenient form, which allocates the forked closure.
func fibJoin(w *forkjoin.Worker, n, cutoff int) int {
	if n < 2 || n < cutoff {
		return fibSeq(n)
	}
	a, b := forkjoin.Join(w,
		func(w *forkjoin.Worker) int { return fibJoin(w, n-1, cutoff) },
		func(w *forkjoin.Worker) int { return fibJoin(w, n-2, cutoff) })
	return a + b
}

// fibWaitGroup is the plain Go way: a goroutine per fork.
func fibWaitGroup(n, cutoff int) int {
	if n < 2 || n < cutoff {
		return fibSeq(n)
	}
	var wg sync.WaitGroup
	var x int
	wg.Go(func() { x = fibWaitGroup(n-1, cutoff) })
	y := fibWaitGroup(n-2, cutoff)
	wg.Wait()
	return x + y
}

func fibImpls(p *forkjoin.Pool, workers, n, cutoff, want int) []impl {
	check := func(name string, fn func() int) impl {
		return impl{name: name, once: name == "waitgroup" && cutoff == 0, run: func() time.Duration {
			var got int
			d := timed(func() { got = fn() })
			if got != want {
				fail("go fib: " + name + " returned a wrong value")
			}
			return d
		}}
	}
	return seqOnly(workers,
		check("seq", func() int { return fibSeq(n) }),
		check("magpie", func() int { return forkjoin.Invoke(p, fibTask{n, cutoff}.Compute) }),
		check("magpie-join", func() int {
			return forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibJoin(w, n, cutoff) })
		}),
		check("waitgroup", func() int { return fibWaitGroup(n, cutoff) }),
	)
}

// --- sort: 10M uniformly random int64 ---

func sortImpls(p *forkjoin.Pool, workers int) []impl {
	input := make([]int64, sortN)
	seed := uint64(42)
	for i := range input {
		input[i] = int64(splitmix64(&seed))
	}
	s := make([]int64, sortN)
	check := func(name string, sort func([]int64)) impl {
		return impl{name: name, run: func() time.Duration {
			copy(s, input) // not timed
			d := timed(func() { sort(s) })
			if !slices.IsSorted(s) {
				fail("go sort: " + name + ": result not sorted")
			}
			return d
		}}
	}
	impls := seqOnly(workers,
		check("slices", slices.Sort[[]int64]),
		check("magpie", func(s []int64) { magpie.Sort(p, s) }))
	if workers > 1 {
		impls = append(impls, check("magpie-inplace", func(s []int64) { magpie.Sort(p, s, magpie.InPlace()) }))
	}
	return impls
}

// --- sum: 10M int64 below 2^32 (the sum cannot overflow) ---

func sumSeq(a []int64) int64 {
	var s int64
	for _, x := range a {
		s += x
	}
	return s
}

func add(a, b int64) int64 { return a + b }

func sumImpls(p *forkjoin.Pool, workers int) []impl {
	a := make([]int64, sumN)
	seed := uint64(42)
	for i := range a {
		a[i] = int64(splitmix64(&seed) >> 32)
	}
	want := sumSeq(a)
	check := func(name string, sum func() int64) impl {
		return impl{name: name, run: func() time.Duration {
			var got int64
			d := timed(func() { got = sum() })
			if got != want {
				fail("go sum: " + name + " returned a wrong sum")
			}
			return d
		}}
	}
	return seqOnly(workers,
		check("seq", func() int64 { return sumSeq(a) }),
		// Reduce calls fold through a function value per element.
		check("magpie-reduce", func() int64 { return magpie.Reduce(p, a, 0, add, add) }),
		// ForRange leaves the loop over a piece to the caller: the plain
		// loop per piece, one atomic add per piece.
		check("magpie-forrange", func() int64 {
			var total atomic.Int64
			magpie.ForRange(p, len(a), func(lo, hi int) { total.Add(sumSeq(a[lo:hi])) })
			return total.Load()
		}),
		// The plain Go way: one goroutine per worker, one chunk each.
		check("goroutines", func() int64 {
			part := make([]int64, workers) // part[g] written by goroutine g only
			var wg sync.WaitGroup
			for g := range workers {
				wg.Go(func() { part[g] = sumSeq(a[g*len(a)/workers : (g+1)*len(a)/workers]) })
			}
			wg.Wait()
			return sumSeq(part)
		}),
	)
}

// --- tasks: 1M tiny tasks submitted from one goroutine, then awaited ---

// tinyTask is the job: a store of a value computed from its index.
func tinyTask(out []int64, i int) { out[i] = int64(i)*int64(i) + 1 }

func tasksImpls(p *forkjoin.Pool, workers int) []impl {
	out := make([]int64, tasksN)
	check := func(name string, batch func()) impl {
		return impl{name: name, run: func() time.Duration {
			clear(out) // not timed
			d := timed(batch)
			for i, v := range out {
				if v != int64(i)*int64(i)+1 {
					fail("go tasks: " + name + ": a task did not run")
				}
			}
			return d
		}}
	}
	// The plain Go worker pool: GOMAXPROCS goroutines draining one shared
	// channel, started once like a pool that outlives the batch (never
	// stopped: the process exits after the last run).
	jobs := make(chan func(), chanCap)
	for range workers {
		go func() {
			for f := range jobs {
				f()
			}
		}()
	}
	return []impl{
		check("magpie", func() {
			var wg sync.WaitGroup
			wg.Add(tasksN)
			for i := range tasksN {
				if err := p.Execute(func(*forkjoin.Worker) { tinyTask(out, i); wg.Done() }); err != nil {
					fail("go tasks: Execute: " + err.Error())
				}
			}
			wg.Wait()
		}),
		check("channel", func() {
			var wg sync.WaitGroup
			wg.Add(tasksN)
			for i := range tasksN {
				jobs <- func() { tinyTask(out, i); wg.Done() }
			}
			wg.Wait()
		}),
	}
}

// --- spawn: 1M tiny tasks spawned from inside one pool task, then awaited ---

// spawnLeaf is the job as a typed task, for forkjoin.SpawnTask.
type spawnLeaf struct {
	out []int64
	i   int
}

func (l spawnLeaf) Compute(*forkjoin.Worker) { tinyTask(l.out, l.i) }

func spawnImpls(p *forkjoin.Pool, workers int) []impl {
	out := make([]int64, spawnN)
	check := func(name string, body func(s *forkjoin.Scope, w *forkjoin.Worker)) impl {
		return impl{name: name, run: func() time.Duration {
			clear(out) // not timed
			d := timed(func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
					forkjoin.RunScope(w, body)
					return 0
				})
			})
			for i, v := range out {
				if v != int64(i)*int64(i)+1 {
					fail("go spawn: " + name + ": a task did not run")
				}
			}
			return d
		}}
	}
	return []impl{
		// Scope.Spawn of a closure per task (it captures i and out: one
		// allocation each), the shape of rayon's scope.spawn.
		check("magpie", func(s *forkjoin.Scope, w *forkjoin.Worker) {
			for i := range spawnN {
				s.Spawn(w, func(*forkjoin.Worker) { tinyTask(out, i) })
			}
		}),
		// SpawnTask of a typed task, stored unboxed: no allocation per task.
		check("magpie-typed", func(s *forkjoin.Scope, w *forkjoin.Worker) {
			for i := range spawnN {
				forkjoin.SpawnTask(s, w, spawnLeaf{out, i})
			}
		}),
	}
}
