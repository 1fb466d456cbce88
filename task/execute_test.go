package task_test

// Tests of Execute and ExecutePriority, the typed fire-and-forget
// submissions (new API: none of these compiles on the code before them).

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
	"github.com/magpie-go/magpie/task"
)

// doneAction calls wg.Done: a pointer-sized action.
type doneAction struct{ wg *sync.WaitGroup }

func (d doneAction) Compute(*forkjoin.Worker) { d.wg.Done() }

// doneWeighted is doneAction with a second word: not pointer-shaped, so
// Execute carries it in a recycled box.
type doneWeighted struct {
	wg *sync.WaitGroup
	n  int
}

func (d doneWeighted) Compute(*forkjoin.Worker) { d.wg.Done() }

// ptrAction is an action whose type is a pointer.
type ptrAction struct {
	wg *sync.WaitGroup
	n  atomic.Int64
}

func (d *ptrAction) Compute(*forkjoin.Worker) { d.n.Add(1); d.wg.Done() }

// recordAction appends its index to a log and calls wg.Done: a
// three-word value.
type recordAction struct {
	i   int
	log *orderLog
	wg  *sync.WaitGroup
}

func (r recordAction) Compute(*forkjoin.Worker) {
	r.log.add(r.i)
	r.wg.Done()
}

type orderLog struct {
	mu    sync.Mutex
	order []int
}

func (l *orderLog) add(i int) {
	l.mu.Lock()
	l.order = append(l.order, i)
	l.mu.Unlock()
}

func (l *orderLog) get() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.order...)
}

// holdAll occupies every worker of p until the returned release is called.
func holdAll(t *testing.T, p *forkjoin.Pool) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	var started sync.WaitGroup
	started.Add(p.Parallelism())
	for range p.Parallelism() {
		require.NoError(t, p.Execute(func(*forkjoin.Worker) { started.Done(); <-gate }))
	}
	within(t, started.Wait)
	return func() { close(gate) }
}

// TestExecuteRunsEveryAction: Execute and ExecutePriority run every action
// exactly once, for a value action, a pointer action and, from inside a
// task, too, on every pool shape, and Stats.Completed counts each once.
func TestExecuteRunsEveryAction(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *forkjoin.Pool) {
		const n = 500
		var wg sync.WaitGroup
		var count atomic.Int64
		ptr := &ptrAction{wg: &wg}
		wg.Add(4 * n)
		for i := range n {
			require.NoError(t, task.Execute(p, countAction{&count}))
			require.NoError(t, task.ExecutePriority(p, forkjoin.Priority(i%3-1), doneAction{&wg}))
			require.NoError(t, task.Execute(p, ptr))
		}
		wg.Add(-n) // the countActions do not call Done
		forkjoin.Invoke(p, func(*forkjoin.Worker) int {
			for range n {
				if err := task.Execute(p, doneAction{&wg}); err != nil {
					panic(err)
				}
			}
			return 0
		})
		within(t, wg.Wait)
		testenv.WaitUntil(t, "the counting actions", func() bool { return count.Load() == n })
		require.EqualValues(t, n, ptr.n.Load())
		// Stats counts each submitted task completed once: 4n Executes
		// and the Invoke.
		testenv.WaitUntil(t, "Stats.Completed", func() bool { return p.Stats().Completed >= 4*n+1 })
		require.EqualValues(t, 4*n+1, p.Stats().Completed)
	})
}

// TestExecuteStartsInOrder: with the only worker held, 1,000 actions
// queued by Execute start exactly in submission order, in both modes, the
// order of every submission (forkjoin's TestSubmissionsStartInOrder), and
// interleaved with closures queued by Pool.Execute.
func TestExecuteStartsInOrder(t *testing.T) {
	const n = 1000
	for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
		t.Run(mode.String(), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMode(mode))
			defer p.Close()
			release := holdAll(t, p)
			var log orderLog
			var wg sync.WaitGroup
			wg.Add(n)
			for i := range n {
				if i%5 == 4 {
					require.NoError(t, p.Execute(func(w *forkjoin.Worker) { recordAction{i, &log, &wg}.Compute(w) }))
				} else {
					require.NoError(t, task.Execute(p, recordAction{i, &log, &wg}))
				}
			}
			release()
			within(t, wg.Wait)
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			require.Equal(t, want, log.get())
		})
	}
}

