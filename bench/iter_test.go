package bench

import (
	"cmp"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/magpie-go/magpie"
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

// BenchmarkForSeqMath: for x := range seq { body(x) } with a ~50 ns body
// that writes nothing shared (it counts the rare negative results), against
// ForSeq.
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
}

// BenchmarkMapSeqMath: the results of benchMathFn over the seq consumed in
// order, as a sequential loop and through MapSeq.
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
// (keys once, a sort of pairs, a gather), and magpie.SortStableByKey.
func BenchmarkSortStableByKey(b *testing.B) {
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
			slices.SortStableFunc(s, func(x, y byKeyRec) int { return cmp.Compare(byKeyKey(x), byKeyKey(y)) })
		})
	})
	b.Run("impl=seq-cached", func(b *testing.B) {
		run(b, func(s []byKeyRec) {
			type kp struct {
				k string
				i int
			}
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
		run(b, func(s []byKeyRec) { magpie.SortStableByKey(p, s, byKeyKey) })
	})
}
