package forkjoin_test

// Priorities, aging and the submission counters of Stats (see
// forkjoin/injector.go).

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"

	"github.com/magpie-go/magpie/internal/testenv"
)

// prioTask is a task recorded by its priority and its rank within it.
type prioTask struct {
	prio forkjoin.Priority
	i    int
}

// runQueued holds the only worker of p, queues the tasks of subs in the
// order given, releases the worker and returns the order in which the
// tasks started.
func runQueued(t *testing.T, p *forkjoin.Pool, subs []prioTask) []prioTask {
	t.Helper()
	release := holdWorkers(t, p)
	var order []prioTask
	var done sync.WaitGroup
	done.Add(len(subs))
	for _, s := range subs {
		require.NoError(t, p.ExecutePriority(s.prio, func(*forkjoin.Worker) {
			order = append(order, s) // one worker: the tasks run one after another
			done.Done()
		}))
	}
	release()
	within(t, "queued tasks", done.Wait)
	return order
}

// interleaved returns n tasks of each priority, submitted Background,
// Normal, Urgent, Background, ...
func interleaved(n int) []prioTask {
	var subs []prioTask
	for i := range n {
		for _, pr := range []forkjoin.Priority{forkjoin.Background, forkjoin.Normal, forkjoin.Urgent} {
			subs = append(subs, prioTask{pr, i})
		}
	}
	return subs
}

// TestPrioritiesOrderQueuedTasks: with the only worker held, 10 tasks of
// each priority, submitted interleaved, start all Urgent ones first, then
// Normal, then Background, each level in submission order, in both modes;
// with aging off and with the default aging (32 passes, more than the 20
// takes that pass over Background here).
func TestPrioritiesOrderQueuedTasks(t *testing.T) {
	const n = 10
	var want []prioTask
	for _, pr := range []forkjoin.Priority{forkjoin.Urgent, forkjoin.Normal, forkjoin.Background} {
		for i := range n {
			want = append(want, prioTask{pr, i})
		}
	}
	for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
		for _, aging := range []forkjoin.Option{forkjoin.WithPriorityAging(0), func() forkjoin.Option {
			return forkjoin.WithPriorityAging(forkjoin.DefaultPriorityAging)
		}()} {
			p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMode(mode), aging)
			got := runQueued(t, p, interleaved(n))
			closePool(t, p)
			require.Equal(t, want, got, "mode %v", mode)
		}
	}
}

// TestPriorityAgingOrder: with aging k = 4 and the only worker held, 20
// Urgent, 5 Normal and 5 Background tasks start as (4 Urgent, Normal,
// Background) five times: each lower level is passed over by 4 takes, then
// taken; Background, due at the same take as Normal, is passed over once
// more (the bound k+1 of WithPriorityAging).
func TestPriorityAgingOrder(t *testing.T) {
	const k = 4
	var subs []prioTask
	for i := range 20 {
		subs = append(subs, prioTask{forkjoin.Urgent, i})
	}
	for i := range 5 {
		subs = append(subs, prioTask{forkjoin.Background, i}, prioTask{forkjoin.Normal, i})
	}
	var want []prioTask
	for r := range 5 {
		for j := range k {
			want = append(want, prioTask{forkjoin.Urgent, r*k + j})
		}
		want = append(want, prioTask{forkjoin.Normal, r}, prioTask{forkjoin.Background, r})
	}
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPriorityAging(k))
	defer closePool(t, p)
	require.Equal(t, want, runQueued(t, p, subs))
}

