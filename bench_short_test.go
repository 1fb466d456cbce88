package magpie_test

import (
	"cmp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

// Short loops, both ends of the probe (issue 15):
//
//	go test -run '^$' -bench 'ShortLoop' -benchmem -count 1 -cpu 2 .
//
// ShortLoopCheap: For over n indices of about a nanosecond, which must stay
// on the caller at about the cost of a plain loop; ShortLoopSlow: For over
// 100 indices of spin (CPU, not sleep) each, which the probe should run on
// every worker (impl=seq is the plain loop, the sequential time).

var shortSink []int

func BenchmarkShortLoopCheap(b *testing.B) {
	p := shortBenchPool(b)
	for _, n := range []int{10, 100, 1000} {
		xs := make([]int, n)
		body := func(i int) { xs[i]++ }
		b.Run("n="+strconv.Itoa(n)+"/impl=seq", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for i := range n {
					body(i)
				}
			}
		})
		b.Run("n="+strconv.Itoa(n)+"/impl=magpie", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				magpie.For(p, n, body)
			}
		})
		shortSink = xs
	}
}

// spin busies the CPU for about d.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

func BenchmarkShortLoopSlow(b *testing.B) {
	p := shortBenchPool(b)
	for _, d := range []time.Duration{100 * time.Microsecond, time.Millisecond} {
		body := func(int) { spin(d) }
		b.Run("d="+d.String()+"/impl=seq", func(b *testing.B) {
			for b.Loop() {
				for i := range 100 {
					body(i)
				}
			}
		})
		b.Run("d="+d.String()+"/impl=magpie", func(b *testing.B) {
			for b.Loop() {
				magpie.For(p, 100, body)
			}
		})
	}
}

// shortBenchPool is a pool of GOMAXPROCS workers, closed after the
// benchmark, whose workers have all run once (goroutine start-up is not
// timed).
func shortBenchPool(b *testing.B) *forkjoin.Pool {
	p := forkjoin.New()
	b.Cleanup(p.Close)
	forkjoin.Broadcast(p, func(*forkjoin.Worker) {})
	return p
}

// Inside a task (the rule by time holds there too, probetask.go):
//
//	go test -run '^$' -bench 'ShortLoopInside' -benchmem -count 1 -cpu 2 .
//
// ShortLoopInsideCheap: For(w, n, body) with the task's *Worker over
// indices of about a nanosecond, timed per loop inside one task (impl=seq
// is the plain loop there); ShortLoopInsideNested: ForW over 10,000
// indices (a long loop, on the pool after the probe's budget) whose body
// runs a short cheap For (n=10, 100) with the Runner ForW hands it, the
// fine-grained nesting the task probe must not slow down (impl=seq: the
// inner loop written out); ShortLoopInsideSlow: For(w, 100, spin) inside a
// task on a pool of GOMAXPROCS workers (impl=seq: the plain loop in the
// task), and the same with time.Sleep, whose speed-up a loaded machine
// does not hide (spinning indices need a free CPU each).

func BenchmarkShortLoopInsideCheap(b *testing.B) {
	p := shortBenchPool(b)
	for _, n := range []int{10, 100, 1000} {
		xs := make([]int, n)
		body := func(i int) { xs[i]++ }
		b.Run("n="+strconv.Itoa(n)+"/impl=seq", func(b *testing.B) {
			b.ReportAllocs()
			forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
				for b.Loop() {
					for i := range n {
						body(i)
					}
				}
				return struct{}{}
			})
		})
		b.Run("n="+strconv.Itoa(n)+"/impl=magpie", func(b *testing.B) {
			b.ReportAllocs()
			forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
				for b.Loop() {
					magpie.For(w, n, body)
				}
				return struct{}{}
			})
		})
		shortSink = xs
	}
}

func BenchmarkShortLoopInsideNested(b *testing.B) {
	p := shortBenchPool(b)
	const outer = 10_000
	for _, n := range []int{10, 100} {
		xs := make([]int, outer*n)
		b.Run("n="+strconv.Itoa(n)+"/impl=seq", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				magpie.ForW(p, outer, func(_ forkjoin.Runner, i int) {
					row := xs[i*n : (i+1)*n]
					for j := range n {
						row[j]++
					}
				})
			}
		})
		b.Run("n="+strconv.Itoa(n)+"/impl=magpie", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				magpie.ForW(p, outer, func(r forkjoin.Runner, i int) {
					row := xs[i*n : (i+1)*n]
					magpie.For(r, n, func(j int) { row[j]++ })
				})
			}
		})
		shortSink = xs
	}
}

