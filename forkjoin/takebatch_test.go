package forkjoin_test

// Batched takes of submitted tasks (forkjoin/takebatch.go): a backlog is
// taken in batches, a batch never strands its tasks on a busy worker, and
// priorities, Stats and the order bound hold task by task.

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// queueHeld holds every worker of p, queues the tasks fns (each at the
// given priority) behind them, and returns the release of the workers.
func queueHeld(t *testing.T, p *forkjoin.Pool, prio forkjoin.Priority, fns ...func(*forkjoin.Worker)) (release func()) {
	t.Helper()
	release = holdWorkers(t, p)
	for _, fn := range fns {
		require.NoError(t, p.ExecutePriority(prio, fn))
	}
	return release
}

// countedTasks returns n tasks that each call done.Done, after adding n
// to done; a test replaces some of them by tasks that call done.Done too.
func countedTasks(n int, done *sync.WaitGroup) []func(*forkjoin.Worker) {
	done.Add(n)
	tasks := make([]func(*forkjoin.Worker), n)
	for i := range tasks {
		tasks[i] = func(*forkjoin.Worker) { done.Done() }
	}
	return tasks
}

// TestBacklogTakenInBatches: two workers drain a backlog of 20,000 tiny
// tasks with fewer than 20,000/8 acquisitions of the take lock: a take
// moves up to 32 tasks. Before batched takes, each task cost one (the
// lock's line and the level's taken count moved between the cores at
// every task: docs/benchmarks.md). With WithTakeBatch(1) it is one per
// task again.
func TestBacklogTakenInBatches(t *testing.T) {
	const n = 20_000
	for _, batch := range []int{1, forkjoin.DefaultTakeBatch} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithTakeBatch(batch))
			defer closePool(t, p)
			var done sync.WaitGroup
			tasks := countedTasks(n, &done)
			release := queueHeld(t, p, forkjoin.Normal, tasks...)
			before := forkjoin.TakeLocks(p)
			release()
			within(t, "backlog", done.Wait)
			locks := forkjoin.TakeLocks(p) - before
			t.Logf("%d take locks for %d tasks", locks, n)
			if batch == 1 {
				require.GreaterOrEqual(t, locks, uint64(n))
			} else {
				require.Less(t, locks, uint64(n/8))
			}
		})
	}
}

// TestBatchOfBlockedOwnerIsTaken: the worker that took a batch runs its
// first task, which waits for a task of the same batch; the other worker
// takes the older half of the batch and runs it, so the wait ends. A
// batch kept private would hang here: the other worker would drain the
// queue behind it and never reach the awaited task.
func TestBatchOfBlockedOwnerIsTaken(t *testing.T) {
	for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
		t.Run(mode.String(), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMode(mode))
			defer closePool(t, p)
			awaited := make(chan struct{})
			var done sync.WaitGroup
			tasks := countedTasks(40, &done)
			tasks[0] = func(*forkjoin.Worker) { <-awaited; done.Done() }
			tasks[5] = func(*forkjoin.Worker) { close(awaited); done.Done() }
			release := queueHeld(t, p, forkjoin.Normal, tasks...)
			release()
			within(t, "the batch's tasks", done.Wait)
		})
	}
}

// TestBlockedBatchOwnerServedBySpare: on one worker, the first task of a
// batch waits in Block for a task of the same batch; Block's compensating
// worker takes the batch's tasks from the blocked worker's ring, one at a
// time, and runs the awaited one.
func TestBlockedBatchOwnerServedBySpare(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	awaited := make(chan struct{})
	var done sync.WaitGroup
	tasks := countedTasks(12, &done)
	tasks[0] = func(w *forkjoin.Worker) { forkjoin.Block(w, func() { <-awaited }); done.Done() }
	tasks[7] = func(*forkjoin.Worker) { close(awaited); done.Done() }
	release := queueHeld(t, p, forkjoin.Normal, tasks...)
	release()
	within(t, "the batch's tasks", done.Wait)
}

// TestTakeBatchKeepsPriorities: one worker takes a batch of ten Normal
// tasks; while the first runs, an Urgent task is submitted; it starts
// before the second task of the batch: a ring's tasks yield to a more
// urgent queued task, as queued ones do.
func TestTakeBatchKeepsPriorities(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	var log startOrder
	record := log.record
	firstRuns, gate := make(chan struct{}), make(chan struct{})
	var done sync.WaitGroup
	const n = 10
	done.Add(n + 1)
	tasks := make([]func(*forkjoin.Worker), n)
	for i := range tasks {
		tasks[i] = func(*forkjoin.Worker) { record(fmt.Sprint("N", i)); done.Done() }
	}
	tasks[0] = func(*forkjoin.Worker) { record("N0"); close(firstRuns); <-gate; done.Done() }
	release := queueHeld(t, p, forkjoin.Normal, tasks...)
	release()
	within(t, "the first task", func() { <-firstRuns })
	require.Equal(t, n-1, p.Stats().QueuedNormal, "the batch's tasks count as queued")
	require.NoError(t, p.ExecutePriority(forkjoin.Urgent, func(*forkjoin.Worker) { record("U"); done.Done() }))
	close(gate)
	within(t, "all tasks", done.Wait)
	want := []string{"N0", "U"}
	for i := 1; i < n; i++ {
		want = append(want, fmt.Sprint("N", i))
	}
	assert.Equal(t, want, log.get())
}

