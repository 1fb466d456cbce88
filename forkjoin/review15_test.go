package forkjoin_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestSlowTaskHandlerGoexitKeepsWatching: a slow-task handler that calls
// runtime.Goexit (t.FailNow in a test's handler) ends its own call and
// nothing else: a later slow task is reported too. The handler ran on the
// watchdog goroutine itself, so the Goexit ended the watchdog and no slow
// task was reported again for the pool's life (review rev15).
func TestSlowTaskHandlerGoexitKeepsWatching(t *testing.T) {
	const threshold = 20 * time.Millisecond
	var reports atomic.Int64
	p := forkjoin.New(forkjoin.WithParallelism(1),
		forkjoin.WithSlowTaskHandler(threshold, func(*forkjoin.Pool, int, time.Duration) {
			reports.Add(1)
			runtime.Goexit()
		}))
	defer closePool(t, p)
	for i := range 2 {
		release := make(chan struct{})
		done := make(chan struct{})
		require.NoError(t, p.Execute(func(*forkjoin.Worker) { defer close(done); <-release }))
		waitUntil(t, "the slow task's report", func() bool { return reports.Load() == int64(i+1) })
		close(release)
		within(t, "the slow task", func() { <-done })
	}
}

// TestSlowTaskHandlerCanClose: Close and Shutdown called from the slow-task
// handler (a health check that gives up on a stuck pool) return at once, as
// from a task of the pool or from its panic handler, and the pool still
// closes once the stuck task ends. Close from the handler waited for the
// watchdog to exit, and the watchdog was the goroutine running the
// handler: it hung for ever, and so did every later Close (review rev15).
func TestSlowTaskHandlerCanClose(t *testing.T) {
	const threshold = 20 * time.Millisecond
	for _, shutdown := range []bool{false, true} {
		var (
			returned atomic.Bool
			err      atomic.Value
		)
		p := forkjoin.New(forkjoin.WithParallelism(1),
			forkjoin.WithSlowTaskHandler(threshold, func(p *forkjoin.Pool, _ int, _ time.Duration) {
				if shutdown {
					err.Store(errors.Join(p.Shutdown(t.Context())))
				} else {
					p.Close()
				}
				returned.Store(true)
			}))
		release := make(chan struct{})
		require.NoError(t, p.Execute(func(*forkjoin.Worker) { <-release }))
		waitUntil(t, "the handler's Close or Shutdown to return", returned.Load)
		if shutdown {
			require.ErrorIs(t, err.Load().(error), forkjoin.ErrInsidePool)
		}
		require.ErrorIs(t, p.Execute(func(*forkjoin.Worker) {}), forkjoin.ErrClosed)
		close(release)
		within(t, "Close after the stuck task", p.Close)
	}
}

// TestStatsIdleSnapshotIsExact: Stats says that once the pool is idle its
// counters are exact, so a snapshot in which every worker is idle and
// nothing is queued must count every task run so far. After each of
// 200,000 Invokes (10,000 under the race detector) of one task, Stats is
// read until it shows the worker idle; that snapshot must count the
// task. A worker counted itself idle before it published its counters,
// so a snapshot taken between the two showed it idle with the last tasks
// missing (review rev15).
func TestStatsIdleSnapshotIsExact(t *testing.T) {
	rounds := 200_000
	if testenv.Race {
		rounds = 10_000
	}
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	within(t, "rounds", func() {
		for r := range rounds {
			forkjoin.Invoke(p, func(*forkjoin.Worker) int { return 0 })
			for {
				s := p.Stats()
				if s.Idle == s.Workers && s.Queued == 0 {
					if s.Executed != uint64(r+1) || s.Completed != uint64(r+1) {
						t.Errorf("round %d: idle snapshot %v", r, s)
						return
					}
					break
				}
			}
		}
	})
}