func BenchmarkShortLoopInsideSlow(b *testing.B) {
	p := shortBenchPool(b)
	for _, d := range []time.Duration{100 * time.Microsecond, time.Millisecond} {
		for _, kind := range []string{"spin", "sleep"} {
			body := func(int) { spin(d) }
			if kind == "sleep" {
				body = func(int) { time.Sleep(d) }
			}
			name := "d=" + d.String() + "/body=" + kind
			b.Run(name+"/impl=seq", func(b *testing.B) {
				for b.Loop() {
					forkjoin.Invoke(p, func(*forkjoin.Worker) struct{} {
						for i := range 100 {
							body(i)
						}
						return struct{}{}
					})
				}
			})
			b.Run(name+"/impl=magpie", func(b *testing.B) {
				for b.Loop() {
					forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
						magpie.For(w, 100, body)
						return struct{}{}
					})
				}
			})
		}
	}
}

// Short loops of the reducing and searching helpers on a worker with
// slack queued (slackgate.go), the path nested fine-grained loops take in
// a busy computation: they run inline, re-checking the slack between
// batches past 16 indices.
//
//	go test -run '^$' -bench 'ShortHelpersInsideSlack' -benchmem -count 1 -cpu 2 .
//
// The task runs on a pool of two workers whose other worker is blocked,
// with a forked sibling queued, so that Surplus() stays 1 for the whole
// benchmark; impl=seq is the sequential loop the helper matches.
func BenchmarkShortHelpersInsideSlack(b *testing.B) {
	type helper struct {
		name     string
		seq, par func(r forkjoin.Runner, xs []int) int
	}
	add := func(a, b int) int { return a + b }
	odd := func(x int) bool { return x%2 == 1 }
	helpers := []helper{
		{"Reduce", func(_ forkjoin.Runner, xs []int) int {
			acc := 0
			for _, x := range xs {
				acc = add(acc, x)
			}
			return acc
		}, func(r forkjoin.Runner, xs []int) int { return magpie.Reduce(r, xs, 0, add, add) }},
		{"Count", func(_ forkjoin.Runner, xs []int) int {
			c := 0
			for _, x := range xs {
				if odd(x) {
					c++
				}
			}
			return c
		}, func(r forkjoin.Runner, xs []int) int { return magpie.Count(r, xs, odd) }},
		{"IndexFunc", func(_ forkjoin.Runner, xs []int) int {
			return slices.IndexFunc(xs, func(x int) bool { return x < 0 })
		}, func(r forkjoin.Runner, xs []int) int {
			return magpie.IndexFunc(r, xs, func(x int) bool { return x < 0 })
		}},
		{"MinFunc", func(_ forkjoin.Runner, xs []int) int { return slices.MinFunc(xs, cmp.Compare[int]) },
			func(r forkjoin.Runner, xs []int) int { return magpie.MinFunc(r, xs, cmp.Compare[int]) }},
		{"Filter", func(_ forkjoin.Runner, xs []int) int {
			var out []int
			for _, x := range xs {
				if odd(x) {
					out = append(out, x)
				}
			}
			return len(out)
		}, func(r forkjoin.Runner, xs []int) int { return len(magpie.Filter(r, xs, odd)) }},
	}
	two := forkjoin.New(forkjoin.WithParallelism(2))
	b.Cleanup(two.Close)
	for _, h := range helpers {
		for _, n := range []int{10, 100} {
			xs := make([]int, n)
			for i := range xs {
				xs[i] = i
			}
			for _, impl := range []string{"seq", "magpie"} {
				f := h.seq
				if impl == "magpie" {
					f = h.par
				}
				b.Run(h.name+"/n="+strconv.Itoa(n)+"/impl="+impl, func(b *testing.B) {
					b.ReportAllocs()
					release, busy := make(chan struct{}), make(chan struct{})
					if err := two.Execute(func(*forkjoin.Worker) { close(busy); <-release }); err != nil {
						b.Fatal(err)
					}
					<-busy
					sink := 0
					forkjoin.Invoke(two, func(w *forkjoin.Worker) struct{} {
						sib := forkjoin.Fork(w, func(*forkjoin.Worker) int { return 1 })
						if w.Surplus() < 1 {
							panic("no slack: the benchmark does not measure the slack path")
						}
						for b.Loop() {
							sink += f(w, xs)
						}
						close(release)
						sib.Join(w)
						return struct{}{}
					})
					shortIntSink = sink
				})
			}
		}
	}
}

var shortIntSink int
