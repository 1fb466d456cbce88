package bench

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sourcegraph/conc/iter"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// Flat data parallelism: a reduction over an index range, two maps (one
// bound by memory bandwidth, one by arithmetic) and the small inputs where
// the helpers must not cost more than the loop they replace.

const (
	sumN      = 100_000_000 // BenchmarkSumReduce: indices, no slice
	mapAffN   = 10_000_000  // BenchmarkMapAffine: 80 MB in, 80 MB out
	mapMathN  = 1_000_000   // BenchmarkMapMath: ~50 ns per element
	mapWarmup = 20          // untimed maps before the first measurement
)

var (
	sumSink int64
	mapSink []float64
)

// sumTerm is the body of the reduction: cheap arithmetic the compiler
// cannot fold away or vectorize. It is unsigned on purpose: with signed
// indices, the sequential loop (whose bounds are the constants 0 and sumN)
// let the compiler prove i >= 0 and use a cheaper modulo than the chunked
// loops, whose bounds are variables, so every parallel implementation ran
// 1.7x slower than seq at GOMAXPROCS=1 for a reason that has nothing to do
// with parallelism. Unsigned, and with benchSumRange never inlined, every
// implementation runs the same machine code for its loop.
func sumTerm(i uint64) int64 { return int64(i * i % 7) }

//go:noinline
func benchSumRange(lo, hi int) int64 {
	var s int64
	for i := uint64(lo); i < uint64(hi); i++ {
		s += sumTerm(i)
	}
	return s
}

// sumTask is the reduction as a typed recursive task with the adaptive
// cutoff: magpie's second level, for users who write their own tasks.
type sumTask struct {
	lo, hi int
	cut    task.Cutoff
}

func (t sumTask) Compute(w *forkjoin.Worker) int64 {
	if !t.cut.Split(w, t.hi-t.lo) {
		return benchSumRange(t.lo, t.hi)
	}
	m := t.lo + (t.hi-t.lo)/2
	a, b := task.InvokeBoth[int64, int64](w, sumTask{t.lo, m, t.cut}, sumTask{m, t.hi, t.cut})
	return a + b
}

// runSum times fn and checks it against the sequential sum.
func runSum(b *testing.B, fn func() int64) {
	b.Helper()
	b.ReportAllocs()
	want := sumWant()
	b.ResetTimer()
	var got int64
	for range b.N {
		got = fn()
	}
	b.StopTimer()
	if got != want {
		b.Fatalf("sum = %d, want %d", got, want)
	}
	sumSink = got
}

// sumWant is the expected sum, computed in closed form so that checking
// costs nothing: i*i mod 7 repeats with period 7 as 0,1,4,2,2,4,1.
var sumWant = sync.OnceValue(func() int64 {
	period := [7]int64{0, 1, 4, 2, 2, 4, 1}
	var s int64
	for _, v := range period {
		s += v
	}
	s *= int64(sumN / 7)
	for r := range sumN % 7 {
		s += period[r]
	}
	return s
})

// BenchmarkSumReduce sums i*i%7 over 100M indices: compute-bound, perfectly
// regular. magpie.ForRange with one atomic add per leaf, and the same
// reduction as a typed task, against a loop and one chunk per core.
func BenchmarkSumReduce(b *testing.B) {
	b.Run("impl=seq", func(b *testing.B) {
		runSum(b, func() int64 { return benchSumRange(0, sumN) })
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		runSum(b, func() int64 {
			var total atomic.Int64
			magpie.ForRange(p, sumN, func(lo, hi int) { total.Add(benchSumRange(lo, hi)) })
			return total.Load()
		})
	})
	b.Run("impl=magpie-task", func(b *testing.B) {
		p := benchPool(b)
		runSum(b, func() int64 { return forkjoin.Invoke(p, sumTask{0, sumN, task.Adaptive()}.Compute) })
	})
	for _, bl := range goroutineBaselines {
		if bl.name == "conc" {
			continue // conc's data-parallel API is iter, below
		}
		b.Run("impl="+bl.name, func(b *testing.B) {
			runSum(b, func() int64 {
				parts := make([]int64, len(benchChunks(sumN)))
				forChunks(bl.newGroup(), sumN, func(k, lo, hi int) { parts[k] = benchSumRange(lo, hi) })
				var s int64
				for _, v := range parts {
					s += v
				}
				return s
			})
		})
	}
	b.Run("impl=conc", func(b *testing.B) {
		runSum(b, func() int64 {
			parts := iter.Map(benchChunks(sumN), func(c *[2]int) int64 { return benchSumRange(c[0], c[1]) })
			var s int64
			for _, v := range parts {
				s += v
			}
			return s
		})
	})
}

