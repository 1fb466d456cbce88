package task_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"

	"github.com/magpie-go/magpie/internal/testenv"
)

// sizes are the problem sizes every result is checked at, against the
// sequential code.
var sizes = []int{0, 1, 2, 3, 1000, 1 << 20}

// cutoffs pairs each cutoff policy with a name. The fixed grain is small
// enough that 1<<20 elements fork thousands of tasks and large enough that
// the race detector gets through them quickly.
var cutoffs = []struct {
	name string
	cut  task.Cutoff
}{
	{"fixed", task.Fixed(256)},
	{"adaptive", task.Adaptive()},
}

// forEachPool runs fn in a subtest per parallelism (1, 2, 8) and mode, on a
// fresh pool that it closes afterwards.
func forEachPool(t *testing.T, fn func(t *testing.T, p *forkjoin.Pool)) {
	for _, par := range []int{1, 2, 8} {
		for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
			t.Run(fmt.Sprintf("p=%d/%v", par, mode), func(t *testing.T) {
				p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(mode))
				defer p.Close()
				fn(t, p)
			})
		}
	}
}

// within runs fn and fails the test instead of hanging if it does not
// return within the shared hang limit (internal/testenv); a panic in fn is
// re-raised here.
func within(t *testing.T, fn func()) {
	t.Helper()
	testenv.Within(t, "the task", fn)
}

// skipBig reports whether size n is skipped on pool p: under -race the
// biggest size runs on the 2-worker LIFO pool only, to keep the run short.
func skipBig(p *forkjoin.Pool, n int) bool {
	return testenv.Race && n >= 1<<20 && (p.Parallelism() != 2 || p.Mode() != forkjoin.LIFO)
}

func iota64(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i % 1000) // small integers: every sum is exact
	}
	return xs
}

func seqSum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func fibSeq(n int) int {
	if n < 2 {
		return n
	}
	return fibSeq(n-1) + fibSeq(n-2)
}

// sumFork is SumTask written with Fork/Join instead of InvokeBoth.
type sumFork struct {
	xs  []float64
	cut task.Cutoff
}

func (s sumFork) Compute(w *forkjoin.Worker) float64 {
	if !s.cut.Split(w, len(s.xs)) {
		return seqSum(s.xs)
	}
	mid := len(s.xs) / 2
	r := task.Fork(w, sumFork{s.xs[mid:], s.cut})
	return sumFork{s.xs[:mid], s.cut}.Compute(w) + r.Join(w)
}

// sumAll splits into four parts with InvokeAll.
type sumAll struct {
	xs  []float64
	cut task.Cutoff
}

func (s sumAll) Compute(w *forkjoin.Worker) float64 {
	if len(s.xs) < 4 || !s.cut.Split(w, len(s.xs)) {
		return seqSum(s.xs)
	}
	q := len(s.xs) / 4
	rs := task.InvokeAll(w,
		sumAll{s.xs[:q], s.cut}, sumAll{s.xs[q : 2*q], s.cut},
		sumAll{s.xs[2*q : 3*q], s.cut}, sumAll{s.xs[3*q:], s.cut})
	return rs[0] + rs[1] + rs[2] + rs[3]
}

// incForkAction is IncrementTask written with ForkAction.
type incForkAction struct {
	a   []int
	cut task.Cutoff
}

func (t incForkAction) Compute(w *forkjoin.Worker) {
	if !t.cut.Split(w, len(t.a)) {
		for i := range t.a {
			t.a[i]++
		}
		return
	}
	mid := len(t.a) / 2
	f := task.ForkAction(w, incForkAction{t.a[mid:], t.cut})
	incForkAction{t.a[:mid], t.cut}.Compute(w)
	f.Join(w)
}

// incBoth is IncrementTask written with InvokeBothActions.
type incBoth struct {
	a   []int
	cut task.Cutoff
}

func (t incBoth) Compute(w *forkjoin.Worker) {
	if !t.cut.Split(w, len(t.a)) {
		for i := range t.a {
			t.a[i]++
		}
		return
	}
	mid := len(t.a) / 2
	task.InvokeBothActions(w, incBoth{t.a[:mid], t.cut}, incBoth{t.a[mid:], t.cut})
}

