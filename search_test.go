package magpie

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// checkSearch compares IndexFunc, ContainsFunc, Any and All on s with
// their sequential twins from package slices.
func checkSearch(r forkjoin.Runner, s []int, pred func(int) bool, opts []Option) error {
	if got, want := IndexFunc(r, s, pred, opts...), slices.IndexFunc(s, pred); got != want {
		return fmt.Errorf("IndexFunc = %d, want %d", got, want)
	}
	want := slices.ContainsFunc(s, pred)
	if got := ContainsFunc(r, s, pred, opts...); got != want {
		return fmt.Errorf("ContainsFunc = %v, want %v", got, want)
	}
	if got := Any(r, s, pred, opts...); got != want {
		return fmt.Errorf("Any = %v, want %v", got, want)
	}
	wantAll := !slices.ContainsFunc(s, func(x int) bool { return !pred(x) })
	if got := All(r, s, pred, opts...); got != wantAll {
		return fmt.Errorf("All = %v, want %v", got, wantAll)
	}
	return nil
}

// TestSearchMatchesSequential checks the search helpers against package
// slices for every size 0..300, sizes around the thresholds and 1e5 and
// 1e6 (forEachConfig), with no match, one match at the start, the middle
// and the end, many matches (the first one wins), and every element
// matching.
func TestSearchMatchesSequential(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		s := ints(n) // values repeat above 1009 elements: a value's first index is the answer
		preds := map[string]func(int) bool{
			"none":  func(x int) bool { return x < 0 },
			"every": func(x int) bool { return x >= 0 },
			"many":  func(x int) bool { return x%7 == 3 },
		}
		for _, k := range []int{0, n / 2, n - 1} {
			if k >= 0 && k < n {
				v := s[k]
				preds[fmt.Sprint("at", k)] = func(x int) bool { return x == v }
			}
		}
		for name, pred := range preds {
			if err := checkSearch(r, s, pred, opts); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	})
}

// TestSearchRandom: large random inputs (smaller under -race) with a
// random target, random grain and every runner kind, against package
// slices.
func TestSearchRandom(t *testing.T) {
	p, single := testPools(t)
	rng := rand.New(rand.NewPCG(3, 4))
	maxN := 500_000
	if testenv.Race {
		maxN = 50_000
	}
	for round := range 12 {
		n := 100_000 + rng.IntN(maxN)
		if testenv.Race {
			n = 1 + rng.IntN(maxN)
		}
		s := make([]int, n)
		for i := range s {
			s[i] = rng.IntN(10 * n)
		}
		target := rng.IntN(10 * n)
		pred := func(x int) bool { return x == target }
		g := grainOpts[round%len(grainOpts)]
		for _, kind := range runnerKinds(p, single) {
			var err error
			kind.call(func(r forkjoin.Runner) { err = checkSearch(r, s, pred, g.opts) })
			require.NoError(t, err, "%s %s n=%d target=%d", kind.name, g.name, n, target)
		}
	}
}

// TestSearchStopsOnceDecided: once a match is recorded (the test watches
// the bound through search, the helpers' core, with a limit of its own),
// a call of pred at an index above the match is late; each worker other
// than the one that found the match makes at most one late call, so late
// calls <= parallelism-1. For IndexFunc (pieces above the match stop, those
// below run on) and for Any (everything stops).
func TestSearchStopsOnceDecided(t *testing.T) {
	p, single := testPools(t)
	n := 300_000
	if testenv.Race {
		n = 30_000
	}
	// The elements are the indices, so that pred knows where it is.
	idx := make([]int, n)
	for j := range idx {
		idx[j] = j
	}
	for _, kind := range runnerKinds(p, single) {
		for _, g := range grainOpts[:4] {
			for _, m := range []int{0, 1000, n / 3, n - 1} {
				for _, anywhere := range []bool{false, true} {
					kind.call(func(r forkjoin.Runner) {
						lim := newRangeLimit(n)
						var late, below atomic.Int64
						search(r, idx, func(j int) bool {
							if j == m {
								return true
							}
							if j > m && lim.load() <= m {
								late.Add(1)
							}
							if j < m {
								below.Add(1)
							}
							spin(20)
							return false
						}, true, anywhere, collectOptions(g.opts).grain, lim)
						what := fmt.Sprintf("%s %s m=%d anywhere=%v", kind.name, g.name, m, anywhere)
						require.LessOrEqual(t, late.Load(), int64(parallelismOf(r)-1), what)
						if anywhere {
							require.Equal(t, 0, lim.load(), what)
						} else {
							require.Equal(t, m, lim.load(), what)
							require.Equal(t, int64(m), below.Load(), what+": every index below the match is tested")
						}
					})
				}
			}
		}
	}
}