// TestJoinedSubmissionsLeaveTheQueue: a task that submits to its own pool
// and joins the Future at once runs the submission inline (it claims it
// while it is still queued), and its slot must leave the queue then, not
// when a worker next takes from it. With one worker busy in such a loop
// no worker took from the queue, so on a pool bounded to 4 queued tasks
// (WithMaxQueued) the queue grew to 10,000 slots, each holding its
// completed submission, and Stats counted all 10,000 as queued (waiting)
// while also counting them completed (review rev15).
func TestJoinedSubmissionsLeaveTheQueue(t *testing.T) {
	const maxQueued, n = 4, 10_000
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxQueued(maxQueued))
	defer closePool(t, p)
	var worst forkjoin.Stats
	within(t, "the loop", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			for i := range n {
				f := forkjoin.Submit(p, func(*forkjoin.Worker) int { return i })
				require.Equal(t, i, f.Join(w))
				if s := p.Stats(); s.QueuedNormal > worst.QueuedNormal {
					worst = s
				}
			}
			return 0
		})
	})
	require.LessOrEqual(t, worst.QueuedNormal, maxQueued, "worst snapshot: %v", worst)
}

// TestJoinedSubmissionsStress: 4 goroutines submit 3,000 tasks each (500
// under the race detector) at every priority to a 2-worker pool; each task
// submits two children to its own pool and joins them (run inline when
// still queued, their slots dropped from the front of the queue:
// dropClaimed), and every fourth submission is an ExecuteContext through
// the same queue. Every task runs exactly once, and once the pool is
// closed Completed equals Submitted and nothing is queued. (Unbounded: a
// task that submits to a full bounded queue of its own pool waits for
// room that only the pool's workers can make.)
func TestJoinedSubmissionsStress(t *testing.T) {
	const submitters = 4
	per := 3000
	if testenv.Race {
		per = 500
	}
	prios := []forkjoin.Priority{forkjoin.Urgent, forkjoin.Normal, forkjoin.Background}
	p := forkjoin.New(forkjoin.WithParallelism(2))
	ran := make([]atomic.Int32, submitters*per*4)
	testenv.Concurrently(t, "submitters", submitters, func(g int) {
		var futures []*forkjoin.Future[int]
		for i := range per {
			id := (g*per + i) * 4
			prio := prios[(g+i)%3]
			if i%4 == 0 {
				_ = p.ExecuteContextPriority(t.Context(), prio, func(*forkjoin.Worker) { ran[id].Add(1) })
				continue
			}
			f := forkjoin.SubmitPriority(p, prio, func(w *forkjoin.Worker) int {
				ran[id].Add(1)
				a := forkjoin.SubmitPriority(p, prios[i%3], func(*forkjoin.Worker) int { ran[id+1].Add(1); return 1 })
				b := forkjoin.SubmitPriority(p, prios[(i+1)%3], func(*forkjoin.Worker) int { ran[id+2].Add(1); return 2 })
				return a.Join(w) + b.Join(w)
			})
			futures = append(futures, f)
		}
		for _, f := range futures { // before Close, which refuses the children
			v, err := f.Get(t.Context())
			assert.NoError(t, err)
			assert.Equal(t, 3, v)
		}
	})
	within(t, "Close", p.Close)
	for g := range submitters {
		for i := range per {
			id := (g*per + i) * 4
			want := []int32{1, 1, 1}
			if i%4 == 0 {
				want = []int32{1, 0, 0}
			}
			for j, w := range want {
				require.Equal(t, w, ran[id+j].Load(), "submitter %d task %d part %d", g, i, j)
			}
		}
	}
	s := p.Stats()
	require.Equal(t, s.Submitted, s.Completed, "%v", s)
	require.Zero(t, s.Queued, "%v", s)
}