func TestSumMatchesSequential(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *forkjoin.Pool) {
		for _, c := range cutoffs {
			for _, n := range sizes {
				if skipBig(p, n) {
					continue
				}
				xs := iota64(n)
				want := seqSum(xs)
				within(t, func() {
					assert.Equal(t, want, task.Invoke(p, SumTask{xs, c.cut}), "InvokeBoth %s n=%d", c.name, n)
					assert.Equal(t, want, task.Invoke(p, sumFork{xs, c.cut}), "Fork %s n=%d", c.name, n)
					assert.Equal(t, want, task.Invoke(p, sumAll{xs, c.cut}), "InvokeAll %s n=%d", c.name, n)
				})
			}
		}
	})
}

func TestIncrementMatchesSequential(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *forkjoin.Pool) {
		for _, c := range cutoffs {
			for _, n := range sizes {
				if skipBig(p, n) {
					continue
				}
				a := make([]int, n)
				for i := range a {
					a[i] = i
				}
				within(t, func() {
					task.InvokeAction(p, incForkAction{a, c.cut})
					task.InvokeAction(p, incBoth{a, c.cut})
					task.InvokeAction(p, IncrementTask{a, 0, n, 256})
				})
				for i := range a {
					if a[i] != i+3 {
						t.Fatalf("%s n=%d: a[%d] = %d, want %d", c.name, n, i, a[i], i+3)
					}
				}
			}
		}
	})
}

func TestFibAndQueensMatchSequential(t *testing.T) {
	queens := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	wantQueens := []int{1, 1, 0, 0, 2, 10, 4, 40, 92, 352}
	forEachPool(t, func(t *testing.T, p *forkjoin.Pool) {
		within(t, func() {
			for _, n := range []int{0, 1, 2, 3, 15} {
				assert.Equal(t, fibSeq(n), task.Invoke(p, Fib{n}), "fib(%d)", n)
			}
			for _, c := range cutoffs {
				for i, n := range queens {
					assert.Equal(t, wantQueens[i], task.Invoke(p, Queens{N: n, Cut: c.cut}), "%s queens(%d)", c.name, n)
				}
			}
		})
	})
}

// indexTask returns its index, and counts how many ran.
type indexTask struct {
	i   int
	ran *atomic.Int64
}

func (x indexTask) Compute(*forkjoin.Worker) int {
	x.ran.Add(1)
	return x.i * 10
}

// otherTask is a second task type, to show that InvokeAll mixes types.
type otherTask string

func (x otherTask) Compute(*forkjoin.Worker) int { return len(x) }

func TestInvokeAllOrderAndSizes(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *forkjoin.Pool) {
		for _, n := range []int{0, 1, 2, 3, 7, 1000} {
			var ran atomic.Int64
			ts := make([]task.RecursiveTask[int], n)
			typed := make([]indexTask, n)
			for i := range ts {
				ts[i] = indexTask{i, &ran}
				typed[i] = indexTask{i, &ran}
			}
			var got, gotTyped []int
			var actions atomic.Int64
			within(t, func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
					got = task.InvokeAll(w, ts...)
					gotTyped = task.InvokeSlice(w, typed)
					as := make([]task.RecursiveAction, n)
					for i := range as {
						as[i] = countAction{&actions}
					}
					task.InvokeAllActions(w, as...)
					return struct{}{}
				})
			})
			require.Len(t, got, n)
			require.Len(t, gotTyped, n)
			for i := range n {
				require.Equal(t, i*10, got[i], "InvokeAll result %d of %d", i, n)
				require.Equal(t, i*10, gotTyped[i], "InvokeSlice result %d of %d", i, n)
			}
			require.EqualValues(t, 2*n, ran.Load(), "every task runs exactly once")
			require.EqualValues(t, n, actions.Load(), "every action runs exactly once")
		}
		// Mixed task types in one call, inferred without type arguments.
		got := forkjoin.Invoke(p, func(w *forkjoin.Worker) []int {
			return task.InvokeAll(w, Fib{10}, otherTask("four"), Fib{1})
		})
		require.Equal(t, []int{55, 4, 1}, got)
		both := forkjoin.Invoke(p, func(w *forkjoin.Worker) [2]int {
			x, y := task.InvokeBoth(w, Fib{12}, otherTask("abc"))
			return [2]int{x, y}
		})
		require.Equal(t, [2]int{144, 3}, both)
	})
}

