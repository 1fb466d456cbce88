package bench

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/magpie-go/magpie"
)

const (
	sortN       = 10_000_000 // BenchmarkSortInt64: 80 MB of input
	stableN     = 1_000_000  // BenchmarkSortStableFunc: 24 MB of records
	stableKeys  = 100_000    // about ten records per key, so stability matters
	minSortLeaf = 1 << 13
)

// benchSortInput is the shared random input of BenchmarkSortInt64, generated once
// per process; every iteration sorts a fresh copy of it.
var benchSortInput = sync.OnceValue(func() []int64 {
	r := benchRand(1)
	s := make([]int64, sortN)
	for i := range s {
		s[i] = r.Int64()
	}
	return s
})

// bRec is the record of the stable sort: sorted by Key, ID records the input
// order so the check can see that equal keys kept it.
type bRec struct {
	Key  int64
	ID   int64
	Data int64
}

func cmpBRec(a, b bRec) int { return cmp.Compare(a.Key, b.Key) }

var stableInput = sync.OnceValue(func() []bRec {
	r := benchRand(2)
	s := make([]bRec, stableN)
	for i := range s {
		s[i] = bRec{Key: r.Int64N(stableKeys), ID: int64(i), Data: r.Int64()}
	}
	return s
})

// sortGrain is the leaf size of the goroutine merge sorts: a few leaves per
// core, as a user tuning by hand would choose, and never tiny.
func sortGrain(n int) int {
	return max(n/(4*runtime.GOMAXPROCS(0)), minSortLeaf)
}

// mergeSortOrdered is the goroutine baseline for Sort: a merge sort that
// sorts the two halves in parallel (slices.Sort below the grain) and merges
// them sequentially, ping-ponging between s and buf so that no level copies
// back. It is the parallel sort a Go programmer writes by hand.
func mergeSortOrdered[E cmp.Ordered](newGroup func() benchGroup, s, buf []E, grain int) {
	msortOrdered(newGroup, s, buf, grain, false)
}

// msortOrdered sorts s, leaving the result in buf if intoBuf, else in s.
func msortOrdered[E cmp.Ordered](newGroup func() benchGroup, s, buf []E, grain int, intoBuf bool) {
	if len(s) <= grain {
		slices.Sort(s)
		if intoBuf {
			copy(buf, s)
		}
		return
	}
	h := len(s) / 2
	benchPar2(newGroup,
		func() { msortOrdered(newGroup, s[:h], buf[:h], grain, !intoBuf) },
		func() { msortOrdered(newGroup, s[h:], buf[h:], grain, !intoBuf) })
	src, dst := buf, s // the halves were left in buf
	if intoBuf {
		src, dst = s, buf
	}
	mergeOrdered(dst, src[:h], src[h:])
}

// mergeOrdered merges the sorted a and b into dst, taking from a on ties.
func mergeOrdered[E cmp.Ordered](dst, a, b []E) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// mergeSortStable is the goroutine baseline for SortStableFunc: the same
// merge sort with slices.SortStableFunc leaves and a merge that takes the
// left element on ties, which keeps it stable.
func mergeSortStable[E any](newGroup func() benchGroup, s, buf []E, cmp func(a, b E) int, grain int) {
	msortStable(newGroup, s, buf, cmp, grain, false)
}

func msortStable[E any](newGroup func() benchGroup, s, buf []E, cmp func(a, b E) int, grain int, intoBuf bool) {
	if len(s) <= grain {
		slices.SortStableFunc(s, cmp)
		if intoBuf {
			copy(buf, s)
		}
		return
	}
	h := len(s) / 2
	benchPar2(newGroup,
		func() { msortStable(newGroup, s[:h], buf[:h], cmp, grain, !intoBuf) },
		func() { msortStable(newGroup, s[h:], buf[h:], cmp, grain, !intoBuf) })
	src, dst := buf, s
	if intoBuf {
		src, dst = s, buf
	}
	mergeFunc(dst, src[:h], src[h:], cmp)
}

// mergeFunc merges the sorted a and b into dst by cmp, taking from a on
// ties (which keeps the sort stable). The baselines keep their own merges
// rather than call magpie's, so that they measure only what a user writes.
func mergeFunc[E any](dst, a, b []E, cmp func(a, b E) int) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if cmp(b[j], a[i]) < 0 {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// runSort times sortFn on a fresh copy of src per iteration (the copy is not
// timed) and checks the last result with check.
func runSort[E any](b *testing.B, src []E, sortFn func([]E), check func([]E) bool) {
	b.Helper()
	b.ReportAllocs()
	work := make([]E, len(src))
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		copy(work, src)
		b.StartTimer()
		sortFn(work)
	}
	b.StopTimer()
	if !check(work) {
		b.Fatal("result is not sorted as the standard library sorts it")
	}
}

// BenchmarkSortInt64 sorts 10M random int64: magpie.Sort (the radix sort)
// and magpie.Sort with InPlace (the quicksort) against slices.Sort and
// goroutine merge sorts.
func BenchmarkSortInt64(b *testing.B) {
	src := benchSortInput()
	warmHeap(8 * len(src))
	sorted := func(s []int64) bool { return slices.IsSorted(s) }
	b.Run("impl=seq", func(b *testing.B) {
		runSort(b, src, slices.Sort[[]int64], sorted)
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		runSort(b, src, func(s []int64) { magpie.Sort(p, s) }, sorted)
	})
	b.Run("impl=magpie-inplace", func(b *testing.B) {
		p := benchPool(b)
		runSort(b, src, func(s []int64) { magpie.Sort(p, s, magpie.InPlace()) }, sorted)
	})
	for _, bl := range goroutineBaselines {
		b.Run("impl="+bl.name, func(b *testing.B) {
			runSort(b, src, func(s []int64) {
				mergeSortOrdered(bl.newGroup, s, make([]int64, len(s)), sortGrain(len(s)))
			}, sorted)
		})
	}
}

// benchStableSorted reports whether s is ordered by Key with equal keys in input
// (ID) order.
func benchStableSorted(s []bRec) bool {
	for i := 1; i < len(s); i++ {
		if c := cmpBRec(s[i-1], s[i]); c > 0 || c == 0 && s[i-1].ID > s[i].ID {
			return false
		}
	}
	return true
}

// BenchmarkSortStableFunc sorts 1M 24-byte records by a key with about ten
// records per value: magpie.SortStableFunc against slices.SortStableFunc and
// goroutine merge sorts.
func BenchmarkSortStableFunc(b *testing.B) {
	src := stableInput()
	warmHeap(int(unsafe.Sizeof(bRec{})) * len(src))
	b.Run("impl=seq", func(b *testing.B) {
		runSort(b, src, func(s []bRec) { slices.SortStableFunc(s, cmpBRec) }, benchStableSorted)
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		runSort(b, src, func(s []bRec) { magpie.SortStableFunc(p, s, cmpBRec) }, benchStableSorted)
	})
	for _, bl := range goroutineBaselines {
		b.Run("impl="+bl.name, func(b *testing.B) {
			runSort(b, src, func(s []bRec) {
				mergeSortStable(bl.newGroup, s, make([]bRec, len(s)), cmpBRec, sortGrain(len(s)))
			}, benchStableSorted)
		})
	}
}