// TestExecuteContextCanceledWaitersStress: 8 goroutines each submit 500
// tasks (100 under the race detector) with ExecuteContext to a one-worker
// pool bounded to 2 queued tasks, each with a context that times out
// after 0 to 50 µs, so that most of them wait for room and many give up.
// A call that returned ctx.Err() must never run its task, one that
// returned nil must run it exactly once, and no waiter is left asleep
// once room appears (the calls all return within the hang limit).
func TestExecuteContextCanceledWaitersStress(t *testing.T) {
	const goroutines = 8
	per := 500
	if testenv.Race {
		per = 100
	}
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxQueued(2))
	ran := make([]atomic.Int32, goroutines*per)
	errs := make([]error, goroutines*per)
	testenv.Concurrently(t, "ExecuteContext callers", goroutines, func(g int) {
		r := rand.New(rand.NewPCG(uint64(g), 15))
		for i := range per {
			id := g*per + i
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(50))*time.Microsecond)
			d := time.Duration(r.IntN(20)) * time.Microsecond // r is this goroutine's
			errs[id] = p.ExecuteContext(ctx, func(*forkjoin.Worker) {
				ran[id].Add(1)
				time.Sleep(d)
			})
			cancel()
		}
	})
	within(t, "Close", p.Close)
	accepted := 0
	for id := range errs {
		if errs[id] == nil {
			accepted++
			require.EqualValues(t, 1, ran[id].Load(), "task %d accepted", id)
		} else {
			require.ErrorIs(t, errs[id], context.DeadlineExceeded, "task %d", id)
			require.Zero(t, ran[id].Load(), "task %d refused with %v but ran", id, errs[id])
		}
	}
	s := p.Stats()
	require.EqualValues(t, accepted, s.Submitted, "%v", s)
	require.EqualValues(t, accepted, s.Completed, "%v", s)
	t.Logf("%d of %d accepted", accepted, len(errs))
}

// TestSlowTaskReportsCountTheSlowTasks: 20 tasks that sleep 4 thresholds
// among 2,000 quick ones (Execute and Submit, nested Submits joined inline
// too) on 2 workers: every slow task is reported, and there are no more
// reports than tasks that ran at least half the threshold by their own
// clock (a report per slow task, once, and none for a quick one). Held.
func TestSlowTaskReportsCountTheSlowTasks(t *testing.T) {
	const threshold = 10 * time.Millisecond
	const slow, quick = 20, 2000
	var reports atomic.Int64
	p := forkjoin.New(forkjoin.WithParallelism(2),
		forkjoin.WithSlowTaskHandler(threshold, func(_ *forkjoin.Pool, _ int, d time.Duration) {
			if d < threshold {
				t.Errorf("reported after %v, under the threshold", d)
			}
			reports.Add(1)
		}))
	// Tasks that ran at least half the threshold by their own clock, which
	// starts a little after the watchdog's (a worker descheduled between
	// the two may be reported for a task that ran less by its own).
	var long atomic.Int64
	timed := func(fn func()) {
		start := time.Now()
		fn()
		if time.Since(start) >= threshold/2 {
			long.Add(1)
		}
	}
	var futures []*forkjoin.Future[int]
	for i := range slow + quick {
		if i%(quick/slow) == 0 {
			futures = append(futures, forkjoin.Submit(p, func(*forkjoin.Worker) int {
				timed(func() { time.Sleep(4 * threshold) })
				return 0
			}))
			continue
		}
		if i%2 == 0 {
			require.NoError(t, p.Execute(func(*forkjoin.Worker) { timed(func() {}) }))
			continue
		}
		futures = append(futures, forkjoin.Submit(p, func(w *forkjoin.Worker) int {
			var v int
			timed(func() {
				v = forkjoin.Submit(p, func(*forkjoin.Worker) int { var v int; timed(func() { v = 1 }); return v }).Join(w)
			})
			return v
		}))
	}
	within(t, "the tasks", func() {
		for _, f := range futures {
			_, err := f.Get(context.Background())
			require.NoError(t, err)
		}
	})
	within(t, "Close", p.Close)
	require.GreaterOrEqual(t, reports.Load(), int64(slow), "a slow task was not reported")
	require.LessOrEqual(t, reports.Load(), long.Load(), "more reports than tasks that ran half the threshold")
}
