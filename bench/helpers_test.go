package bench

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

// The helpers of issue 15 that BenchmarkForErr, BenchmarkIndexFunc and the
// families of scan_test.go and iter_test.go do not cover (MapErr, Any, All,
// ContainsFunc, ForInit, ForChunks, ReduceWith; MaxFunc is in
// scan_test.go, SortByKey in iter_test.go), each against its sequential
// loop and the same work by hand in one chunk per GOMAXPROCS on goroutines
// joined with sync.WaitGroup (impl=waitgroup; impl=errgroup too for MapErr):
//
//	flock /tmp/bench.lock go test -run '^$' -bench 'MapErr|AnyAll|ForInit|ForChunks|ReduceWith' -count 10 -cpu 2 .
//
// The compute-bound ones reuse BenchmarkForErr's input and ~50 ns body
// (errInput, benchMathFn): ~50 ms an op on one core.

// chunkN is the chunk size of BenchmarkForChunks.
const chunkN = 4096

// histBuckets is the accumulator of BenchmarkReduceWith: a histogram.
type histBuckets [16]int

// histAdd counts benchMathFn(x) in its bucket.
func histAdd(h *histBuckets, x float64) *histBuckets {
	h[int(math.Abs(benchMathFn(x))*4)&15]++
	return h
}

// histMerge adds b's counts into a.
func histMerge(a, b *histBuckets) *histBuckets {
	for i := range a {
		a[i] += b[i]
	}
	return a
}

// BenchmarkMapErr maps benchMathFn over 1M floats through a function that
// never fails (the price of the error plumbing): the sequential loop
// stopping at the first error, magpie.MapErr, and chunks that stop at
// their first error (waitgroup: the first chunk's error; errgroup: the
// first error returned).
func BenchmarkMapErr(b *testing.B) {
	in := errInput()
	f := func(x float64) (float64, error) { return benchMathFn(x), nil }
	want := seqMap(in, benchMathFn)
	run := func(b *testing.B, fn func() ([]float64, error)) {
		b.ReportAllocs()
		var out []float64
		var err error
		for b.Loop() {
			out, err = fn()
		}
		if err != nil || !slices.Equal(out, want) {
			b.Fatalf("err = %v, or wrong result", err)
		}
	}
	// mapChunk maps in[lo:hi] into out, stopping at the first error.
	mapChunk := func(out []float64, lo, hi int) error {
		for i := lo; i < hi; i++ {
			y, err := f(in[i])
			if err != nil {
				return err
			}
			out[i] = y
		}
		return nil
	}
	b.Run("impl=seq", func(b *testing.B) {
		run(b, func() ([]float64, error) {
			out := make([]float64, len(in))
			return out, mapChunk(out, 0, len(in))
		})
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		run(b, func() ([]float64, error) { return magpie.MapErr(p, in, f) })
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		run(b, func() ([]float64, error) {
			out := make([]float64, len(in))
			errs := chunkResults(len(in), func(lo, hi int) error { return mapChunk(out, lo, hi) })
			for _, err := range errs {
				if err != nil {
					return nil, err
				}
			}
			return out, nil
		})
	})
	b.Run("impl=errgroup", func(b *testing.B) {
		run(b, func() ([]float64, error) {
			out := make([]float64, len(in))
			var g errgroup.Group
			for _, c := range benchChunks(len(in)) {
				g.Go(func() error { return mapChunk(out, c[0], c[1]) })
			}
			return out, g.Wait()
		})
	})
}

// BenchmarkAnyAll runs Any, ContainsFunc and All over BenchmarkIndexFunc's
// 10M int64 with a cheap predicate that makes each scan the whole slice
// (Any and ContainsFunc find nothing, All finds no counter-example): the
// sequential slices.ContainsFunc, the same loop calling the predicate
// through a function value as every helper must (seq-func: seq against
// seq-func is the price of the function-value API, which the compiler
// inlines away in seq and waitgroup), the magpie helper, and every chunk
// scanned to its end or first hit (waitgroup; no chunk stops another).
func BenchmarkAnyAll(b *testing.B) {
	s := searchInput()
	absent := func(x int64) bool { return x < 0 }
	present := func(x int64) bool { return x >= 0 }
	for _, op := range []struct {
		name   string
		want   bool
		seq    func() bool
		magpie func(p forkjoin.Runner) bool
		chunk  func(lo, hi int) bool
	}{
		{"any", false, func() bool { return slices.ContainsFunc(s, absent) },
			func(p forkjoin.Runner) bool { return magpie.Any(p, s, absent) },
			func(lo, hi int) bool { return slices.ContainsFunc(s[lo:hi], absent) }},
		{"contains", false, func() bool { return slices.ContainsFunc(s, absent) },
			func(p forkjoin.Runner) bool { return magpie.ContainsFunc(p, s, absent) },
			func(lo, hi int) bool { return slices.ContainsFunc(s[lo:hi], absent) }},
		{"all", true, func() bool { return !slices.ContainsFunc(s, func(x int64) bool { return !present(x) }) },
			func(p forkjoin.Runner) bool { return magpie.All(p, s, present) },
			func(lo, hi int) bool {
				return !slices.ContainsFunc(s[lo:hi], func(x int64) bool { return !present(x) })
			}},
	} {
		run := func(b *testing.B, fn func() bool) {
			b.ReportAllocs()
			var got bool
			for b.Loop() {
				got = fn()
			}
			if got != op.want {
				b.Fatalf("%s = %v, want %v", op.name, got, op.want)
			}
		}
		b.Run(fmt.Sprintf("op=%s/impl=seq", op.name), func(b *testing.B) { run(b, op.seq) })
		b.Run(fmt.Sprintf("op=%s/impl=seq-func", op.name), func(b *testing.B) {
			pred, want := absent, false
			if op.want {
				pred, want = present, true
			}
			run(b, func() bool { return seqAllFunc(s, pred, want) == want })
		})
		b.Run(fmt.Sprintf("op=%s/impl=magpie", op.name), func(b *testing.B) {
			p := benchPool(b)
			run(b, func() bool { return op.magpie(p) })
		})
		b.Run(fmt.Sprintf("op=%s/impl=waitgroup", op.name), func(b *testing.B) {
			run(b, func() bool {
				// all: every chunk true; any, contains: some chunk true.
				return slices.Contains(chunkResults(len(s), op.chunk), !op.want) != op.want
			})
		})
	}
}

