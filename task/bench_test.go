package task_test

// Benchmarks of package task. Two families:
//
// BenchmarkFib30: fib(30) forking at every level (1,346,268 forks per op)
// on a single worker, through each fork path side by side with the plain
// sequential recursion. Metrics: ns/fork and T1/Ts (time on one worker over
// sequential time measured in the same process).
//
//	go test -run '^$' -bench 'Fib30' -benchtime 20x -count 5 ./task
//
// BenchmarkCutoffSum and BenchmarkCutoffFib40: Adaptive() against Fixed
// grains 2^4..2^16 on 2 workers. Metric: speedup over sequential.
//
//	go test -run '^$' -bench 'Cutoff' -benchtime 3x -count 5 ./task | tee out.txt
//	benchstat -col /grain out.txt

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// seqTime returns the best of twenty timings of fn, memoized per name, so
// that each ratio compares against sequential code timed in the same run.
// The minimum, because noise on a shared machine only ever adds time.
var seqTimes sync.Map // name -> time.Duration

func seqTime(name string, fn func()) time.Duration {
	if d, ok := seqTimes.Load(name); ok {
		return d.(time.Duration)
	}
	best := time.Duration(1 << 62)
	for range 20 {
		start := time.Now()
		fn()
		best = min(best, time.Since(start))
	}
	seqTimes.Store(name, best)
	return best
}

var sink int

// fib30Forks is the number of forks in fib(30) forking at every n >= 2:
// the number of internal nodes of the call tree, fib(31) - 1.
const fib30Forks = 1346268

func fibForkClosure(w *forkjoin.Worker, n int) int {
	if n < 2 {
		return n
	}
	f := forkjoin.Fork(w, func(w *forkjoin.Worker) int { return fibForkClosure(w, n-1) })
	return fibForkClosure(w, n-2) + f.Join(w)
}

func fibJoinClosure(w *forkjoin.Worker, n int) int {
	if n < 2 {
		return n
	}
	a, b := forkjoin.Join(w,
		func(w *forkjoin.Worker) int { return fibJoinClosure(w, n-1) },
		func(w *forkjoin.Worker) int { return fibJoinClosure(w, n-2) })
	return a + b
}

func BenchmarkFib30(b *testing.B) {
	ts := seqTime("fib30", func() { sink = fibSeq(30) })
	report := func(b *testing.B, forks bool) {
		perOp := b.Elapsed() / time.Duration(b.N)
		b.ReportMetric(float64(perOp)/float64(ts), "T1/Ts")
		if forks {
			b.ReportMetric(float64(perOp-ts)/fib30Forks, "ns/fork")
		}
	}
	b.Run("path=sequential", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink = fibSeq(30)
		}
		report(b, false)
	})
	paths := []struct {
		name string
		fn   func(w *forkjoin.Worker) int
	}{
		{"task.Fork", Fib{30}.Compute},
		{"task.InvokeBoth", fibBoth{30}.Compute},
		{"forkjoin.Fork", func(w *forkjoin.Worker) int { return fibForkClosure(w, 30) }},
		{"forkjoin.Join", func(w *forkjoin.Worker) int { return fibJoinClosure(w, 30) }},
	}
	for _, path := range paths {
		b.Run("path="+path.name, func(b *testing.B) {
			p := forkjoin.New(forkjoin.WithParallelism(1))
			defer p.Close()
			b.ReportAllocs()
			// The loop runs inside one task, so that the figures are those
			// of the fork path alone, without a submission per op, and after
			// one warm-up run that fills the worker's node free lists: the
			// allocs/op reported are those of the steady state.
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				sink = path.fn(w)
				b.ResetTimer()
				for range b.N {
					sink = path.fn(w)
				}
				return 0
			})
			b.StopTimer()
			report(b, true)
		})
	}
}

// grains are the fixed cutoffs swept against Adaptive.
func grains() []struct {
	name string
	cut  task.Cutoff
} {
	var gs []struct {
		name string
		cut  task.Cutoff
	}
	for e := 4; e <= 16; e++ {
		gs = append(gs, struct {
			name string
			cut  task.Cutoff
		}{fmt.Sprintf("2^%02d", e), task.Fixed(1 << e)})
	}
	return append(gs, struct {
		name string
		cut  task.Cutoff
	}{"adaptive", task.Adaptive()})
}

func BenchmarkCutoffSum(b *testing.B) {
	xs := iota64(1 << 24)
	ts := seqTime("sum24", func() { sink = int(seqSum(xs)) })
	for _, g := range grains() {
		b.Run("grain="+g.name, func(b *testing.B) {
			p := forkjoin.New(forkjoin.WithParallelism(2))
			defer p.Close()
			b.ReportAllocs()
			before := p.Stats().Forks
			for b.Loop() {
				sink = int(task.Invoke(p, SumTask{xs, g.cut}))
			}
			reportCutoff(b, p, before, ts)
		})
	}
}

// fibLeaves[n] is fib(n+1), the number of leaves of fib(n)'s call tree: the
// size handed to the cutoff, proportional to the work below n.
var fibLeaves = func() (t [93]int) {
	t[0], t[1] = 1, 1
	for i := 2; i < len(t); i++ {
		t[i] = t[i-1] + t[i-2]
	}
	return t
}()

// fibCut is fib with a cutoff on its work, forking through InvokeBoth.
type fibCut struct {
	n   int
	cut task.Cutoff
}

func (f fibCut) Compute(w *forkjoin.Worker) int {
	if f.n < 2 || !f.cut.Split(w, fibLeaves[f.n]) {
		return fibSeq(f.n)
	}
	a, b := task.InvokeBoth(w, fibCut{f.n - 1, f.cut}, fibCut{f.n - 2, f.cut})
	return a + b
}

func BenchmarkCutoffFib40(b *testing.B) {
	ts := seqTime("fib40", func() { sink = fibSeq(40) })
	for _, g := range grains() {
		b.Run("grain="+g.name, func(b *testing.B) {
			p := forkjoin.New(forkjoin.WithParallelism(2))
			defer p.Close()
			b.ReportAllocs()
			before := p.Stats().Forks
			for b.Loop() {
				sink = task.Invoke(p, fibCut{40, g.cut})
			}
			reportCutoff(b, p, before, ts)
		})
	}
}

// reportCutoff reports the speedup over the sequential time ts, and the
// forks per op: a count that machine noise does not blur, showing how
// finely a cutoff split the work.
func reportCutoff(b *testing.B, p *forkjoin.Pool, forksBefore uint64, ts time.Duration) {
	b.ReportMetric(float64(ts)/float64(b.Elapsed()/time.Duration(b.N)), "speedup")
	b.ReportMetric(float64(p.Stats().Forks-forksBefore)/float64(b.N), "forks/op")
}
