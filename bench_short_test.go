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
