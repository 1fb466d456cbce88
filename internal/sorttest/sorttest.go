// Package sorttest holds what the sort tests of package magpie (the public
// functions) and of internal/sorts (the algorithms) share: adversarial input
// shapes, the three kinds of Runner, and a check of the three sorts against
// the standard library. Only tests import it; the library does not.
//
// Invariant: every helper here reaches the sorts only through the Sorts
// value it is given, so that the same check runs on the public API
// and on the algorithms without either package's tests copying it.
package sorttest

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// Shape generates an input of n elements of one adversarial shape.
type Shape struct {
	Name string
	Gen  func(r *rand.Rand, n int) []int
}

// Shapes are the input shapes every sort is checked on: random, sorted,
// reversed, all equal, sawtooth, few distinct, organ pipe, nearly sorted,
// sorted then random.
var Shapes = []Shape{
	{"random", func(r *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = r.Int()
		}
		return s
	}},
	{"sorted", func(_ *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		return s
	}},
	{"reversed", func(_ *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = n - i
		}
		return s
	}},
	{"equal", func(_ *rand.Rand, n int) []int { return make([]int, n) }},
	{"sawtooth", func(_ *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i % 97
		}
		return s
	}},
	{"fewDistinct", func(r *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = r.IntN(4)
		}
		return s
	}},
	{"organPipe", func(_ *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = min(i, n-1-i)
		}
		return s
	}},
	{"nearlySorted", func(r *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		for range n/100 + 1 {
			if n > 0 {
				i, j := r.IntN(n), r.IntN(n)
				s[i], s[j] = s[j], s[i]
			}
		}
		return s
	}},
	{"sortedThenRandom", func(r *rand.Rand, n int) []int {
		s := make([]int, n)
		for i := range s {
			if i < n/2 {
				s[i] = i
			} else {
				s[i] = r.IntN(n + 1)
			}
		}
		return s
	}},
}

// Item is what the stable sort sorts: by Key, with the input position Pos
// to check that equal keys kept their order.
type Item struct {
	Key, Pos int
}

// CmpItem orders Items by Key only.
func CmpItem(a, b Item) int { return cmp.Compare(a.Key, b.Key) }

// Items returns keys as Items numbered in input order, each key folded
// onto [0, mod) when mod > 0 so that equal keys, and stability, show.
func Items(keys []int, mod int) []Item {
	s := make([]Item, len(keys))
	for i, k := range keys {
		if mod > 0 {
			k %= mod
			if k < 0 {
				k = -k
			}
		}
		s[i] = Item{k, i}
	}
	return s
}

// Runner is one of the three kinds of Runner the sorts accept: Run calls
// sortFn with it.
type Runner struct {
	Name string
	Run  func(p *forkjoin.Pool, sortFn func(r forkjoin.Runner))
}

// Runners are the pool itself, a worker of it (from inside a task), and nil
// (forkjoin.Default()).
var Runners = []Runner{
	{"pool", func(p *forkjoin.Pool, sortFn func(forkjoin.Runner)) { sortFn(p) }},
	{"worker", func(p *forkjoin.Pool, sortFn func(forkjoin.Runner)) {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
			sortFn(w)
			return struct{}{}
		})
	}},
	{"nil", func(_ *forkjoin.Pool, sortFn func(forkjoin.Runner)) { sortFn(nil) }},
}

// Pool starts a pool of n workers, closed when the test ends.
func Pool(t testing.TB, n int) *forkjoin.Pool {
	p := forkjoin.New(forkjoin.WithParallelism(n))
	t.Cleanup(p.Close)
	return p
}

// Sorts are the sorts under test: package magpie's public functions, or the
// algorithms of internal/sorts. grain 0 means none given (adaptive leaves).
type Sorts struct {
	Sort       func(r forkjoin.Runner, s []int, grain int, inPlace bool)
	Func       func(r forkjoin.Runner, s []int, cmp func(a, b int) int, grain int)
	StableFunc func(r forkjoin.Runner, s []Item, cmp func(a, b Item) int, grain int)
}

// CheckAll sorts keys on r with Sort (by radix for large ints), Sort in
// place (the quicksort), Func (descending) and StableFunc (keys folded onto
// a few values, so that stability is visible), and requires the standard
// library's result from each.
func CheckAll(t *testing.T, so Sorts, r forkjoin.Runner, keys []int, grain int) {
	t.Helper()
	want := slices.Clone(keys)
	slices.Sort(want)

	got := slices.Clone(keys)
	so.Sort(r, got, grain, false)
	require.Equal(t, want, got, "Sort")

	got = slices.Clone(keys)
	so.Sort(r, got, grain, true)
	require.Equal(t, want, got, "Sort in place")

	got = slices.Clone(keys)
	so.Func(r, got, func(a, b int) int { return cmp.Compare(b, a) }, grain)
	slices.Reverse(got)
	require.Equal(t, want, got, "Func (descending)")

	items := Items(keys, 7)
	wantItems := slices.Clone(items)
	slices.SortStableFunc(wantItems, CmpItem)
	so.StableFunc(r, items, CmpItem, grain)
	require.Equal(t, wantItems, items, "StableFunc")
}