// TestPriorityAgingBoundsStarvation: while one goroutine floods a
// one-worker pool with Urgent tasks, another submits Background tasks one
// at a time (the next once the previous has started). With aging k = 8
// no more than k+1 tasks start between the return of a Background task's
// submission and its start: k Urgent takes pass it over (its level was
// empty before, so its count starts at 0), then it is taken; the one more
// is an Urgent task the worker took before the push and started after it.
// With aging off (strict priority) it waits for the whole flood.
func TestPriorityAgingBoundsStarvation(t *testing.T) {
	const k, background = 8, 200
	flood := 40_000
	if testenv.Race {
		flood = 10_000
	}
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPriorityAging(k))
	defer closePool(t, p)
	var started atomic.Int64 // tasks started
	var urgentLeft atomic.Int64
	urgentLeft.Store(int64(flood))
	stop := make(chan struct{})
	var flooder sync.WaitGroup
	flooder.Add(1)
	go func() {
		defer flooder.Done()
		for range flood {
			select {
			case <-stop:
				return
			default:
			}
			err := p.ExecutePriority(forkjoin.Urgent, func(*forkjoin.Worker) {
				started.Add(1)
				spin(2 * time.Microsecond) // slower than the flooder: a backlog builds up
				urgentLeft.Add(-1)
			})
			if err != nil {
				t.Errorf("ExecutePriority: %v", err)
				return
			}
		}
	}()
	defer func() { close(stop); flooder.Wait() }()
	waitUntil(t, "an Urgent backlog", func() bool { return p.Stats().QueuedUrgent >= 1000 })
	worst, measured, contested := 0, 0, 0
	within(t, "background tasks", func() {
		for range background {
			if urgentLeft.Load() < 100 {
				break // the flood is over: nothing left to starve a task
			}
			if p.Stats().QueuedUrgent > k+1 {
				contested++ // enough Urgent tasks queued to starve it without aging
			}
			// Tasks started from after the submission returned until the
			// task starts: fewer than the takes that passed it over if this
			// goroutine is descheduled after the push, never more.
			var after atomic.Int64
			after.Store(1 << 62)
			ran := make(chan int64, 1)
			if err := p.ExecutePriority(forkjoin.Background, func(*forkjoin.Worker) {
				ran <- started.Add(1) - 1 - after.Load()
			}); err != nil {
				panic(err)
			}
			after.Store(started.Load())
			worst = max(worst, int(<-ran))
			measured++
		}
	})
	t.Logf("%d Background tasks measured, %d behind more than k+1 queued Urgent ones; most tasks started between one's submission and its start: %d",
		measured, contested, worst)
	require.Positive(t, contested)
	require.LessOrEqual(t, worst, k+1)
}

// TestStatsSubmissionCounters: with the only worker held, Stats counts the
// queued tasks by priority; once they have run, Completed counts every one
// and QueueWaits the timed ones (one in 8 of each level), the longest wait
// being at least the time the worker was held.
func TestStatsSubmissionCounters(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	release := holdWorkers(t, p)
	var done sync.WaitGroup
	// The holder was Normal submission 1; one submission in 8 of each level
	// is timed: Urgent 8, Normal 8 and Background 8, all queued while the
	// worker is held.
	counts := map[forkjoin.Priority]int{forkjoin.Urgent: 8, forkjoin.Normal: 8, forkjoin.Background: 8}
	for pr, n := range counts {
		for range n {
			done.Add(1)
			require.NoError(t, p.ExecutePriority(pr, func(*forkjoin.Worker) { done.Done() }))
		}
	}
	s := p.Stats()
	require.Equal(t, 8, s.QueuedUrgent)
	require.Equal(t, 8, s.QueuedNormal)
	require.Equal(t, 8, s.QueuedBackground)
	require.Equal(t, 24, s.Queued)
	require.EqualValues(t, 25, s.Submitted)
	require.Zero(t, s.Completed)
	const held = 20 * time.Millisecond
	time.Sleep(held)
	release()
	within(t, "queued tasks", done.Wait)
	waitUntil(t, "25 completed", func() bool { return p.Stats().Completed == 25 })
	s = p.Stats()
	require.Zero(t, s.QueuedUrgent+s.QueuedNormal+s.QueuedBackground)
	require.EqualValues(t, 3, s.QueueWaits)
	require.GreaterOrEqual(t, s.QueueWaitMax, held)
	require.GreaterOrEqual(t, s.QueueWaitTotal, 3*held)
}