type countAction struct{ n *atomic.Int64 }

func (c countAction) Compute(*forkjoin.Worker) { c.n.Add(1) }

func TestNilArguments(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer p.Close()
	// A nil *Worker: TestNilWorkerOneMessage.
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
		require.PanicsWithValue(t, "task: InvokeAll called with a nil task", func() {
			task.InvokeAll(w, Fib{1}, nil)
		})
		require.PanicsWithValue(t, "task: InvokeAllActions called with a nil action", func() {
			task.InvokeAllActions(w, nil)
		})
		return 0
	})
}

// TestInvokeFromInsideRunsInline checks that Invoke on the pool a task runs
// in does not deadlock a single worker.
func TestInvokeFromInsideRunsInline(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer p.Close()
	within(t, func() {
		got := forkjoin.Invoke(p, func(*forkjoin.Worker) int { return task.Invoke(p, Fib{12}) })
		require.Equal(t, 144, got)
	})
}

func TestFutureStaysValidAfterJoin(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	var fs []*forkjoin.Future[int]
	within(t, func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			for i := range 100 { // more than a batch of recycled nodes
				fs = append(fs, task.Fork(w, Fib{i % 15}))
			}
			for i, f := range fs {
				require.Equal(t, fibSeq(i%15), f.Join(w))
			}
			return 0
		})
	})
	for i, f := range fs {
		require.True(t, f.Done())
		v, err := f.Get(t.Context())
		require.NoError(t, err)
		require.Equal(t, fibSeq(i%15), v)
	}
}

// TestTypedPathAllocatesNothing checks the claim of Fork (a Future that
// does not escape), InvokeBoth, InvokeBothActions and InvokeSlice on one worker, where nothing
// is stolen: no allocation beyond InvokeSlice's result slice once the
// per-worker node lists are warm. It also guards the inlining of Fork and
// ForkAction, which cost 78 and 80 against the compiler's budget of 80 (Go
// 1.26): if they stop inlining, every Future escapes and this fails.
func TestTypedPathAllocatesNothing(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer p.Close()
	xs := iota64(1 << 12)
	tasks := []fibBoth{{10}, {11}, {12}}
	ints := make([]int, 64)
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
		fork := testing.AllocsPerRun(20, func() { Fib{15}.Compute(w) })
		forkBump := func() { task.ForkAction(w, bump{&ints[0]}).Join(w) }
		for range 64 { // more than a batch of held nodes: see forkjoin.Future
			forkBump()
		}
		action := testing.AllocsPerRun(100, forkBump)
		both := testing.AllocsPerRun(20, func() { fibBoth{15}.Compute(w) })
		bothActions := testing.AllocsPerRun(20, func() { incBoth{ints, task.Fixed(4)}.Compute(w) })
		sum := testing.AllocsPerRun(20, func() { SumTask{xs, task.Fixed(16)}.Compute(w) })
		slice := testing.AllocsPerRun(20, func() { task.InvokeSlice(w, tasks) })
		assert.Zero(t, fork, "Fork and Join fib(15)")
		assert.Zero(t, action, "ForkAction and Join")
		assert.Zero(t, both, "InvokeBoth fib(15)")
		assert.Zero(t, bothActions, "InvokeBothActions")
		assert.Zero(t, sum, "InvokeBoth sum")
		assert.Equal(t, 1.0, slice, "InvokeSlice: the result slice only")
		return 0
	})
}

// bump is the smallest action: it increments *p.
type bump struct{ p *int }

func (b bump) Compute(*forkjoin.Worker) { *b.p++ }

// fibBoth forks at every level through InvokeBoth.
type fibBoth struct{ n int }

func (f fibBoth) Compute(w *forkjoin.Worker) int {
	if f.n < 2 {
		return f.n
	}
	a, b := task.InvokeBoth(w, fibBoth{f.n - 1}, fibBoth{f.n - 2})
	return a + b
}
