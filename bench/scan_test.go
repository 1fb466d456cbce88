package bench

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

// The helpers of scan.go, perpiece.go, minmaxfunc.go and zip.go against
// their sequential loops:
//
//	flock /tmp/bench.lock go test -run '^$' -bench 'Scan|MinFunc|FilterMap|Map2|MapInit' -count 10 -cpu 2 . > scan.txt
//	benchstat -col /impl scan.txt

const (
	scanN = 10_000_000 // BenchmarkScan: 80 MB of int64, scanned in place
	helpN = 1_000_000  // the other families
)

var scanSinkInt int64

func addInt64(a, b int64) int64 { return a + b }

// seqScanFunc is the sequential scan calling op through a function value,
// as Scan must: impl=seq-func against impl=seq is the price of the
// function-value API, magpie against seq-func the gain of the parallel one.
//
//go:noinline
func seqScanFunc(s []int64, op func(int64, int64) int64) {
	for i := 1; i < len(s); i++ {
		s[i] = op(s[i-1], s[i])
	}
}

// seqApplyFunc is the ceiling's loop: the scan's memory traffic and one
// indirect call per element, with no dependence between elements, so that
// it is embarrassingly parallel.
//
//go:noinline
func seqApplyFunc(s []int64, op func(int64, int64) int64) {
	for i, x := range s {
		s[i] = op(x, 1)
	}
}

// seqAddOne is the memory ceiling's loop: the scan's memory traffic (every
// element read and written once) with + inlined and no dependence between
// elements.
//
//go:noinline
func seqAddOne(s []int64) {
	for i := range s {
		s[i]++
	}
}

// scanWaitGroup is the textbook two-pass inclusive prefix sum by hand:
// reduce one chunk per GOMAXPROCS but the last, scan the chunk sums, scan
// every chunk from its offset; + inlined.
func scanWaitGroup(s []int64) {
	chunks := benchChunks(len(s))
	sums := make([]int64, len(chunks))
	var wg sync.WaitGroup
	for k, c := range chunks[:len(chunks)-1] {
		wg.Go(func() {
			var t int64
			for _, x := range s[c[0]:c[1]] {
				t += x
			}
			sums[k] = t
		})
	}
	wg.Wait()
	var off int64
	for k, c := range chunks {
		start := off // the chunk's offset, fixed before off moves on
		wg.Go(func() {
			acc := start
			for i := c[0]; i < c[1]; i++ {
				acc += s[i]
				s[i] = acc
			}
		})
		off += sums[k]
	}
	wg.Wait()
}

// BenchmarkScan: an inclusive prefix sum over 10M int64 in place. seq is
// the loop a user writes (+ inlined), seq-func the same loop calling op
// through a function value, magpie Scan, prefixsum magpie's PrefixSum
// (+ inlined), waitgroup the textbook two-pass scan by hand (reduce one
// chunk per GOMAXPROCS but the last, scan the chunk sums, scan every chunk
// from its offset; + inlined). ceiling-1 and ceiling-2 are the bound the
// machine allows Scan: seqApplyFunc, an embarrassingly parallel loop with
// the scan's per-element cost, on one goroutine and split over two.
// mem-seq and mem-par are the bound for PrefixSum: seqAddOne, the scan's
// memory traffic with + inlined, on one goroutine and split over two.
func BenchmarkScan(b *testing.B) {
	s := make([]int64, scanN)
	for i := range s {
		s[i] = int64(i % 7)
	}
	run := func(b *testing.B, fn func()) {
		b.SetBytes(scanN * 8)
		b.ReportAllocs()
		for b.Loop() {
			fn() // the values grow (and wrap) run after run: the cost does not change
		}
		scanSinkInt = s[scanN-1]
	}
	b.Run("impl=seq", func(b *testing.B) {
		run(b, func() {
			for i := 1; i < len(s); i++ {
				s[i] += s[i-1]
			}
		})
	})
	b.Run("impl=seq-func", func(b *testing.B) { run(b, func() { seqScanFunc(s, addInt64) }) })
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		run(b, func() { magpie.Scan(p, s, addInt64) })
	})
	b.Run("impl=prefixsum", func(b *testing.B) {
		p := benchPool(b)
		run(b, func() { magpie.PrefixSum(p, s) })
	})
	b.Run("impl=waitgroup", func(b *testing.B) { run(b, func() { scanWaitGroup(s) }) })
	b.Run("impl=ceiling-1", func(b *testing.B) { run(b, func() { seqApplyFunc(s, addInt64) }) })
	b.Run("impl=ceiling-2", func(b *testing.B) {
		run(b, func() {
			var wg sync.WaitGroup
			wg.Go(func() { seqApplyFunc(s[:scanN/2], addInt64) })
			seqApplyFunc(s[scanN/2:], addInt64)
			wg.Wait()
		})
	})
	b.Run("impl=mem-seq", func(b *testing.B) { run(b, func() { seqAddOne(s) }) })
	b.Run("impl=mem-par", func(b *testing.B) {
		run(b, func() {
			var wg sync.WaitGroup
			wg.Go(func() { seqAddOne(s[:scanN/2]) })
			seqAddOne(s[scanN/2:])
			wg.Wait()
		})
	})
}

// pickRec is the record BenchmarkMinFunc and BenchmarkMaxFunc pick from.
type pickRec struct {
	key  int64
	name string
}