// benchAffine is the memory-bound map: one multiply-add per 16 bytes moved.
func benchAffine(x float64) float64 { return x*1.5 + 1 }

// benchMathFn is the compute-bound map: a few libm calls, about 50 ns per element
// on the development machine.
func benchMathFn(x float64) float64 {
	return math.Sin(x)*math.Exp(-x*1e-6) + math.Sqrt(x)*math.Log1p(x) + math.Cbrt(x) + math.Atan(x)
}

func benchFloats(n int, seed uint64) []float64 {
	r := benchRand(seed)
	s := make([]float64, n)
	for i := range s {
		s[i] = r.Float64() * 1000
	}
	return s
}

var (
	affineInput = sync.OnceValue(func() []float64 { return benchFloats(mapAffN, 3) })
	mathInput   = sync.OnceValue(func() []float64 { return benchFloats(mapMathN, 4) })
)

// benchMap runs one map family. Every implementation allocates its output,
// as magpie.Map does. The loops call f directly, as a user writes them; magpie
// and conc take it as a function value.
func benchMap(b *testing.B, in []float64, f func(float64) float64) {
	// Warm the heap up to its steady size first: in a fresh process the
	// first tens of 80 MB allocations cost several times the steady-state
	// ones (fresh pages, GC pacing), which would penalise whichever
	// implementation happens to run first.
	for range mapWarmup {
		mapSink = make([]float64, len(in))
		for i, x := range in {
			mapSink[i] = f(x)
		}
	}
	mapSink = nil
	run := func(b *testing.B, fn func() []float64) {
		b.ReportAllocs()
		b.ResetTimer()
		var out []float64
		for range b.N {
			out = fn()
		}
		b.StopTimer()
		for _, i := range []int{0, len(in) / 3, len(in) - 1} {
			if out[i] != f(in[i]) {
				b.Fatalf("out[%d] = %v, want %v", i, out[i], f(in[i]))
			}
		}
		mapSink = out
	}
	b.Run("impl=seq", func(b *testing.B) {
		run(b, func() []float64 {
			out := make([]float64, len(in))
			for i, x := range in {
				out[i] = f(x)
			}
			return out
		})
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		run(b, func() []float64 { return magpie.Map(p, in, f) })
	})
	for _, bl := range goroutineBaselines {
		if bl.name == "conc" {
			continue
		}
		b.Run("impl="+bl.name, func(b *testing.B) {
			run(b, func() []float64 {
				out := make([]float64, len(in))
				forChunks(bl.newGroup(), len(in), func(_, lo, hi int) {
					for i := lo; i < hi; i++ {
						out[i] = f(in[i])
					}
				})
				return out
			})
		})
	}
	b.Run("impl=conc", func(b *testing.B) {
		run(b, func() []float64 { return iter.Map(in, func(x *float64) float64 { return f(*x) }) })
	})
}

// BenchmarkMapAffine maps x*1.5+1 over 10M float64: memory bandwidth, not
// the cores, bounds it, so the question is only whether magpie keeps up
// with hand-chunked goroutines.
func BenchmarkMapAffine(b *testing.B) { benchMap(b, affineInput(), benchAffine) }

