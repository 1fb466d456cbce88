package magpie

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// runnerCalls calls every helper that takes a Runner on r with n
// elements (or functions, for Do), and checks its result against the
// sequential one (the stable sorts with ties: slices.SortStableFunc's
// order). Shared by the tests of what every helper does with an odd
// Runner: nil, a nil *Worker, a closed pool, one closing meanwhile. t may
// be a goT in a goroutine other than the test's.
func runnerCalls(t require.TestingT, n int, opts ...Option) map[string]func(r forkjoin.Runner) {
	in := make([]int, n)
	for i := range in {
		in[i] = (i * 7919) % (n + 1)
	}
	sorted := slices.Clone(in)
	slices.Sort(sorted)
	sum := 0
	for _, x := range in {
		sum += x
	}
	odd := func(x int) bool { return x%2 == 1 }
	prefix := slices.Clone(in)
	for i := 1; i < n; i++ {
		prefix[i] += prefix[i-1]
	}
	byTens := func(a, b int) int { return cmp.Compare(a/10, b/10) } // ties
	stable := slices.Clone(in)
	slices.SortStableFunc(stable, byTens)
	return map[string]func(r forkjoin.Runner){
		"Do": func(r forkjoin.Runner) {
			fns := make([]func(), n)
			seen := make([]bool, n)
			for i := range fns {
				fns[i] = func() { seen[i] = true }
			}
			Do(r, fns...)
			require.NotContains(t, seen, false)
		},
		"For": func(r forkjoin.Runner) {
			out := make([]int, n)
			For(r, n, func(i int) { out[i] = in[i] }, opts...)
			require.Equal(t, in, out)
		},
		"ForW": func(r forkjoin.Runner) {
			out := make([]int, n)
			ForW(r, n, func(_ forkjoin.Runner, i int) { out[i] = in[i] }, opts...)
			require.Equal(t, in, out)
		},
		"ForRangeW": func(r forkjoin.Runner) {
			out := make([]int, n)
			ForRangeW(r, n, func(_ forkjoin.Runner, lo, hi int) { copy(out[lo:hi], in[lo:hi]) }, opts...)
			require.Equal(t, in, out)
		},
		"ForRange": func(r forkjoin.Runner) {
			out := make([]int, n)
			ForRange(r, n, func(lo, hi int) { copy(out[lo:hi], in[lo:hi]) }, opts...)
			require.Equal(t, in, out)
		},
		"Map": func(r forkjoin.Runner) {
			require.Equal(t, in, Map(r, in, func(x int) int { return x }, opts...))
		},
		"MapInPlace": func(r forkjoin.Runner) {
			s := slices.Clone(in)
			MapInPlace(r, s, func(x int) int { return x + 1 }, opts...)
			for i := range s {
				require.Equal(t, in[i]+1, s[i])
			}
		},
		"Reduce": func(r forkjoin.Runner) {
			require.Equal(t, sum, Reduce(r, in, 0, func(a, x int) int { return a + x }, add[int], opts...))
		},
		"ReduceWith": func(r forkjoin.Runner) {
			require.Equal(t, sum, ReduceWith(r, in, func() int { return 0 }, func(a, x int) int { return a + x }, add[int], opts...))
		},
		"ReduceRange": func(r forkjoin.Runner) {
			require.Equal(t, sum, ReduceRange(r, n, 0, func(acc, lo, hi int) int {
				for _, x := range in[lo:hi] {
					acc += x
				}
				return acc
			}, add[int], opts...))
		},
		"Filter": func(r forkjoin.Runner) {
			var want []int
			for _, x := range in {
				if odd(x) {
					want = append(want, x)
				}
			}
			require.Equal(t, want, Filter(r, in, odd, opts...))
		},
		"Sum": func(r forkjoin.Runner) { require.Equal(t, sum, Sum(r, in, opts...)) },
		"Min": func(r forkjoin.Runner) {
			got := Min(r, in, opts...)
			require.Equal(t, slices.Min(in), got)
		},
		"Max": func(r forkjoin.Runner) {
			got := Max(r, in, opts...)
			require.Equal(t, slices.Max(in), got)
		},
		"Count": func(r forkjoin.Runner) {
			want := 0
			for _, x := range in {
				if odd(x) {
					want++
				}
			}
			require.Equal(t, want, Count(r, in, odd, opts...))
		},
		"ForInit": func(r forkjoin.Runner) {
			out := make([]int, n)
			ForInit(r, n, func() *int { return new(int) }, func(_ *int, i int) { out[i] = in[i] }, opts...)
			require.Equal(t, in, out)
		},
		"MapInit": func(r forkjoin.Runner) {
			require.Equal(t, in, MapInit(r, in, func() int { return 1 }, func(one, x int) int { return x * one }, opts...))
		},
		"MinFunc": func(r forkjoin.Runner) {
			if n == 0 {
				MinFunc(r, in, cmp.Compare[int], opts...) // the nil *Worker message comes first
				return
			}
			require.Equal(t, slices.Min(in), MinFunc(r, in, cmp.Compare[int], opts...))
		},
		"MaxFunc": func(r forkjoin.Runner) {
			if n == 0 {
				MaxFunc(r, in, cmp.Compare[int], opts...)
				return
			}
			require.Equal(t, slices.Max(in), MaxFunc(r, in, cmp.Compare[int], opts...))
		},
		"Scan": func(r forkjoin.Runner) {
			s := slices.Clone(in)
			Scan(r, s, add[int], opts...)
			require.Equal(t, prefix, s)
		},
		"PrefixSum": func(r forkjoin.Runner) {
			s := slices.Clone(in)
			PrefixSum(r, s, opts...)
			require.Equal(t, prefix, s)
		},
		"FilterMap": func(r forkjoin.Runner) {
			var want []int
			for _, x := range in {
				if odd(x) {
					want = append(want, x*2)
				}
			}
			require.Equal(t, want, FilterMap(r, in, func(x int) (int, bool) { return x * 2, odd(x) }, opts...))
		},
		"Map2": func(r forkjoin.Runner) {
			require.Equal(t, in, Map2(r, in, in, func(x, _ int) int { return x }, opts...))
		},
		"ForChunks": func(r forkjoin.Runner) {
			out := make([]int, n)
			ForChunks(r, n, 100, func(lo, hi int) { copy(out[lo:hi], in[lo:hi]) }, opts...)
			require.Equal(t, in, out)
		},
		"ForErr": func(r forkjoin.Runner) {
			out := make([]int, n)
			require.NoError(t, ForErr(r, n, func(i int) error { out[i] = in[i]; return nil }, opts...))
			require.Equal(t, in, out)
		},
		"ForContext": func(r forkjoin.Runner) {
			out := make([]int, n)
			require.NoError(t, ForContext(context.Background(), r, n, func(_ context.Context, i int) error {
				out[i] = in[i]
				return nil
			}, opts...))
			require.Equal(t, in, out)
		},
		"MapErr": func(r forkjoin.Runner) {
			got, err := MapErr(r, in, func(x int) (int, error) { return x, nil }, opts...)
			require.NoError(t, err)
			require.Equal(t, in, got)
		},
		"MapContext": func(r forkjoin.Runner) {
			got, err := MapContext(context.Background(), r, in, func(_ context.Context, x int) (int, error) { return x, nil }, opts...)
			require.NoError(t, err)
			require.Equal(t, in, got)
		},
		"IndexFunc": func(r forkjoin.Runner) {
			require.Equal(t, slices.IndexFunc(in, odd), IndexFunc(r, in, odd, opts...))
		},
		"ContainsFunc": func(r forkjoin.Runner) {
			require.Equal(t, slices.ContainsFunc(in, odd), ContainsFunc(r, in, odd, opts...))
		},
		"Any": func(r forkjoin.Runner) {
			require.Equal(t, slices.ContainsFunc(in, odd), Any(r, in, odd, opts...))
		},
		"All": func(r forkjoin.Runner) {
			require.Equal(t, !slices.ContainsFunc(in, func(x int) bool { return x < 0 }),
				All(r, in, func(x int) bool { return x >= 0 }, opts...))
		},
		"Sort": func(r forkjoin.Runner) {
			s := slices.Clone(in)
			Sort(r, s, opts...)
			require.Equal(t, sorted, s)
		},
		"SortFunc": func(r forkjoin.Runner) {
			s := slices.Clone(in)
			SortFunc(r, s, cmp.Compare[int], opts...)
			require.Equal(t, sorted, s)
		},
		"SortStableFunc": func(r forkjoin.Runner) {
			s := slices.Clone(in)
			SortStableFunc(r, s, byTens, opts...)
			require.Equal(t, stable, s)
		},
		"SortByKey": func(r forkjoin.Runner) {
			s := slices.Clone(in)
			SortByKey(r, s, func(x int) int { return x }, opts...)
			require.Equal(t, sorted, s)
		},
		"SortStableByKey": func(r forkjoin.Runner) {
			s := slices.Clone(in)
			SortStableByKey(r, s, func(x int) int { return x / 10 }, opts...)
			require.Equal(t, stable, s)
		},
		"ForSeq": func(r forkjoin.Runner) {
			out := make([]int, n)
			ForSeq(r, (&seqProbe{}).seq(n), func(i int) { out[i] = in[i] }, opts...)
			require.Equal(t, in, out)
		},
		"MapSeq": func(r forkjoin.Runner) {
			got := slices.AppendSeq([]int{}, MapSeq(r, slices.Values(in), func(x int) int { return x }, opts...))
			require.Equal(t, in, got)
		},
	}
}