// TestSearchAllMatchBound: when every element decides the answer (Any and
// ContainsFunc with every element matching, All with none), each worker
// calls pred once at most: its own decision stops it, and every piece it
// takes afterwards sees the bound.
func TestSearchAllMatchBound(t *testing.T) {
	p, single := testPools(t)
	for _, kind := range runnerKinds(p, single) {
		for _, g := range grainOpts {
			for _, n := range []int{1, 10, SequentialThreshold + 1, 100_000} {
				s := make([]int, n)
				kind.call(func(r forkjoin.Runner) {
					var calls atomic.Int64
					count := func(want bool) func(int) bool {
						return func(int) bool { calls.Add(1); return want }
					}
					what := fmt.Sprintf("%s %s n=%d", kind.name, g.name, n)
					require.True(t, Any(r, s, count(true), g.opts...), what)
					require.LessOrEqual(t, calls.Swap(0), int64(parallelismOf(r)), what)
					require.True(t, ContainsFunc(r, s, count(true), g.opts...), what)
					require.LessOrEqual(t, calls.Swap(0), int64(parallelismOf(r)), what)
					require.False(t, All(r, s, count(false), g.opts...), what)
					require.LessOrEqual(t, calls.Swap(0), int64(parallelismOf(r)), what)
				})
			}
		}
	}
}

// TestSearchPanics: a panic in pred reaches the caller as a
// *forkjoin.PanicError for every size and runner.
func TestSearchPanics(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(3))
	defer p.Close()
	single := forkjoin.New(forkjoin.WithParallelism(1))
	defer single.Close()
	boom := errors.New("boom")
	calls := map[string]func(r forkjoin.Runner, s []int, pred func(int) bool, opts ...Option){
		"IndexFunc": func(r forkjoin.Runner, s []int, pred func(int) bool, opts ...Option) { IndexFunc(r, s, pred, opts...) },
		"ContainsFunc": func(r forkjoin.Runner, s []int, pred func(int) bool, opts ...Option) {
			ContainsFunc(r, s, pred, opts...)
		},
		"Any": func(r forkjoin.Runner, s []int, pred func(int) bool, opts ...Option) { Any(r, s, pred, opts...) },
		"All": func(r forkjoin.Runner, s []int, pred func(int) bool, opts ...Option) { All(r, s, pred, opts...) },
	}
	for _, kind := range runnerKinds(p, single) {
		for _, n := range []int{1, 10, SequentialThreshold + 1, 200_000} {
			s := make([]int, n)
			for i := range s {
				s[i] = i
			}
			for _, g := range grainOpts[:2] {
				for name, call := range calls {
					var got any
					kind.call(func(r forkjoin.Runner) {
						defer func() { got = recover() }()
						call(r, s, func(x int) bool {
							if x == n/2 {
								panic(boom)
							}
							return name == "All" // All goes on while pred is true
						}, g.opts...)
					})
					pe, ok := got.(*forkjoin.PanicError)
					require.True(t, ok, "%s %s n=%d %s: recovered %T %v", name, kind.name, n, g.name, got, got)
					require.ErrorIs(t, pe, boom)
				}
			}
		}
	}
}

func TestSearchBadInput(t *testing.T) {
	require.PanicsWithValue(t, "magpie: IndexFunc called with a nil predicate", func() { IndexFunc(nil, []int{1}, nil) })
	require.PanicsWithValue(t, "magpie: ContainsFunc called with a nil predicate", func() { ContainsFunc(nil, []int{1}, nil) })
	require.PanicsWithValue(t, "magpie: Any called with a nil predicate", func() { Any(nil, []int{1}, nil) })
	require.PanicsWithValue(t, "magpie: All called with a nil predicate", func() { All(nil, []int{1}, nil) })
}

// TestScanFirstBound: search's inner loop returns the absolute index of the
// first element with pred == want, tests no element at or above the bound
// (it loads the bound before every call of pred), and returns -1 when the
// bound comes first, for every bound and match position in a small piece.
func TestScanFirstBound(t *testing.T) {
	const base, n = 100, 40
	s := make([]int, n)
	for j := range s {
		s[j] = base + j // the elements are their absolute indices
	}
	for _, want := range []bool{true, false} {
		for match := base; match <= base+n; match++ { // base+n: no match
			for b := base; b <= base+n+1; b++ {
				var bound atomic.Int64
				bound.Store(int64(b))
				var tested []int
				got := scanFirst(s, base, func(x int) bool {
					tested = append(tested, x)
					return (x == match) == want
				}, want, &bound)
				what := fmt.Sprintf("want=%v match=%d bound=%d", want, match, b)
				stop := min(match+1, b, base+n)
				require.Equal(t, stop-base, len(tested), what)
				for j, x := range tested {
					require.Equal(t, base+j, x, what+": in order")
				}
				if match < b && match < base+n {
					require.Equal(t, match, got, what)
				} else {
					require.Equal(t, -1, got, what)
				}
			}
		}
	}
}
