package magpie_test

// The split engine's per-element helpers (Reduce, For) against ForRange
// doing the same work, side by side (issue 16, "Reduce at the speed of
// ForRange"). Each family has one row per implementation, named
// Family/impl=NAME for benchstat -col /impl:
//
//	seq            the loop a user writes, the body inlined
//	seq-func       the same loop calling the body through a function value
//	forrange       magpie.ForRange, the body's loop inlined (the user's own code)
//	forrange-func  magpie.ForRange calling the same function value per element
//	reduce, for    the helper under test
//	reducerange    magpie.ReduceRange, the same fold with the leaf's loop inlined
//
// Run one GOMAXPROCS per process, interleaved rounds (docs/benchmarks.md,
// "Reduce and For against ForRange"):
//
//	go test -c -o magpie.test .
//	for r in $(seq 8); do for i in seq seq-func forrange forrange-func reduce reducerange; do
//	  ./magpie.test -test.run '^$' -test.bench "^BenchmarkEngineSum$/^impl=$i\$" \
//	    -test.benchtime 5x -test.cpu 2; done; done > sum.txt
//	benchstat -col /impl sum.txt

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

const (
	engineSumN = 100_000_000 // BenchmarkEngineSum: 1e8 indices (a 400 MB []uint32)
	engineMapN = 10_000_000  // BenchmarkEngineMap: 80 MB in, 80 MB out
)

// engineSumInput holds the indices 0..engineSumN-1: Reduce folds a slice,
// so the indices are one. uint32 halves the memory the loops stream
// through against int64; the fold widens it.
var engineSumInput = sync.OnceValue(func() []uint32 {
	s := make([]uint32, engineSumN)
	for i := range s {
		s[i] = uint32(i)
	}
	return s
})

// engineTerm is the per-element work of the sum: cheap arithmetic that the
// compiler can neither fold away nor vectorize (BenchmarkSumReduce's term).
func engineTerm(x uint32) int64 { return int64(uint64(x) * uint64(x) % 7) }

// engineFold is the fold every function-value variant calls per element.
func engineFold(acc int64, x uint32) int64 { return acc + engineTerm(x) }

func engineAdd(a, b int64) int64 { return a + b }

// engineOpaque returns f so that the compiler cannot see which function it
// is: a local func value assigned once is devirtualized and inlined into
// the ForRange body that captures it, which would turn forrange-func into
// forrange. Inside Reduce and For the call is always indirect.
//
//go:noinline
func engineOpaque[F any](f F) F { return f }

// engineWantSum is the sum in closed form: i*i mod 7 repeats with period 7
// as 0,1,4,2,2,4,1.
func engineWantSum(n int) int64 {
	period := [7]int64{0, 1, 4, 2, 2, 4, 1}
	var s int64
	for r := range n % 7 {
		s += period[r]
	}
	return s + 14*int64(n/7)
}

// enginePool starts a pool with one worker per GOMAXPROCS, wakes every
// worker once, and closes it when the benchmark returns.
func enginePool(b *testing.B) *forkjoin.Pool {
	p := forkjoin.New(forkjoin.WithParallelism(runtime.GOMAXPROCS(0)))
	b.Cleanup(p.Close)
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return w.Index() })
	return p
}

// engineRunSum times fn on a fresh pool and checks its result against want.
func engineRunSum[T int64 | uint32](b *testing.B, want T, fn func(p *forkjoin.Pool) T) {
	p := enginePool(b)
	b.ReportAllocs()
	b.ResetTimer()
	var got T
	for range b.N {
		got = fn(p)
	}
	b.StopTimer()
	if got != want {
		b.Fatalf("sum = %d, want %d", got, want)
	}
}

// engineSeqFold is the sequential loop calling fold through a function
// value, kept out of line so that the call stays indirect, as in Reduce.
//
//go:noinline
func engineSeqFold(in []uint32, fold func(int64, uint32) int64) int64 {
	var acc int64
	for _, x := range in {
		acc = fold(acc, x)
	}
	return acc
}

// BenchmarkEngineSum sums i*i%7 over a slice of 1e8 indices: Reduce against
// ForRange folding the same leaves into per-leaf partials.
func BenchmarkEngineSum(b *testing.B) {
	in := engineSumInput()
	want := engineWantSum(len(in))
	fold := engineOpaque(engineFold)
	run := func(b *testing.B, fn func(p *forkjoin.Pool) int64) { engineRunSum(b, want, fn) }
	b.Run("impl=seq", func(b *testing.B) {
		run(b, func(*forkjoin.Pool) int64 {
			var s int64
			for _, x := range in {
				s += engineTerm(x)
			}
			return s
		})
	})
	b.Run("impl=seq-func", func(b *testing.B) {
		run(b, func(*forkjoin.Pool) int64 { return engineSeqFold(in, fold) })
	})
	b.Run("impl=forrange", func(b *testing.B) {
		run(b, func(p *forkjoin.Pool) int64 {
			var total atomic.Int64
			magpie.ForRange(p, len(in), func(lo, hi int) {
				var s int64
				for _, x := range in[lo:hi] {
					s += engineTerm(x)
				}
				total.Add(s)
			})
			return total.Load()
		})
	})
	b.Run("impl=forrange-func", func(b *testing.B) {
		run(b, func(p *forkjoin.Pool) int64 {
			var total atomic.Int64
			magpie.ForRange(p, len(in), func(lo, hi int) {
				var s int64
				for _, x := range in[lo:hi] {
					s = fold(s, x)
				}
				total.Add(s)
			})
			return total.Load()
		})
	})
	b.Run("impl=reduce", func(b *testing.B) {
		run(b, func(p *forkjoin.Pool) int64 { return magpie.Reduce(p, in, 0, fold, engineAdd) })
	})
	b.Run("impl=reducerange", func(b *testing.B) {
		run(b, func(p *forkjoin.Pool) int64 {
			return magpie.ReduceRange(p, len(in), 0, func(s int64, lo, hi int) int64 {
				for _, x := range in[lo:hi] {
					s += engineTerm(x)
				}
				return s
			}, engineAdd)
		})
	})
}

