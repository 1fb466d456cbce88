package magpie_test

import (
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