// goT is the t of require calls made off the test's goroutine (in a pool
// task, or a goroutine of a stress test): a failure is reported with
// t.Errorf and unwinds with a panic of errGoTFailed, for the caller to
// recover, instead of calling t.FailNow, which only the test's goroutine
// may call.
type goT struct{ t *testing.T }

var errGoTFailed = errors.New("a check failed (reported above)")

func (g goT) Errorf(format string, args ...any) { g.t.Errorf(format, args...) }
func (g goT) FailNow()                          { panic(errGoTFailed) }

// TestNilPoolMeansDefault: every helper given a nil Runner or a nil
// *forkjoin.Pool runs on forkjoin.Default() (a large input with Grain(64)
// is submitted to it: its Submitted count grows).
func TestNilPoolMeansDefault(t *testing.T) {
	const n = 20000 // above every sequential cutoff with Grain(64), sorts included
	var nilPool *forkjoin.Pool
	for name, call := range runnerCalls(t, n, Grain(64)) {
		for _, r := range []forkjoin.Runner{nil, nilPool} {
			t.Run(fmt.Sprintf("%s/%#v", name, r), func(t *testing.T) {
				before := forkjoin.Default().Stats().Submitted
				call(r)
				require.Greater(t, forkjoin.Default().Stats().Submitted, before, "submitted to Default()")
			})
		}
	}
}

