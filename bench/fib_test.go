package bench

import (
	"sync"
	"testing"

	"github.com/sourcegraph/conc"
	"golang.org/x/sync/errgroup"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// Fibonacci by naive recursion is the standard probe of fork cost: fib(30)
// forking at every level does almost no work per task, so time per fork is
// the scheduler's overhead; fib(40) with a cutoff of 25 is the same tree
// with coarse leaves, where the overhead vanishes and only speedup counts.

const (
	fibFine       = 30 // BenchmarkFib30: fork at every level
	fibCoarse     = 40 // BenchmarkFib40: fork above fibCoarseCutoff
	fibCoarseLeaf = 25 // below this n, recurse sequentially
)

var fibSink int

func benchFibSeq(n int) int {
	if n < 2 {
		return n
	}
	return benchFibSeq(n-1) + benchFibSeq(n-2)
}

// fibForks is the number of forks fib(n) makes when it forks at every
// level down to cutoff: the internal nodes of the call tree.
func fibForks(n, cutoff int) int {
	if n < 2 || n < cutoff {
		return 0
	}
	return 1 + fibForks(n-1, cutoff) + fibForks(n-2, cutoff)
}

// benchFibTask is the typed task: InvokeBoth stores it unboxed in a recycled node,
// so an un-stolen fork allocates nothing.
type benchFibTask struct{ n, cutoff int }

func (t benchFibTask) Compute(w *forkjoin.Worker) int {
	if t.n < 2 || t.n < t.cutoff {
		return benchFibSeq(t.n)
	}
	a, b := task.InvokeBoth[int, int](w, benchFibTask{t.n - 1, t.cutoff}, benchFibTask{t.n - 2, t.cutoff})
	return a + b
}

// fibJoin forks closures with forkjoin.Join: the convenient form, which
// allocates the forked closure.
func fibJoin(w *forkjoin.Worker, n int) int {
	if n < 2 {
		return n
	}
	a, b := forkjoin.Join(w,
		func(w *forkjoin.Worker) int { return fibJoin(w, n-1) },
		func(w *forkjoin.Worker) int { return fibJoin(w, n-2) })
	return a + b
}

// fibFuture forks a typed task and joins its Future, the shape of Java's
// RecursiveTask.fork()/join() and of task.Fork.
type fibFuture struct{ n int }

func (t fibFuture) Compute(w *forkjoin.Worker) int {
	if t.n < 2 {
		return t.n
	}
	f := task.Fork[int](w, fibFuture{t.n - 1})
	return fibFuture{t.n - 2}.Compute(w) + f.Join(w)
}

// The goroutine baselines for fib(30) are written out by hand, as a user
// would, so that no adapter adds to their per-fork cost.

func fibWaitGroup(n int) int {
	if n < 2 {
		return n
	}
	var wg sync.WaitGroup
	var x int
	wg.Go(func() { x = fibWaitGroup(n - 1) })
	y := fibWaitGroup(n - 2)
	wg.Wait()
	return x + y
}

func fibErrGroup(n int) int {
	if n < 2 {
		return n
	}
	var g errgroup.Group
	var x int
	g.Go(func() error { x = fibErrGroup(n - 1); return nil })
	y := fibErrGroup(n - 2)
	_ = g.Wait()
	return x + y
}

func fibConc(n int) int {
	if n < 2 {
		return n
	}
	var wg conc.WaitGroup
	var x int
	wg.Go(func() { x = fibConc(n - 1) })
	y := fibConc(n - 2)
	wg.Wait()
	return x + y
}

// fibGroup is the cutoff version shared by the fib(40) baselines.
func fibGroup(newGroup func() benchGroup, n, cutoff int) int {
	if n < 2 || n < cutoff {
		return benchFibSeq(n)
	}
	var x, y int
	benchPar2(newGroup,
		func() { x = fibGroup(newGroup, n-1, cutoff) },
		func() { y = fibGroup(newGroup, n-2, cutoff) })
	return x + y
}

// runFib times fn, checks its result and reports ns/fork, the figure the
// per-fork overhead plot is drawn from.
func runFib(b *testing.B, n, forks int, fn func() int) {
	b.Helper()
	b.ReportAllocs()
	want := benchFibSeq(n)
	b.ResetTimer()
	var got int
	for range b.N {
		got = fn()
	}
	b.StopTimer()
	if got != want {
		b.Fatalf("fib(%d) = %d, want %d", n, got, want)
	}
	fibSink = got
	if forks > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(forks), "ns/fork")
	}
}