// BenchmarkMapMath maps a ~50 ns function over 1M float64: compute-bound.
func BenchmarkMapMath(b *testing.B) { benchMap(b, mathInput(), benchMathFn) }

// seqFor, seqMap and seqReduce are the sequential twins of the helpers:
// the same loops calling the same function values the helpers get. Kept out
// of line so that the calls stay indirect, as they are inside the helpers;
// impl=seq-func against impl=seq is the price of the function-value API
// itself, magpie against seq-func the price of the helper's dispatch.
//
//go:noinline
func seqFor(n int, body func(int)) {
	for i := range n {
		body(i)
	}
}

//go:noinline
func seqMap[E, R any](in []E, f func(E) R) []R {
	out := make([]R, len(in))
	for i, x := range in {
		out[i] = f(x)
	}
	return out
}

//go:noinline
func seqReduce[E, A any](in []E, zero A, fold func(A, E) A) A {
	acc := zero
	for _, x := range in {
		acc = fold(acc, x)
	}
	return acc
}

// BenchmarkSmall runs the helpers on inputs of 10, 100 and 1000 elements,
// where a parallel library must fall back to the plain loop at almost no
// cost. impl=seq is the loop a user writes, with the body inlined;
// impl=seq-func calls the body through a function value, as every helper
// must. The sort benchmarks copy their input inside the timed loop (for seq
// and magpie alike): stopping the timer costs more than these sorts.
func BenchmarkSmall(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		ints := make([]int, n)
		r := benchRand(5)
		for i := range ints {
			ints[i] = r.IntN(1 << 20)
		}
		floats := benchFloats(n, 6)
		work := make([]int, n)
		add := func(a, x int) int { return a + x }
		body := func(i int) { work[i] = work[i]*3 + 1 }
		ops := []struct {
			op                string
			seq, seqFunc, mag func(p *forkjoin.Pool)
		}{
			{"for",
				func(*forkjoin.Pool) {
					for i := range work {
						work[i] = work[i]*3 + 1
					}
				},
				func(*forkjoin.Pool) { seqFor(n, body) },
				func(p *forkjoin.Pool) { magpie.For(p, n, body) }},
			{"map",
				func(*forkjoin.Pool) {
					out := make([]float64, n)
					for i, x := range floats {
						out[i] = benchAffine(x)
					}
					mapSink = out
				},
				func(*forkjoin.Pool) { mapSink = seqMap(floats, benchAffine) },
				func(p *forkjoin.Pool) { mapSink = magpie.Map(p, floats, benchAffine) }},
			{"reduce",
				func(*forkjoin.Pool) {
					s := 0
					for _, x := range ints {
						s += x
					}
					sumSink = int64(s)
				},
				func(*forkjoin.Pool) { sumSink = int64(seqReduce(ints, 0, add)) },
				func(p *forkjoin.Pool) { sumSink = int64(magpie.Reduce(p, ints, 0, add, add)) }},
			{"sort",
				func(*forkjoin.Pool) { copy(work, ints); slices.Sort(work) },
				nil, // Sort takes no function: seq is already its sequential twin
				func(p *forkjoin.Pool) { copy(work, ints); magpie.Sort(p, work) }},
		}
		for _, o := range ops {
			b.Run(fmt.Sprintf("op=%s/n=%d/impl=seq", o.op, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					o.seq(nil)
				}
			})
			if o.seqFunc != nil {
				b.Run(fmt.Sprintf("op=%s/n=%d/impl=seq-func", o.op, n), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						o.seqFunc(nil)
					}
				})
			}
			b.Run(fmt.Sprintf("op=%s/n=%d/impl=magpie", o.op, n), func(b *testing.B) {
				p := benchPool(b)
				b.ReportAllocs()
				for b.Loop() {
					o.mag(p)
				}
			})
		}
	}
}