// engineAffine is the map's per-element work: one multiply-add per 16
// bytes moved (BenchmarkMapAffine's).
func engineAffine(x float64) float64 { return x*1.5 + 1 }

// engineSeqFor is the sequential loop calling body through a function
// value, kept out of line so that the call stays indirect, as in For.
//
//go:noinline
func engineSeqFor(n int, body func(int)) {
	for i := range n {
		body(i)
	}
}

// BenchmarkEngineMap writes out[i] = in[i]*1.5+1 over 10M float64 with a
// trivial body: For against ForRange doing the same. Each implementation
// gets a fresh output, allocated outside the timed loop, so only the loop
// is timed and the check after it sees that implementation's writes.
func BenchmarkEngineMap(b *testing.B) {
	in := make([]float64, engineMapN)
	for i := range in {
		in[i] = float64(i%1000) * 0.25
	}
	var out []float64
	body := engineOpaque(func(i int) { out[i] = engineAffine(in[i]) })
	run := func(b *testing.B, fn func(p *forkjoin.Pool)) {
		p := enginePool(b)
		out = make([]float64, engineMapN)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			fn(p)
		}
		b.StopTimer()
		for _, i := range []int{0, len(in) / 3, len(in) - 1} {
			if out[i] != engineAffine(in[i]) {
				b.Fatalf("out[%d] = %v, want %v", i, out[i], engineAffine(in[i]))
			}
		}
	}
	b.Run("impl=seq", func(b *testing.B) {
		run(b, func(*forkjoin.Pool) {
			for i, x := range in {
				out[i] = engineAffine(x)
			}
		})
	})
	b.Run("impl=seq-func", func(b *testing.B) {
		run(b, func(*forkjoin.Pool) { engineSeqFor(len(in), body) })
	})
	b.Run("impl=forrange", func(b *testing.B) {
		run(b, func(p *forkjoin.Pool) {
			magpie.ForRange(p, len(in), func(lo, hi int) {
				for i, x := range in[lo:hi] {
					out[lo+i] = engineAffine(x)
				}
			})
		})
	})
	b.Run("impl=forrange-func", func(b *testing.B) {
		run(b, func(p *forkjoin.Pool) {
			magpie.ForRange(p, len(in), func(lo, hi int) {
				for i := lo; i < hi; i++ {
					body(i)
				}
			})
		})
	})
	b.Run("impl=for", func(b *testing.B) {
		run(b, func(p *forkjoin.Pool) { magpie.For(p, len(in), body) })
	})
}

// BenchmarkEngineSumSlice adds up the same 1e8 uint32 (wrapping, as the
// loop does): magpie.Sum, whose leaves loop with + inlined, against Reduce
// with + as a function value and ForRange with per-leaf partials.
func BenchmarkEngineSumSlice(b *testing.B) {
	in := engineSumInput()
	var want uint32
	for _, x := range in {
		want += x
	}
	add := engineOpaque(func(a, x uint32) uint32 { return a + x })
	run := func(b *testing.B, fn func(p *forkjoin.Pool) uint32) { engineRunSum(b, want, fn) }
	b.Run("impl=seq", func(b *testing.B) {
		run(b, func(*forkjoin.Pool) uint32 {
			var s uint32
			for _, x := range in {
				s += x
			}
			return s
		})
	})
	b.Run("impl=forrange", func(b *testing.B) {
		run(b, func(p *forkjoin.Pool) uint32 {
			var total atomic.Uint32
			magpie.ForRange(p, len(in), func(lo, hi int) {
				var s uint32
				for _, x := range in[lo:hi] {
					s += x
				}
				total.Add(s)
			})
			return total.Load()
		})
	})
	b.Run("impl=reduce", func(b *testing.B) {
		run(b, func(p *forkjoin.Pool) uint32 { return magpie.Reduce(p, in, 0, add, add) })
	})
	b.Run("impl=sum", func(b *testing.B) {
		run(b, func(p *forkjoin.Pool) uint32 { return magpie.Sum(p, in) })
	})
}
