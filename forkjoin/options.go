package forkjoin

// The options of New, and the configuration they fill in. Each option
// documents its default; New reads the configuration once, so a Pool's
// settings never change after it starts.

import (
	"fmt"
	"time"
)

// MaxParallelism caps WithParallelism: more workers than this only add
// stealing traffic and memory on any machine Go runs on today.
const MaxParallelism = 1024

// Mode selects how a worker's scheduling loop takes tasks from its own deque.
type Mode int

const (
	// LIFO runs the most recently forked task first: depth-first, the best
	// for divide and conquer, where the newest task is the smallest and its
	// data is hot in cache. The default.
	LIFO Mode = iota
	// FIFO (async mode) runs a worker's own forked-but-unjoined tasks
	// oldest first, for event-style tasks that are never joined. Joins are
	// unaffected: a joined task still sitting on top of the deque is taken
	// from there in either mode.
	FIFO
)

// String returns "LIFO" or "FIFO".
func (m Mode) String() string {
	switch m {
	case LIFO:
		return "LIFO"
	case FIFO:
		return "FIFO"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Option configures a Pool.
type Option func(*config)

type config struct {
	parallelism int
	mode        Mode
	onPanic     func(*PanicError)
	maxQueued   int
	maxBlocked  int
	name        string
	aging       int
	agingSet    bool
	takeBatch   int // WithTakeBatch; 0: DefaultTakeBatch

	slowThreshold time.Duration
	slowHandler   func(p *Pool, worker int, running time.Duration)

	onStart, onExit func(index int) // WithWorkerHooks (hooks.go)

	shared bool // the Default pool (defaultpool.go): Close does nothing
}

// WithParallelism sets the number of workers. n <= 0 means
// runtime.GOMAXPROCS(0); n is capped at MaxParallelism (TestOptions,
// TestBadInputMessages).
func WithParallelism(n int) Option { return func(c *config) { c.parallelism = n } }

// WithMode sets LIFO (the default) or FIFO scheduling of own tasks
// (TestOptions, TestUnjoinedForksFollowMode).
func WithMode(m Mode) Option {
	return func(c *config) {
		if m != LIFO && m != FIFO {
			panic(fmt.Sprintf("forkjoin: WithMode called with Mode(%d), not LIFO or FIFO", int(m)))
		}
		c.mode = m
	}
}

// WithPanicHandler sets the function called with the panic of a task started
// by Execute, which has no one to re-panic in (TestPanicInExecute). The
// default prints the panic and its stack to standard error
// (TestDefaultPanicHandlerPrintsToStderr). It is also called with a panic
// of a worker hook and with one that AllOf or AnyOf drops
// (TestWorkerHooksPanic, TestCombinatorsReportEachDroppedPanicOnce). The handler runs on
// a goroutine of its own while the reporting worker (or goroutine) waits
// for it; the worker and the pool carry on however it ends, returning,
// panicking or calling runtime.Goexit (TestPanicHandlerGoexitLosesNothing).
// It must not wait for work on the pool (Invoke, Submit then Get,
// Broadcast): the worker that reports waits for it without running tasks,
// so on a pool with no other free worker both hang (docs/design.md says
// why helping there was reverted). Close and Shutdown called from it return at
// once, as from a task of the pool (TestPanicHandlerCanClose).
func WithPanicHandler(h func(*PanicError)) Option {
	return func(c *config) { c.onPanic = h }
}

// WithMaxQueued bounds the submission queue (tasks submitted that have not
// started yet, all priorities together) to n, for servers that must not
// let a backlog grow without bound. When it is full, Execute fails at once
// with ErrQueueFull, ExecuteContext waits for room until its context is
// done, and Submit and Invoke wait for room (TestMaxQueuedFailsFastWhenFull,
// TestSubmitWaitsForRoomAndClosedWakesWaiters, TestMaxQueuedRoomStress). A submission run ahead of its
// turn by a task joining its Future has started: it leaves the queue at
// once if it is at the front of its level, else when the takes reach it,
// so the queue may hold such started tasks beyond n while unstarted ones
// are ahead of them (TestJoinedSubmissionsLeaveTheQueue). n <= 0 means
// unbounded, the default (TestWithMaxQueuedNonPositiveIsUnbounded).
//
// The bound applies to submissions from outside the pool. Forks inside
// tasks are never bounded, and neither are submissions made on the
// goroutine of one of the pool's workers (from its tasks, say): on a full
// queue they are accepted past n, which outside submitters then wait out. Only workers make room, so a task that waited for room
// in its own pool deadlocked the pool once every worker did so
// (TestMaxQueuedSubmissionTreeCompletes, TestMaxQueuedOwnTasksAreNotBounded).
// The queue holds at most n plus what the pool's own tasks submitted.
// Nor are the submissions of the goroutines from which Close returns at
// once, as from a task (see Close: the panic handler's, which the
// reporting worker waits for, Blocking's function run off the worker, the
// slow-task handler's): a panic handler that waited for room deadlocked a
// pool whose other workers were busy, since the worker that reported the
// panic waits for the handler
// (TestMaxQueuedPanicHandlerSubmitDoesNotDeadlock).
func WithMaxQueued(n int) Option { return func(c *config) { c.maxQueued = n } }

// WithMaxBlocked bounds the number of compensating workers that Block
// may run at once (see Block). n < 0 means none; the default is the pool's
// parallelism (TestWithMaxBlockedDefault, TestWorkerIndexBelowMaxWorkers,
// TestBlockBeyondMaxRunsUncompensated). Compensating workers exist only
// while tasks block.
func WithMaxBlocked(n int) Option {
	return func(c *config) {
		if n < 0 {
			n = 0
		}
		c.maxBlocked = n + 1 // 0 stays "default"
	}
}

// WithName names the pool in profiles: worker goroutines carry the pprof
// labels magpie.pool=name and magpie.worker=index. The default name is
// "pool-N", N counting the pools of the process
// (TestWithNameLabelsWorkerGoroutines).
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithPriorityAging sets how many consecutive takes from more urgent levels
// a waiting lower level lets pass before one of its tasks is taken: with
// aging k, a queued Background task at the head of its level is passed over
// by at most k+1 takes of other levels (k+1 when Normal and Background come
// due at once), so no level starves; a task taken in a batch (WithTakeBatch)
// and not started is still queued here (TestRev33AgingReachesBusyWorkersRing,
// TestRev33ClaimedRingTaskCostsNoAgingRound). k <= 0 disables aging: strict
// priority, under which lower levels wait as long as more urgent tasks are
// queued (TestPriorityAgingOrder, TestPriorityAgingBoundsStarvation,
// TestRev24AgingBoundEveryLevel, TestPrioritiesOrderQueuedTasks). The
// default is DefaultPriorityAging.
func WithPriorityAging(k int) Option { return func(c *config) { c.aging = k; c.agingSet = true } }

// DefaultTakeBatch is the take batch of a pool without WithTakeBatch.
const DefaultTakeBatch = 32

// WithTakeBatch sets the most submitted tasks a worker takes from the
// submission queue at once, n from 1 to 32 (clamped:
// TestWithTakeBatchClamps). While fewer than
// twice as many tasks as the pool has workers wait at a priority level, or
// while several levels hold tasks, a worker takes one at a time; past
// that, a take moves up to n tasks of the level at once: the worker runs
// the first and keeps the others in order, where any idle worker can take
// them (the older half at a time), so that no task waits on a busy worker
// while another is free (TestBatchOfBlockedOwnerIsTaken). Each batch costs
// the queue's shared lines once, instead of once per task: with tiny tasks
// on two workers, that made each task 2.6 to 2.8 times cheaper
// (BenchmarkSubmit1M; docs/design.md, "Batched takes").
//
// The price is order: with a batch of n, a task may start while up to
// (P-1)*n tasks submitted before it at its level have not (P workers;
// one more per compensating worker of a Block in progress); with n = 1,
// at most P-1, as if the queue were a channel drained by P goroutines
// (TestSubmissionsTakenInOrderTwoWorkers, TestSubmissionStreamFair). Priorities are kept task by task: a worker runs a queued
// task of a more urgent level before the next task of its batch, and
// aging counts every task started from a batch as a take of its level
// (TestTakeBatchKeepsPriorities), and a take of that level starts the
// oldest task of the batches (TestRev33AgingReachesBusyWorkersRing). The default is DefaultTakeBatch.
func WithTakeBatch(n int) Option {
	return func(c *config) { c.takeBatch = min(max(n, 1), maxTakeBatch) }
}

// takeBatchOr returns the take batch of the configuration.
func (c *config) takeBatchOr() int {
	if c.takeBatch == 0 {
		return DefaultTakeBatch
	}
	return c.takeBatch
}

// WithSlowTaskHandler reports submitted tasks that run longer than
// threshold: while such a task is still running, h is called once for it,
// on a watchdog goroutine of the pool, with the pool, the index of the
// worker running it and how long it has run so far (at least threshold;
// the watchdog looks every threshold/4, at most once a millisecond;
// TestSlowTaskHandlerReportsStuckTask).
// Tasks forked inside a computation count as part of the submitted task
// they belong to (TestSlowTaskReportedOnceAcrossNestedTask). The watchdog waits
// for h before it looks again; a panic or runtime.Goexit in h ends that
// call only (TestSlowTaskHandlerGoexitKeepsWatching), and Close and
// Shutdown called from h return at once, as from a task of the pool
// (TestSlowTaskHandlerCanClose). A threshold <= 0 or a nil h disables
// the reports (TestSlowTaskHandlerOff), the default: then no clock is read.
func WithSlowTaskHandler(threshold time.Duration, h func(p *Pool, worker int, running time.Duration)) Option {
	return func(c *config) {
		c.slowThreshold, c.slowHandler = threshold, h
		if threshold <= 0 || h == nil {
			c.slowThreshold, c.slowHandler = 0, nil
		}
	}
}

// maxBlocked is the number of compensating workers of a pool of n.
func maxBlocked(c config, n int) int {
	if c.maxBlocked == 0 {
		return n
	}
	return min(c.maxBlocked-1, MaxParallelism)
}