// TestExecutePriorities: with the only worker held, 10 actions of each
// level queued interleaved start Urgent first, then Normal, then
// Background, each level in submission order (aging off and at the
// default: 30 takes stay within the default's 32).
func TestExecutePriorities(t *testing.T) {
	for _, aging := range []int{0, forkjoin.DefaultPriorityAging} {
		t.Run(fmt.Sprint("aging=", aging), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPriorityAging(aging))
			defer p.Close()
			release := holdAll(t, p)
			prios := []forkjoin.Priority{forkjoin.Background, forkjoin.Normal, forkjoin.Urgent}
			var log orderLog
			var wg sync.WaitGroup
			wg.Add(30)
			for i := range 30 {
				prio := prios[i%3]
				id := int(prio)*100 + i // level in the hundreds, then the submission index
				if prio == forkjoin.Normal {
					require.NoError(t, task.Execute(p, recordAction{id, &log, &wg}))
				} else {
					require.NoError(t, task.ExecutePriority(p, prio, recordAction{id, &log, &wg}))
				}
			}
			release()
			within(t, wg.Wait)
			var want []int
			for _, prio := range []forkjoin.Priority{forkjoin.Urgent, forkjoin.Normal, forkjoin.Background} {
				for i := range 30 {
					if prios[i%3] == prio {
						want = append(want, int(prio)*100+i)
					}
				}
			}
			require.Equal(t, want, log.get())
		})
	}
}

// TestExecuteClosedPool: on a closed pool Execute and ExecutePriority
// return forkjoin.ErrClosed and the action never runs; a bounded full
// queue returns forkjoin.ErrQueueFull.
func TestExecuteClosedPool(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	p.Close()
	var n atomic.Int64
	require.ErrorIs(t, task.Execute(p, countAction{&n}), forkjoin.ErrClosed)
	require.ErrorIs(t, task.ExecutePriority(p, forkjoin.Urgent, countAction{&n}), forkjoin.ErrClosed)
	require.Zero(t, n.Load())

	q := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxQueued(1))
	defer q.Close()
	release := holdAll(t, q)
	require.NoError(t, task.Execute(q, countAction{&n}))
	require.ErrorIs(t, task.Execute(q, countAction{&n}), forkjoin.ErrQueueFull)
	release()
	testenv.WaitUntil(t, "the accepted action", func() bool { return n.Load() == 1 })
}

// TestExecutePanicGoesToHandler: a panic in an executed action reaches the
// pool's panic handler as a *forkjoin.PanicError holding the value, the
// worker survives, and Close still waits for the actions accepted.
func TestExecutePanicGoesToHandler(t *testing.T) {
	got := make(chan *forkjoin.PanicError, 1)
	p := forkjoin.New(forkjoin.WithParallelism(1),
		forkjoin.WithPanicHandler(func(pe *forkjoin.PanicError) { got <- pe }))
	require.NoError(t, task.Execute(p, panicAction{"boom"}))
	var pe *forkjoin.PanicError
	within(t, func() { pe = <-got })
	require.Equal(t, "boom", pe.Value)
	var wg sync.WaitGroup
	wg.Add(1)
	require.NoError(t, task.Execute(p, doneAction{&wg}))
	within(t, wg.Wait)
	within(t, p.Close)
}

// panicAction panics with its value.
type panicAction struct{ v any }

func (x panicAction) Compute(*forkjoin.Worker) { panic(x.v) }

// TestExecuteNilMessages: a nil action is refused with a message naming
// the function called, before anything is queued; a nil pool means
// forkjoin.Default().
func TestExecuteNilMessages(t *testing.T) {
	var nilAction task.RecursiveAction
	require.PanicsWithValue(t, "task: Execute called with a nil action", func() { _ = task.Execute(nil, nilAction) })
	require.PanicsWithValue(t, "task: ExecutePriority called with a nil action", func() {
		_ = task.ExecutePriority(nil, forkjoin.Urgent, nilAction)
	})
	require.PanicsWithValue(t, "forkjoin: ExecuteTaskPriority called with a nil task", func() {
		_ = forkjoin.ExecuteTaskPriority(nil, forkjoin.Normal, nilAction)
	})
	for _, call := range []func(a whichPoolDone) error{
		func(a whichPoolDone) error { return task.Execute(nil, a) },
		func(a whichPoolDone) error { return task.ExecutePriority(nil, forkjoin.Background, a) },
	} {
		var got atomic.Pointer[forkjoin.Pool]
		var wg sync.WaitGroup
		wg.Add(1)
		require.NoError(t, call(whichPoolDone{&got, &wg}))
		within(t, wg.Wait)
		require.Same(t, forkjoin.Default(), got.Load())
	}
}

