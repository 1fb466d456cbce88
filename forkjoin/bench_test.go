package forkjoin_test

// Benchmarks of the runtime against the code a user would write instead.
// Each figure that the design targets is reported as a metric beside ns/op:
//
//	go test ./forkjoin -run XXX -bench . -count 10 | benchstat -
//
// Ratios are computed in-process against a sequential baseline measured in
// the same binary run (see seqTime), so they hold on whatever machine runs
// them; compare them only between runs on a quiet machine.

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
)

var sink atomic.Int64

// seqTimes caches sequential baselines, measured once per process as the
// fastest of a few runs so that one preempted run does not skew a ratio.
var seqTimes sync.Map // n -> time.Duration

func seqTime(n, runs int) time.Duration {
	if d, ok := seqTimes.Load(n); ok {
		return d.(time.Duration)
	}
	best := time.Duration(1 << 62)
	for i := 0; i < runs; i++ {
		t0 := time.Now()
		sink.Add(int64(fibSeq(n)))
		best = min(best, time.Since(t0))
	}
	seqTimes.Store(n, best)
	return best
}

// reportFork reports, for a benchmark whose op is one fib(n) forking at
// every level, the work overhead T/Ts and the cost per fork
// (T - Ts) / forks, forks being the number of Join (or Fork) calls.
func reportFork(b *testing.B, n int) {
	ts := seqTime(n, 5)
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(per)/float64(ts), "T/Ts")
	b.ReportMetric(float64(per-ts)/float64(fibJoins(n)), "ns/fork")
}

// fibWaitGroup forks at every level with a goroutine and a WaitGroup.
func fibWaitGroup(n int) int {
	if n < 2 {
		return n
	}
	var wg sync.WaitGroup
	var a int
	wg.Add(1)
	go func() {
		defer wg.Done()
		a = fibWaitGroup(n - 1)
	}()
	b := fibWaitGroup(n - 2)
	wg.Wait()
	return a + b
}

// BenchmarkFib30 is the work-overhead benchmark: fib(30) forking at every
// level (1,346,268 forks) on one worker, in each forking style, against
// plain sequential fib(30) and against goroutines + WaitGroup on one P.
func BenchmarkFib30(b *testing.B) {
	const n = 30
	b.Run("Seq", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink.Add(int64(fibSeq(n)))
		}
	})
	styles := []struct {
		name string
		fn   func(w *forkjoin.Worker) int
	}{
		{"Join", func(w *forkjoin.Worker) int { return fibJoin(w, n) }},
		{"JoinTasks", func(w *forkjoin.Worker) int { return fibTask(n).Compute(w) }},
		{"Fork", func(w *forkjoin.Worker) int { return fibFork(w, n) }},
		{"ForkTask", func(w *forkjoin.Worker) int { return fibForkTask(n).Compute(w) }},
	}
	for _, s := range styles {
		b.Run(s.name, func(b *testing.B) {
			p := forkjoin.New(forkjoin.WithParallelism(1))
			defer p.Close()
			forkjoin.Invoke(p, s.fn) // warm the worker's node caches
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sink.Add(int64(forkjoin.Invoke(p, s.fn)))
			}
			reportFork(b, n)
		})
	}
	b.Run("GoWaitGroup", func(b *testing.B) {
		// One P, so that T is the work of the goroutine version, as T1 is
		// for the pool with one worker.
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink.Add(int64(fibWaitGroup(n)))
		}
		reportFork(b, n)
	})
}

// BenchmarkFib40Cutoff25 is the speedup benchmark: fib(40) forking above
// n = 25 and sequential below, on 2 workers, against sequential fib(40).
// Speedup is Ts / T with Ts measured in the same process.
func BenchmarkFib40Cutoff25(b *testing.B) {
	const n, cutoff = 40, 25
	b.Run("Seq", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink.Add(int64(fibSeq(n)))
		}
	})
	b.Run("Pool2", func(b *testing.B) {
		ts := seqTime(n, 2)
		p := forkjoin.New(forkjoin.WithParallelism(2))
		defer p.Close()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			sink.Add(int64(forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibCutoff{n, cutoff}.Compute(w) })))
		}
		b.ReportMetric(float64(ts)/float64(b.Elapsed()/time.Duration(b.N)), "speedup")
	})
	b.Run("GoWaitGroup", func(b *testing.B) {
		ts := seqTime(n, 2)
		var fib func(n int) int
		fib = func(n int) int {
			if n < cutoff {
				return fibSeq(n)
			}
			var wg sync.WaitGroup
			var a int
			wg.Add(1)
			go func() { defer wg.Done(); a = fib(n - 1) }()
			c := fib(n - 2)
			wg.Wait()
			return a + c
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink.Add(int64(fib(n)))
		}
		b.ReportMetric(float64(ts)/float64(b.Elapsed()/time.Duration(b.N)), "speedup")
	})
}

