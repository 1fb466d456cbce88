package bench

import (
	"cmp"
	"iter"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

// Iterators and cached-key sorts: ForSeq and MapSeq over a slices.Values
// seq of 1M float64 with the ~50 ns benchMathFn (the work of
// BenchmarkMapMath, now pulled through an iter.Seq), and SortStableByKey
// of 1M records by a key that costs a formatting call, against the loops a
// Go programmer writes: a range over the seq, and slices.SortStableFunc
// computing the key in its comparator.

const (
	seqN     = 1_000_000
	byKeyN   = 200_000
	seqBench = 4 // untimed runs before the first measurement
)

var seqSink float64

// seqBatch is how many elements the goroutine baselines of the iterator
// helpers pull from the seq before they hand them to a goroutine.
const seqBatch = 4096

// seqBatches is the hand-written parallel range over a seq: pull seqBatch
// elements at a time, run work on each batch on its own goroutine, wait
// for all of them with a sync.WaitGroup, and return the batches' results
// in the seq's order.
func seqBatches[E, R any](seq iter.Seq[E], work func(batch []E) R) []R {
	var wg sync.WaitGroup
	var outs []*R // written by this goroutine only; each *R by one batch's goroutine
	batch := make([]E, 0, seqBatch)
	flush := func() {
		out, in := new(R), batch
		outs = append(outs, out)
		wg.Go(func() { *out = work(in) })
		batch = make([]E, 0, seqBatch)
	}
	for x := range seq {
		batch = append(batch, x)
		if len(batch) == seqBatch {
			flush()
		}
	}
	if len(batch) > 0 {
		flush()
	}
	wg.Wait()
	res := make([]R, len(outs))
	for i, out := range outs {
		res[i] = *out
	}
	return res
}

// BenchmarkForSeqMath: for x := range seq { body(x) } with a ~50 ns body
// that writes nothing shared (it counts the rare negative results), against
// ForSeq and against batches of the seq on goroutines (seqBatches).
func BenchmarkForSeqMath(b *testing.B) {
	in := benchFloats(seqN, 11)
	var negatives atomic.Int64
	body := func(x float64) {
		if benchMathFn(x) < 0 {
			negatives.Add(1)
		}
	}
	b.Run("impl=seq", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for x := range slices.Values(in) {
				body(x)
			}
		}
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		for range seqBench {
			magpie.ForSeq(p, slices.Values(in), body)
		}
		b.ReportAllocs()
		for b.Loop() {
			magpie.ForSeq(p, slices.Values(in), body)
		}
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			seqBatches(slices.Values(in), func(batch []float64) struct{} {
				for _, x := range batch {
					body(x)
				}
				return struct{}{}
			})
		}
	})
}

// BenchmarkMapSeqMath: the results of benchMathFn over the seq consumed in
// order, as a sequential loop, through MapSeq, and (waitgroup) mapped in
// batches on goroutines (seqBatches) and then consumed in order.
func BenchmarkMapSeqMath(b *testing.B) {
	in := benchFloats(seqN, 12)
	b.Run("impl=seq", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := 0.0
			for x := range slices.Values(in) {
				s += benchMathFn(x)
			}
			seqSink = s
		}
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		b.ReportAllocs()
		for b.Loop() {
			s := 0.0
			for v := range magpie.MapSeq(p, slices.Values(in), benchMathFn) {
				s += v
			}
			seqSink = s
		}
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			results := seqBatches(slices.Values(in), func(batch []float64) []float64 {
				out := make([]float64, len(batch))
				for j, x := range batch {
					out[j] = benchMathFn(x)
				}
				return out
			})
			s := 0.0
			for _, out := range results {
				for _, v := range out {
					s += v
				}
			}
			seqSink = s
		}
	})
}

type byKeyRec struct {
	id  int
	val float64
}

// byKeyKey is a key worth caching: the value formatted as text (as a key
// read from a record's field would be), ~100 ns.
func byKeyKey(r byKeyRec) string { return strconv.FormatFloat(r.val, 'e', 6, 64) }

// BenchmarkSortStableByKey sorts 200K records by byKeyKey: slices.SortStableFunc
// computing the key twice per comparison, the sequential cached-key sort
// (keys once, a sort of pairs, a gather), magpie.SortStableByKey, and the
// cached-key sort by hand with goroutines (waitgroup: keys and gather in
// one chunk per GOMAXPROCS, the pairs by the stable goroutine merge sort
// of BenchmarkSortStableFunc).
func BenchmarkSortStableByKey(b *testing.B) {
	benchSortByKey(b, slices.SortStableFunc[[]byKeyRec], magpie.SortStableByKey[[]byKeyRec])
}

// BenchmarkSortByKey is BenchmarkSortStableByKey for the unstable
// SortByKey: seq is slices.SortFunc, and the baselines keep their stable
// sort of (key, index) pairs, which SortByKey's result may equal.
func BenchmarkSortByKey(b *testing.B) {
	benchSortByKey(b, slices.SortFunc[[]byKeyRec], magpie.SortByKey[[]byKeyRec])
}

// benchSortByKey times seqSort with a key-computing comparator, the
// cached-key sorts, and par.
func benchSortByKey(b *testing.B, seqSort func([]byKeyRec, func(x, y byKeyRec) int),
	par func(forkjoin.Runner, []byKeyRec, func(byKeyRec) string, ...magpie.Option)) {
	r := benchRand(13)
	in := make([]byKeyRec, byKeyN)
	for i := range in {
		in[i] = byKeyRec{i, r.Float64()}
	}
	work := make([]byKeyRec, byKeyN)
	run := func(b *testing.B, sort func(s []byKeyRec)) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			copy(work, in)
			b.StartTimer()
			sort(work)
		}
		if !slices.IsSortedFunc(work, func(a, b byKeyRec) int { return cmp.Compare(byKeyKey(a), byKeyKey(b)) }) {
			b.Fatal("not sorted")
		}
	}
	b.Run("impl=seq", func(b *testing.B) {
		run(b, func(s []byKeyRec) {
			seqSort(s, func(x, y byKeyRec) int { return cmp.Compare(byKeyKey(x), byKeyKey(y)) })
		})
	})
	type kp struct {
		k string
		i int
	}
	b.Run("impl=seq-cached", func(b *testing.B) {
		run(b, func(s []byKeyRec) {
			ks := make([]kp, len(s))
			for i, x := range s {
				ks[i] = kp{byKeyKey(x), i}
			}
			slices.SortFunc(ks, func(a, b kp) int { return cmp.Or(cmp.Compare(a.k, b.k), cmp.Compare(a.i, b.i)) })
			buf := make([]byKeyRec, len(s))
			for j, k := range ks {
				buf[j] = s[k.i]
			}
			copy(s, buf)
		})
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		run(b, func(s []byKeyRec) { par(p, s, byKeyKey) })
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		newGroup := goroutineBaselines[0].newGroup
		run(b, func(s []byKeyRec) {
			ks := make([]kp, len(s))
			forChunks(newGroup(), len(s), func(_, lo, hi int) {
				for i := lo; i < hi; i++ {
					ks[i] = kp{byKeyKey(s[i]), i}
				}
			})
			mergeSortStable(newGroup, ks, make([]kp, len(ks)), func(a, b kp) int { return cmp.Compare(a.k, b.k) }, sortGrain(len(ks)))
			buf := make([]byKeyRec, len(s))
			forChunks(newGroup(), len(s), func(_, lo, hi int) {
				for j := lo; j < hi; j++ {
					buf[j] = s[ks[j].i]
				}
			})
			copy(s, buf)
		})
	})
}