// pickByKey orders pickRecs by key.
func pickByKey(a, b pickRec) int { return cmp.Compare(a.key, b.key) }

// BenchmarkMinFunc: the first minimum of 1M records by one field. Here and
// in the families below, impl=waitgroup is the same work by hand in one
// chunk per GOMAXPROCS on goroutines joined with sync.WaitGroup.
func BenchmarkMinFunc(b *testing.B) {
	benchPickFunc(b, slices.MinFunc[[]pickRec], magpie.MinFunc[[]pickRec])
}

// BenchmarkMaxFunc is BenchmarkMinFunc for the first maximum.
func BenchmarkMaxFunc(b *testing.B) {
	benchPickFunc(b, slices.MaxFunc[[]pickRec], magpie.MaxFunc[[]pickRec])
}

// benchPickFunc times seq (slices.MinFunc or MaxFunc), its magpie
// counterpart, and the chunks' picks picked again by seq.
func benchPickFunc(b *testing.B, seq func([]pickRec, func(a, b pickRec) int) pickRec,
	par func(forkjoin.Runner, []pickRec, func(a, b pickRec) int, ...magpie.Option) pickRec) {
	r := benchRand(11)
	s := make([]pickRec, helpN)
	for i := range s {
		s[i] = pickRec{r.Int64N(1 << 40), ""}
	}
	want := seq(s, pickByKey)
	check := func(b *testing.B, got pickRec) {
		if got != want {
			b.Fatalf("got %v, want %v", got, want)
		}
	}
	b.Run("impl=seq", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			check(b, seq(s, pickByKey))
		}
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		b.ReportAllocs()
		for b.Loop() {
			check(b, par(p, s, pickByKey))
		}
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			// The chunks' first picks, in order: the first of their picks
			// is the slice's first.
			check(b, seq(chunkResults(len(s), func(lo, hi int) pickRec { return seq(s[lo:hi], pickByKey) }), pickByKey))
		}
	})
}

// BenchmarkFilterMap parses the numeric half of 1M strings.
func BenchmarkFilterMap(b *testing.B) {
	in := make([]string, helpN)
	for i := range in {
		if i%2 == 0 {
			in[i] = strconv.Itoa(i)
		} else {
			in[i] = "x" + strconv.Itoa(i)
		}
	}
	parse := func(s string) (int, bool) { n, err := strconv.Atoi(s); return n, err == nil }
	b.Run("impl=seq", func(b *testing.B) {
		for b.Loop() {
			var out []int
			for _, x := range in {
				if n, ok := parse(x); ok {
					out = append(out, n)
				}
			}
		}
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		for b.Loop() {
			magpie.FilterMap(p, in, parse)
		}
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		for b.Loop() {
			_ = slices.Concat(chunkResults(len(in), func(lo, hi int) []int {
				var out []int
				for _, x := range in[lo:hi] {
					if n, ok := parse(x); ok {
						out = append(out, n)
					}
				}
				return out
			})...)
		}
	})
}

// BenchmarkMap2 multiplies two 1M float64 slices element by element.
func BenchmarkMap2(b *testing.B) {
	x, y := benchFloats(helpN, 12), benchFloats(helpN, 13)
	mul := func(a, b float64) float64 { return a * b }
	b.Run("impl=seq", func(b *testing.B) {
		for b.Loop() {
			out := make([]float64, len(x))
			for i := range x {
				out[i] = mul(x[i], y[i])
			}
			mapSink = out
		}
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		for b.Loop() {
			mapSink = magpie.Map2(p, x, y, mul)
		}
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		for b.Loop() {
			out := make([]float64, len(x))
			forChunks(new(sync.WaitGroup), len(x), func(_, lo, hi int) {
				for i := lo; i < hi; i++ {
					out[i] = mul(x[i], y[i])
				}
			})
			mapSink = out
		}
	})
}

// fmtInput is the input of BenchmarkMapInit and BenchmarkForInit: 1M ints.
var fmtInput = sync.OnceValue(func() []int64 {
	in := make([]int64, helpN)
	for i := range in {
		in[i] = int64(i) * 7919
	}
	return in
})

// fmtBuf is the per-piece state of BenchmarkMapInit and BenchmarkForInit: a
// scratch buffer.
func fmtBuf() *[]byte { buf := make([]byte, 0, 32); return &buf }

// fmtHex formats x in hex into buf and returns the length.
func fmtHex(buf *[]byte, x int64) int {
	*buf = strconv.AppendInt((*buf)[:0], x, 16)
	return len(*buf)
}

// BenchmarkMapInit formats 1M ints into a scratch buffer per piece.
func BenchmarkMapInit(b *testing.B) {
	in := fmtInput()
	newBuf, format := fmtBuf, fmtHex
	b.Run("impl=seq", func(b *testing.B) {
		for b.Loop() {
			buf := newBuf()
			out := make([]int, len(in))
			for i, x := range in {
				out[i] = format(buf, x)
			}
		}
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		for b.Loop() {
			magpie.MapInit(p, in, newBuf, format)
		}
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		for b.Loop() {
			out := make([]int, len(in))
			forChunks(new(sync.WaitGroup), len(in), func(_, lo, hi int) {
				buf := newBuf()
				for i := lo; i < hi; i++ {
					out[i] = format(buf, in[i])
				}
			})
		}
	})
}