// whichPoolDone records the pool it runs on, then calls wg.Done.
type whichPoolDone struct {
	got *atomic.Pointer[forkjoin.Pool]
	wg  *sync.WaitGroup
}

func (x whichPoolDone) Compute(w *forkjoin.Worker) { x.got.Store(w.Pool()); x.wg.Done() }

// TestExecuteSteadyStateAllocatesNothing: a stream of Executes that the
// workers keep up with (16 at a time) allocates nothing once warm, for a
// pointer action, a struct of one pointer (both carried in the submission
// slot as they are) and a two-word struct (carried in a box that goes back
// to the pool's free list: with the box's Put left out, that row measured
// 64). Before Execute, the typed way to start a task
// from outside was SubmitAction, which allocates its cell and Future: one
// allocation per task, measured here too.
func TestExecuteSteadyStateAllocatesNothing(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector allocates, and sync.Pool drops items at random under it")
	}
	for _, par := range []int{1, 2} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var wg sync.WaitGroup
		ptr := &ptrAction{wg: &wg}
		paced := func(submit func()) func() {
			return func() { // 64 tasks in groups of 16
				for range 4 {
					wg.Add(16)
					for range 16 {
						submit()
					}
					wg.Wait()
				}
			}
		}
		runs := map[string]func(){
			"pointer": paced(func() {
				if err := task.Execute(p, ptr); err != nil {
					panic(err)
				}
			}),
			"one-pointer struct": paced(func() {
				if err := task.ExecutePriority(p, forkjoin.Urgent, doneAction{&wg}); err != nil {
					panic(err)
				}
			}),
			"two-word struct (boxed)": paced(func() {
				if err := task.Execute(p, doneWeighted{&wg, 2}); err != nil {
					panic(err)
				}
			}),
		}
		submitted := paced(func() { task.SubmitAction(p, doneAction{&wg}) })
		for range 100 {
			submitted()
		}
		assert.Equal(t, 64.0, testing.AllocsPerRun(50, submitted), "%d workers: SubmitAction allocates its cell and Future", par)
		for name, run := range runs {
			for range 100 { // warm: blocks, spares, nodes
				run()
			}
			assert.Zero(t, testing.AllocsPerRun(200, run), "%d workers, %s action: allocations per 64 paced Executes", par, name)
		}
		p.Close()
	}
}

// TestExecuteStress: 8 goroutines execute 2,000 actions each, of two
// types and random priorities, on 1, 2 and 4 workers, while tasks of the
// pool execute more of the same: every action runs exactly once.
func TestExecuteStress(t *testing.T) {
	each := 2000
	if testenv.Race {
		each = 500
	}
	for _, par := range []int{1, 2, 4} {
		t.Run(fmt.Sprint("p=", par), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(par))
			defer p.Close()
			const submitters = 8
			runs := make([]atomic.Int32, submitters*each*2)
			var wg sync.WaitGroup
			wg.Add(len(runs))
			testenv.Concurrently(t, "the submitters", submitters, func(g int) {
				for i := range each {
					k := (g*each + i) * 2
					prio := forkjoin.Priority((g+i)%3 - 1)
					if err := task.ExecutePriority(p, prio, markOnce{runs, k, &wg}); err != nil {
						t.Error(err)
						return
					}
					// From inside a task: a nested Execute of another type.
					err := p.Execute(func(*forkjoin.Worker) {
						if err := task.Execute(p, &markPtr{runs, k + 1, &wg}); err != nil {
							panic(err)
						}
					})
					if err != nil {
						t.Error(err)
						return
					}
				}
			})
			within(t, wg.Wait)
			for k := range runs {
				if runs[k].Load() != 1 {
					require.Failf(t, "not exactly once", "action %d ran %d times", k, runs[k].Load())
				}
			}
		})
	}
}

// markOnce counts its run in runs[k].
type markOnce struct {
	runs []atomic.Int32
	k    int
	wg   *sync.WaitGroup
}

func (m markOnce) Compute(*forkjoin.Worker) { m.runs[m.k].Add(1); m.wg.Done() }

// markPtr is markOnce as a pointer action.
type markPtr markOnce

func (m *markPtr) Compute(*forkjoin.Worker) { m.runs[m.k].Add(1); m.wg.Done() }