// BenchmarkFib30 forks at every level: about 1.35 million forks per
// operation, so ns/fork is the per-fork cost. For seq, ns/fork is the cost
// of the plain call it replaces.
func BenchmarkFib30(b *testing.B) {
	forks := fibForks(fibFine, 0)
	b.Run("impl=seq", func(b *testing.B) {
		runFib(b, fibFine, forks, func() int { return benchFibSeq(fibFine) })
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		runFib(b, fibFine, forks, func() int { return forkjoin.Invoke(p, benchFibTask{fibFine, 0}.Compute) })
	})
	b.Run("impl=magpie-join", func(b *testing.B) {
		p := benchPool(b)
		runFib(b, fibFine, forks, func() int {
			return forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibJoin(w, fibFine) })
		})
	})
	b.Run("impl=magpie-future", func(b *testing.B) {
		p := benchPool(b)
		runFib(b, fibFine, forks, func() int { return forkjoin.Invoke(p, fibFuture{fibFine}.Compute) })
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		runFib(b, fibFine, forks, func() int { return fibWaitGroup(fibFine) })
	})
	b.Run("impl=errgroup", func(b *testing.B) {
		runFib(b, fibFine, forks, func() int { return fibErrGroup(fibFine) })
	})
	b.Run("impl=conc", func(b *testing.B) {
		runFib(b, fibFine, forks, func() int { return fibConc(fibFine) })
	})
}

// runFibCoarse times fib(40) with sequential leaves below 25 as typed
// tasks on p.
func runFibCoarse(b *testing.B, p *forkjoin.Pool) {
	runFib(b, fibCoarse, 0, func() int { return forkjoin.Invoke(p, benchFibTask{fibCoarse, fibCoarseLeaf}.Compute) })
}

// BenchmarkFib40 is the same recursion with sequential leaves below 25:
// a few thousand forks, each over tens of microseconds of work.
func BenchmarkFib40(b *testing.B) {
	b.Run("impl=seq", func(b *testing.B) {
		runFib(b, fibCoarse, 0, func() int { return benchFibSeq(fibCoarse) })
	})
	b.Run("impl=magpie", func(b *testing.B) { runFibCoarse(b, benchPool(b)) })
	for _, bl := range goroutineBaselines {
		b.Run("impl="+bl.name, func(b *testing.B) {
			runFib(b, fibCoarse, 0, func() int { return fibGroup(bl.newGroup, fibCoarse, fibCoarseLeaf) })
		})
	}
}

// oversubscribedWorkers is the worker count of the oversubscribed pool:
// many more workers than the development machine's 2 cores.
const oversubscribedWorkers = 32

// BenchmarkOversubscribed is fib(40) with sequential leaves below 25 (the
// work of BenchmarkFib40) on a pool of oversubscribedWorkers workers
// (magpie-32workers) against the usual pool of one worker per GOMAXPROCS
// (magpie): the difference is what idle workers cost, searching for work
// and being woken and put to sleep, when a user sizes a pool by guess.
// The goroutine baselines of this work are BenchmarkFib40's.
func BenchmarkOversubscribed(b *testing.B) {
	b.Run("impl=seq", func(b *testing.B) {
		runFib(b, fibCoarse, 0, func() int { return benchFibSeq(fibCoarse) })
	})
	b.Run("impl=magpie", func(b *testing.B) { runFibCoarse(b, benchPool(b)) })
	b.Run("impl=magpie-32workers", func(b *testing.B) { runFibCoarse(b, benchPoolOf(b, oversubscribedWorkers)) })
}