// TestPriorityVariants: SubmitPriority, SubmitTaskPriority,
// InvokePriority and ExecuteContextPriority queue at their priority (the
// only worker held: an Urgent Submit overtakes a queued Normal Execute),
// and an invalid priority panics.
func TestPriorityVariants(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxQueued(10))
	defer closePool(t, p)
	release := holdWorkers(t, p)
	var mu sync.Mutex
	var order []string
	rec := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	require.NoError(t, p.ExecuteContextPriority(context.Background(), forkjoin.Background, func(*forkjoin.Worker) { rec("background") }))
	require.NoError(t, p.Execute(func(*forkjoin.Worker) { rec("normal") }))
	f := forkjoin.SubmitPriority(p, forkjoin.Urgent, func(*forkjoin.Worker) int { rec("urgent"); return 1 })
	g := forkjoin.SubmitTaskPriority[int](p, forkjoin.Urgent, fibTask(10))
	release()
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, v)
	v, err = g.Get(context.Background())
	require.NoError(t, err)
	require.Equal(t, 55, v)
	require.Equal(t, 2, forkjoin.InvokePriority(p, forkjoin.Background, func(*forkjoin.Worker) int { return 2 }))
	mu.Lock()
	require.Equal(t, []string{"urgent", "normal", "background"}, order)
	mu.Unlock()
	require.Panics(t, func() { _ = p.ExecutePriority(forkjoin.Priority(5), func(*forkjoin.Worker) {}) })
	require.Equal(t, "Urgent", forkjoin.Urgent.String())
}

// spin busy-waits for d.
func spin(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}

// TestInjectorStressExactlyOnce: 8 goroutines submit 20,000 tasks each
// (2,000 under the race detector) at random priorities to 4 workers, with
// Execute and Submit mixed, across hundreds of 64-slot blocks: every task
// runs exactly once, and within each submitter and priority no task starts
// while more than the order bound (P-1)·b submitted before it have not
// started (see startLog): 3 with WithTakeBatch(1), 96 with the default
// batch b = 32. It runs with a backlog (the submitters never wait) and paced
// (each submitter keeps at most 16 of its tasks not started), where the
// queue stays within a few blocks and the takers retire blocks that
// submitters, descheduled between loading the tail and reserving a slot,
// may still hold (injector.go, retire).
func TestInjectorStressExactlyOnce(t *testing.T) {
	for _, batch := range []int{1, forkjoin.DefaultTakeBatch} {
		t.Run(fmt.Sprintf("batch=%d/backlog", batch), func(t *testing.T) { injectorStress(t, batch, 0) })
		t.Run(fmt.Sprintf("batch=%d/paced", batch), func(t *testing.T) { injectorStress(t, batch, 16) })
	}
}