// BenchmarkTinyTasks submits 1,000,000 trivial tasks from outside and waits
// for all of them, per op; ns/task is the cost of one. Baselines: a
// goroutine per task with a WaitGroup, and GOMAXPROCS goroutines draining a
// channel.
func BenchmarkTinyTasks(b *testing.B) {
	const tasks = 1_000_000
	var counter atomic.Int64
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed())/float64(b.N*tasks), "ns/task")
	}
	b.Run("Execute", func(b *testing.B) {
		p := forkjoin.New()
		defer p.Close()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var wg sync.WaitGroup
			wg.Add(tasks)
			task := func(*forkjoin.Worker) { counter.Add(1); wg.Done() }
			for j := 0; j < tasks; j++ {
				if err := p.Execute(task); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
		}
		report(b)
	})
	b.Run("Submit", func(b *testing.B) {
		p := forkjoin.New()
		defer p.Close()
		fs := make([]*forkjoin.Future[int], tasks)
		task := func(*forkjoin.Worker) int { counter.Add(1); return 1 }
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for j := range fs {
				fs[j] = forkjoin.Submit(p, task)
			}
			for _, f := range fs {
				if _, err := f.Get(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b)
	})
	b.Run("GoWaitGroup", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var wg sync.WaitGroup
			wg.Add(tasks)
			for j := 0; j < tasks; j++ {
				go func() { counter.Add(1); wg.Done() }()
			}
			wg.Wait()
		}
		report(b)
	})
	b.Run("ChannelWorkers", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			ch := make(chan func(), 1024)
			var wg sync.WaitGroup
			for g := 0; g < runtime.GOMAXPROCS(0); g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for f := range ch {
						f()
					}
				}()
			}
			task := func() { counter.Add(1) }
			for j := 0; j < tasks; j++ {
				ch <- task
			}
			close(ch)
			wg.Wait()
		}
		report(b)
	})
}

// BenchmarkWakeLatency measures Invoke of a trivial task on an idle pool
// whose workers have parked: the time to wake a worker, run the task and
// wake the caller. Each iteration first sleeps a few milliseconds (included
// in ns/op, which is therefore meaningless here); the metric is the median
// of the timed Invokes, in µs.
func BenchmarkWakeLatency(b *testing.B) {
	for _, par := range []int{1, 2} {
		b.Run(fmt.Sprintf("p=%d", par), func(b *testing.B) {
			p := forkjoin.New(forkjoin.WithParallelism(par))
			defer p.Close()
			task := func(*forkjoin.Worker) int { return 1 }
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				time.Sleep(3 * time.Millisecond) // workers spin down and park
				t0 := time.Now()
				sink.Add(int64(forkjoin.Invoke(p, task)))
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e3, "µs-median")
			b.ReportMetric(float64(lat[len(lat)*9/10])/1e3, "µs-p90")
		})
	}
	b.Run("back-to-back", func(b *testing.B) {
		// The same Invoke on a pool kept awake: the latency without the
		// wake-up, for comparison.
		p := forkjoin.New(forkjoin.WithParallelism(1))
		defer p.Close()
		task := func(*forkjoin.Worker) int { return 1 }
		lat := make([]time.Duration, 0, b.N)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			sink.Add(int64(forkjoin.Invoke(p, task)))
			lat = append(lat, time.Since(t0))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2])/1e3, "µs-median")
	})
}

// spinFor busy-waits for d: a CPU-bound leaf of a known length.
func spinFor(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
		sink.Add(1)
	}
}

// BenchmarkFlatLoop forks 32 independent leaves of 300 µs each from one
// task in a loop, on 2 workers that start asleep, and joins them in fork
// order, in reverse order, or waits for them as the spawns of a scope: the
// shape of code that forks a varying number of subtasks. The ideal is half
// the serial time (4.8 ms); the metric ideal-ratio is the time over that.
// Work hidden in the forking worker's deque shows as a ratio near 2.
// Run with -cpu 2 (two workers need two Ps).
func BenchmarkFlatLoop(b *testing.B) {
	const leaves, leaf = 32, 300 * time.Microsecond
	ideal := leaves * leaf / 2
	shapes := map[string]func(w *forkjoin.Worker){
		"fork-join-in-order": func(w *forkjoin.Worker) {
			var fs [leaves]*forkjoin.Future[int]
			for i := range fs {
				fs[i] = forkjoin.Fork(w, func(*forkjoin.Worker) int { spinFor(leaf); return 1 })
			}
			for _, f := range fs {
				f.Join(w)
			}
		},
		"fork-join-reversed": func(w *forkjoin.Worker) {
			var fs [leaves]*forkjoin.Future[int]
			for i := range fs {
				fs[i] = forkjoin.Fork(w, func(*forkjoin.Worker) int { spinFor(leaf); return 1 })
			}
			for i := len(fs) - 1; i >= 0; i-- {
				fs[i].Join(w)
			}
		},
		"scope-spawn": func(w *forkjoin.Worker) {
			forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
				for range leaves {
					s.Spawn(w, func(*forkjoin.Worker) { spinFor(leaf) })
				}
			})
		},
	}
	for _, name := range []string{"fork-join-in-order", "fork-join-reversed", "scope-spawn"} {
		body := shapes[name]
		b.Run(name, func(b *testing.B) {
			p := forkjoin.New(forkjoin.WithParallelism(2))
			defer p.Close()
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				time.Sleep(2 * time.Millisecond) // both workers park
				b.StartTimer()
				t0 := time.Now()
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int { body(w); return 0 })
				total += time.Since(t0)
			}
			b.ReportMetric(float64(total)/float64(b.N)/float64(ideal), "ideal-ratio")
		})
	}
}