// TestNilWorkerOneMessage: every helper given a Runner holding a nil
// *forkjoin.Worker panics with "magpie: <name> called with a nil *Worker",
// the wording of packages forkjoin and task, whatever the input size (even
// an empty one). Before, the helpers read a
// nil *Worker as Default() (silently, on their pool path), ran a small
// input inline without looking at it, or (the sorts) panicked with
// forkjoin.Run's message.
func TestNilWorkerOneMessage(t *testing.T) {
	var w *forkjoin.Worker
	for _, n := range []int{0, 1, 10, 20000} {
		for name, call := range runnerCalls(t, n) {
			t.Run(fmt.Sprintf("%s/n=%d", name, n), func(t *testing.T) {
				require.PanicsWithValue(t, "magpie: "+name+" called with a nil *Worker", func() { call(w) })
			})
		}
	}
}

// TestClosedPoolRunsEveryHelperOnCaller: every helper given a pool closed
// before the call runs on the calling goroutine, sequentially, and
// returns what it returns on an open pool (runnerCalls checks each result
// against the sequential one), without panicking, whatever the input size
// and options: a helper is a computation, not a submission (parallelism;
// docs/design.md, "Messages"). On 2bbbbe3 every call panicked with
// forkjoin.ErrClosed before running anything, which stopped a loop whose
// pool closed while it ran as soon as its body called a helper with that
// pool (TestRev26ForWBodyGetsClosedPool). Before 85170de some paths ran
// and others panicked.
//
// From a task the closing pool accepted before Close, the same calls with
// the *Pool run too and return the sequential results (case "own task").
func TestClosedPoolRunsEveryHelperOnCaller(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	p.Close()
	require.True(t, p.Closed())
	sizes := []int{0, 1, 100, 5000}
	grains := [][]Option{nil, {Grain(16)}}
	for _, n := range sizes {
		for _, opts := range grains {
			for name := range runnerCalls(t, n, opts...) {
				t.Run(fmt.Sprintf("%s/n=%d/grain=%v", name, n, opts != nil), func(t *testing.T) {
					call := runnerCalls(t, n, opts...)[name] // failing this subtest
					if n == 0 && slices.Contains([]string{"Min", "Max", "MinFunc", "MaxFunc"}, name) {
						// An empty list panics by design.
						require.PanicsWithValue(t, "magpie: "+name+" called with an empty list", func() { call(p) })
						return
					}
					require.NotPanics(t, func() { call(p) })
				})
			}
		}
	}

	t.Run("own task", func(t *testing.T) {
		q := forkjoin.New(forkjoin.WithParallelism(2))
		release := make(chan struct{})
		var failed []string // written by the task only, read after Get
		f := forkjoin.Submit(q, func(*forkjoin.Worker) int {
			<-release
			for _, n := range sizes[1:] { // n = 0: Min and Max panic on an empty list by design
				for _, opts := range grains {
					for name, call := range runnerCalls(goT{t}, n, opts...) {
						if v := recoverValue(func() { call(q) }); v != nil {
							failed = append(failed, fmt.Sprintf("%s/n=%d/grain=%v: %v", name, n, opts != nil, v))
						}
					}
				}
			}
			return len(failed)
		})
		closed := make(chan struct{})
		go func() { q.Close(); close(closed) }()
		testenv.WaitUntil(t, "Close begun", q.Closed)
		close(release)
		var err error
		testenv.Within(t, "the task on the closing pool", func() { _, err = f.Get(context.Background()) })
		require.NoError(t, err)
		require.Empty(t, failed[:min(len(failed), 5)], "%d calls failed", len(failed))
		testenv.Within(t, "Close", func() { <-closed })
	})
}