// injectorStress is TestInjectorStressExactlyOnce for a take batch;
// window > 0 makes each submitter wait while window of its tasks have not
// started.
func injectorStress(t *testing.T, batch, window int) {
	const submitters, workers = 8, 4
	each := 20_000
	if testenv.Race {
		each = 2_000
	}
	started := make([]atomic.Int64, submitters)
	p := forkjoin.New(forkjoin.WithParallelism(workers), forkjoin.WithTakeBatch(batch))
	defer closePool(t, p)
	prios := []forkjoin.Priority{forkjoin.Urgent, forkjoin.Normal, forkjoin.Background}
	// One log per priority: submitter g's tasks at a priority are numbered
	// in submission order.
	var logs [3]*startLog
	for i := range logs {
		logs[i] = newStartLog(submitters, each, orderBound(workers, batch))
	}
	runs := make([]atomic.Int32, submitters*each)
	var done sync.WaitGroup
	done.Add(submitters * each)
	var subs sync.WaitGroup
	for g := range submitters {
		subs.Add(1)
		go func() {
			defer subs.Done()
			var seq [3]int
			for i := range each {
				li := (g*7 + i*i) % 3
				n := seq[li]
				seq[li]++
				task := func() { logs[li].start(g, n); runs[g*each+i].Add(1); started[g].Add(1); done.Done() }
				if window > 0 {
					for started[g].Load() < int64(i-window) {
						runtime.Gosched() // a lost task fails within(t, "submitters", ...)
					}
				}
				if i%5 == 0 {
					forkjoin.SubmitPriority(p, prios[li], func(*forkjoin.Worker) int { task(); return 0 })
					continue
				}
				if err := p.ExecutePriority(prios[li], func(*forkjoin.Worker) { task() }); err != nil {
					t.Errorf("ExecutePriority: %v", err)
					return
				}
			}
		}()
	}
	within(t, "submitters", subs.Wait)
	within(t, "tasks", done.Wait)
	for k := range runs {
		require.Equal(t, int32(1), runs[k].Load(), "task %d", k)
	}
	for _, l := range logs {
		l.check(t)
	}
	waitUntil(t, "all completed", func() bool { return p.Stats().Completed == uint64(submitters*each) })
	s := p.Stats()
	require.EqualValues(t, submitters*each, s.Submitted)
	require.Zero(t, s.QueuedUrgent+s.QueuedNormal+s.QueuedBackground)
}

// TestTakeContentionDoesNotLoseWakeup: worker A runs task L, which waits;
// worker B sleeps. The take lock is held (as by a worker descheduled in
// the middle of a take) while task T is submitted, which wakes B. B's take
// must wait for the lock rather than report the queue empty and go back to
// sleep: T must start while L still waits. Before the fix, a take gave up
// after a backoff and B slept with T queued until L returned (found by
// review; this test failed 3 of 3 then).
func TestTakeContentionDoesNotLoseWakeup(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	releaseL, lStarted, tStarted := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(releaseL)
	require.NoError(t, p.Execute(func(*forkjoin.Worker) { close(lStarted); <-releaseL }))
	<-lStarted
	waitUntil(t, "the other worker asleep", func() bool { return forkjoin.SleepersOf(p) == 1 })
	parks := p.Stats().Parks
	release, ok := forkjoin.HoldTakeLock(p)
	require.True(t, ok)
	require.NoError(t, p.Execute(func(*forkjoin.Worker) { close(tStarted) }))
	// Give B time to wake, fail to take and (before the fix) park again;
	// with the fix it keeps trying, so this only bounds the wait.
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline) && p.Stats().Parks == parks; {
		time.Sleep(time.Millisecond)
	}
	release()
	select {
	case <-tStarted:
	case <-time.After(hangTimeout):
		t.Fatalf("a ready submitted task waited %v while a worker slept (lost wake-up); stats: %v", hangTimeout, p.Stats())
	}
}

// TestIdlePoolDropsExecutedFunctions: once an Execute'd function has run
// and the pool has gone idle, the submission queue holds no reference to
// it (the taken slots' functions are dropped when the head leaves their
// block or a worker goes to sleep: injector.go, clearSlots), so what it
// captured is collected. A few tasks, well inside one block, on 1 and 2
// workers.
func TestIdlePoolDropsExecutedFunctions(t *testing.T) {
	for _, par := range []int{1, 2} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var collected atomic.Int32
		var ran sync.WaitGroup
		const n = 5
		ran.Add(n)
		for range n {
			big := new([1 << 10]byte)
			runtime.AddCleanup(big, func(c *atomic.Int32) { c.Add(1) }, &collected)
			require.NoError(t, p.Execute(func(*forkjoin.Worker) { big[0]++; ran.Done() }))
		}
		within(t, "tasks", ran.Wait)
		waitUntil(t, "captured values collected", func() bool {
			runtime.GC()
			return collected.Load() == n
		})
		p.Close()
	}
}