// seqAllFunc reports whether pred(x) == want for every x of s, calling
// pred through a function value (not inlined), as Any and All must.
//
//go:noinline
func seqAllFunc(s []int64, pred func(int64) bool, want bool) bool {
	for _, x := range s {
		if pred(x) != want {
			return false
		}
	}
	return true
}

// BenchmarkForInit is BenchmarkMapInit's work written as a loop over
// indices: each piece formats into its own scratch buffer (ForInit's state)
// and stores the length.
func BenchmarkForInit(b *testing.B) {
	in := fmtInput()
	out := make([]int, len(in))
	run := func(b *testing.B, fn func()) {
		b.ReportAllocs()
		for b.Loop() {
			fn()
		}
		if out[len(out)-1] != fmtHex(fmtBuf(), in[len(in)-1]) {
			b.Fatal("wrong result")
		}
	}
	b.Run("impl=seq", func(b *testing.B) {
		run(b, func() {
			buf := fmtBuf()
			for i := range in {
				out[i] = fmtHex(buf, in[i])
			}
		})
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		run(b, func() {
			magpie.ForInit(p, len(in), fmtBuf, func(buf *[]byte, i int) { out[i] = fmtHex(buf, in[i]) })
		})
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		run(b, func() {
			forChunks(new(sync.WaitGroup), len(in), func(_, lo, hi int) {
				buf := fmtBuf()
				for i := lo; i < hi; i++ {
					out[i] = fmtHex(buf, in[i])
				}
			})
		})
	})
}

// BenchmarkForChunks runs benchMathFn over 1M floats in chunks of 4096
// indices: the sequential loop over the chunks, magpie.ForChunks, and one
// goroutine per GOMAXPROCS running its share of the indices (waitgroup).
func BenchmarkForChunks(b *testing.B) {
	in := errInput()
	out := make([]float64, len(in))
	body := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = benchMathFn(in[i])
		}
	}
	run := func(b *testing.B, fn func()) {
		b.ReportAllocs()
		for b.Loop() {
			fn()
		}
		errSink = out[len(out)-1]
	}
	b.Run("impl=seq", func(b *testing.B) {
		run(b, func() {
			for lo := 0; lo < len(in); lo += chunkN {
				body(lo, min(lo+chunkN, len(in)))
			}
		})
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		run(b, func() { magpie.ForChunks(p, len(in), chunkN, body) })
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		run(b, func() { forChunks(new(sync.WaitGroup), len(in), func(_, lo, hi int) { body(lo, hi) }) })
	})
}

// BenchmarkReduceWith builds a 16-bucket histogram of benchMathFn over 1M
// floats, one histogram per piece merged at the end: the sequential fold,
// magpie.ReduceWith, and one histogram per GOMAXPROCS chunk (waitgroup).
func BenchmarkReduceWith(b *testing.B) {
	in := errInput()
	newHist := func() *histBuckets { return new(histBuckets) }
	want := seqReduce(in, newHist(), histAdd)
	run := func(b *testing.B, fn func() *histBuckets) {
		b.ReportAllocs()
		var got *histBuckets
		for b.Loop() {
			got = fn()
		}
		if *got != *want {
			b.Fatalf("histogram %v, want %v", *got, *want)
		}
	}
	b.Run("impl=seq", func(b *testing.B) {
		run(b, func() *histBuckets { return seqReduce(in, newHist(), histAdd) })
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		run(b, func() *histBuckets { return magpie.ReduceWith(p, in, newHist, histAdd, histMerge) })
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		run(b, func() *histBuckets {
			hs := chunkResults(len(in), func(lo, hi int) *histBuckets { return seqReduce(in[lo:hi], newHist(), histAdd) })
			return seqReduce(hs, newHist(), histMerge)
		})
	})
}