// TestStatsCountsBatchedTasks: the tasks of a batch taken and not started
// count in Stats as queued at their level, in both Queued and QueuedX.
func TestStatsCountsBatchedTasks(t *testing.T) {
	for _, prio := range []forkjoin.Priority{forkjoin.Urgent, forkjoin.Normal, forkjoin.Background} {
		t.Run(prio.String(), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(1))
			defer closePool(t, p)
			firstRuns, gate := make(chan struct{}), make(chan struct{})
			const n = 20
			var done sync.WaitGroup
			tasks := countedTasks(n, &done)
			tasks[0] = func(*forkjoin.Worker) { close(firstRuns); <-gate; done.Done() }
			release := queueHeld(t, p, prio, tasks...)
			release()
			within(t, "the first task", func() { <-firstRuns })
			s := p.Stats()
			got := map[forkjoin.Priority]int{forkjoin.Urgent: s.QueuedUrgent, forkjoin.Normal: s.QueuedNormal, forkjoin.Background: s.QueuedBackground}
			for q, c := range got {
				if q == prio {
					assert.Equal(t, n-1, c, "%v", q)
				} else {
					assert.Zero(t, c, "%v", q)
				}
			}
			assert.Equal(t, n-1, s.Queued)
			close(gate)
			within(t, "all tasks", done.Wait)
		})
	}
}

// TestIdlePoolDropsBatchedSubmissions: the results of Submits taken in a
// batch are not kept by the ring that held them once the pool is idle:
// its taken slots are cleared before a worker sleeps, as the queue's are
// (TestIdlePoolDropsExecutedFunctionsAcrossBlocks).
func TestIdlePoolDropsBatchedSubmissions(t *testing.T) {
	for _, par := range []int{1, 2} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var collected atomic.Int32
		const n = 40
		release := holdWorkers(t, p)
		fs := make([]*forkjoin.Future[*[1 << 10]byte], n)
		for i := range fs {
			fs[i] = forkjoin.Submit(p, func(*forkjoin.Worker) *[1 << 10]byte {
				big := new([1 << 10]byte)
				runtime.AddCleanup(big, func(c *atomic.Int32) { c.Add(1) }, &collected)
				return big
			})
		}
		release()
		for _, f := range fs {
			within(t, "a result", func() { _, _ = f.Get(context.Background()) })
		}
		fs = nil
		waitUntil(t, "every worker asleep", func() bool { return forkjoin.SleepersOf(p) == par })
		waitUntil(t, "the results collected", func() bool {
			runtime.GC()
			return collected.Load() == n
		})
		p.Close()
	}
}

// auditPair is a typed Execute action of two words, so that it travels
// in a recycled box (exectask.go); its Compute checks the payload its
// submitter wrote and records the worker that ran it.
type auditPair struct {
	a, b int
	run  func(w *forkjoin.Worker, i int)
}

func (x auditPair) Compute(w *forkjoin.Worker) {
	if x.b != 2*x.a+1 {
		panic(fmt.Sprintf("task %d: payload %d, want %d", x.a, x.b, 2*x.a+1))
	}
	x.run(w, x.a)
}

// TestBatchExecNodesRunAcrossWorkers: an Execute's exec node, and a typed
// action's box, made by the worker that takes a batch are run, completed
// and recycled by the worker that steals them from its ring (submit.go,
// execNode; exectask.go's invariant): round after round on one pool, the
// first task of each batch waits for the sixth, which only the other
// worker can run, so every round hands nodes and boxes from one worker to
// the other, and each later round reuses them from the other's free list
// and the box pool. Every action sees the payload its submitter wrote;
// under -race this is the check that the ring orders the taker's writes
// of a node before the runner's reads, and the runner's recycling before
// the next taker's writes.
func TestBatchExecNodesRunAcrossWorkers(t *testing.T) {
	// A batch of 16: task 5 is in the ring of task 0's worker whatever
	// DefaultTakeBatch becomes.
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithTakeBatch(16))
	defer closePool(t, p)
	const n, rounds = 40, 20
	for round := range rounds {
		ranOn := make([]int, n)
		awaited := make(chan struct{})
		var done sync.WaitGroup
		done.Add(n)
		run := func(w *forkjoin.Worker, i int) {
			switch i {
			case 0:
				<-awaited
			case 5:
				close(awaited)
			}
			ranOn[i] = w.Index()
			done.Done()
		}
		release := holdWorkers(t, p)
		for i := range n {
			if i%2 == 0 {
				require.NoError(t, forkjoin.ExecuteTaskPriority(p, forkjoin.Normal, auditPair{i, 2*i + 1, run}))
			} else {
				require.NoError(t, p.Execute(func(w *forkjoin.Worker) { run(w, i) }))
			}
		}
		release()
		within(t, fmt.Sprintf("round %d", round), done.Wait)
		require.NotEqual(t, ranOn[0], ranOn[5], "round %d: the awaited task ran on the waiting worker", round)
	}
}
