package forkjoin

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a pool's counters. Each worker counts in plain
// fields of its own (no shared counter is touched on the fork/join path) and
// publishes them whenever it goes idle, parks or exits; Stats sums
// the published values. While work is running the snapshot may lag the
// workers by a little; once the pool is idle or closed it is exact
// (TestStatsAfterKnownWorkload). A
// worker publishes before it counts itself idle, and Stats reads the idle
// count before the counters, so a snapshot whose Idle equals Workers
// counts all the work its workers did before they went idle
// (TestStatsIdleSnapshotIsExact).
//
// The counters about submissions (Submitted, Completed, the Queued*
// levels and the queue wait) do not wait for a worker to go idle: they are
// atomics, written where a task is queued, taken or completed, and read by
// Stats without a lock; the three queue-wait counters are each worker's,
// written by it alone and read as a consistent snapshot (a seqlock), so
// that the mean wait never exceeds the longest
// (TestRev24StatsQueueWaitConsistent).
type Stats struct {
	Workers   int    // worker goroutines alive
	Submitted uint64 // tasks accepted from outside (Execute, Submit, Invoke)
	Executed  uint64 // tasks run, forked or submitted, including inline joins
	Forks     uint64 // tasks pushed on a worker deque (Fork, Join, JoinTasks)
	Steals    uint64 // steals: elements taken from another worker's deque; one may be a block of up to 32 spawned tasks (TestRev36StealOfBlockCountsOnce)
	Helped    uint64 // tasks run by a worker while it waited in a join
	Parks     uint64 // times a worker went to sleep
	Blocks    uint64 // calls of Block
	Panics    uint64 // panics handed to the panic handler: of Execute tasks, of worker hooks, and those AllOf and AnyOf drop (TestPanicInExecute, TestWorkerHooksPanic, TestAnyOfReportsToThePoolThatPanicked)
	Queued    int    // tasks waiting in the submission queue and, stealable, in deques now (a worker's private forks are not counted: see WorkerStats.Queued)
	Idle      int    // workers looking for work or asleep now (on a closed pool, those searching count as running: see Pool.quiesced)

	// Completed counts the submitted tasks that have completed: returned,
	// panicked or called runtime.Goexit (TestStatsCompletedCountsGoexit).
	// The worker counts a task just after delivering its outcome, so
	// Completed may trail, for a moment, a Get or Invoke that has just
	// returned; once the pool is closed, Completed equals Submitted
	// (TestCloseRunsEveryAcceptedSubmission). A
	// snapshot never counts more tasks completed than submitted
	// (TestRev24StatsCompletedNotAboveSubmitted).
	Completed uint64
	// QueuedUrgent, QueuedNormal and QueuedBackground are the submitted
	// tasks waiting to start now, by priority: in the submission queue, or
	// taken in a batch and not started (WithTakeBatch;
	// TestStatsCountsBatchedTasks). A task a
	// Join ran ahead of its turn counts until it leaves the queue: at once
	// if it was at the front of its level, else when the takes reach it
	// (see WithMaxQueued); in a worker's batch, until that worker or a
	// thief pops it.
	QueuedUrgent, QueuedNormal, QueuedBackground int
	// QueueWaits counts the timed submitted tasks taken from the
	// submission queue, and QueueWaitTotal and QueueWaitMax are the sum and
	// the longest of their queue waits, from submission until a worker took
	// the task (for a task of a batch, until the batch was taken: the time
	// it then spends in the worker's ring, behind at most 31 tasks of its
	// batch, is not counted); a submission a Join ran ahead of its turn is not timed
	// (TestRev24ClaimedSlotNotTimed). One submission in 8 of each
	// priority is timed (the 8th, 16th, ...): reading the clock twice per
	// task is a large share of a small task's submission (measured in
	// docs/design.md, "Submissions").
	// QueueWaitTotal/QueueWaits is the mean wait.
	QueueWaits     uint64
	QueueWaitTotal time.Duration
	QueueWaitMax   time.Duration
}

// String formats the counters on one line.
func (s Stats) String() string {
	return fmt.Sprintf("workers=%d submitted=%d executed=%d forks=%d steals=%d helped=%d parks=%d blocks=%d panics=%d queued=%d idle=%d"+
		" completed=%d queued_urgent=%d queued_normal=%d queued_background=%d queue_waits=%d queue_wait_total=%v queue_wait_max=%v",
		s.Workers, s.Submitted, s.Executed, s.Forks, s.Steals, s.Helped, s.Parks, s.Blocks, s.Panics, s.Queued, s.Idle,
		s.Completed, s.QueuedUrgent, s.QueuedNormal, s.QueuedBackground, s.QueueWaits, s.QueueWaitTotal, s.QueueWaitMax)
}

// counters are a worker's own, written without atomics by its goroutine.
type counters struct {
	executed, forks, steals, helped, parks, blocks, broadcasts uint64
}

// publishedCounters is the copy of counters that Stats may read.
type publishedCounters struct {
	executed, forks, steals, helped, parks, blocks, broadcasts atomic.Uint64
}

// publish copies the worker's counters where Stats can read them. It runs
// on slow paths only (idle, park, steal loop exit).
func (w *Worker) publish() {
	w.pub.executed.Store(w.own.executed)
	w.pub.forks.Store(w.own.forks)
	w.pub.steals.Store(w.own.steals)
	w.pub.helped.Store(w.own.helped)
	w.pub.parks.Store(w.own.parks)
	w.pub.blocks.Store(w.own.blocks)
	w.pub.broadcasts.Store(w.own.broadcasts)
}

// Stats returns a snapshot of the pool's counters.
func (p *Pool) Stats() Stats {
	p = orDefault(p, "Pool.Stats")
	live, idle := splitCounts(p.counts.Load())
	q := p.inj
	// The tasks of batches taken and not started (takebatch.go), read
	// before the queue: a task moves from the queue to a ring, never back,
	// so a task that moves so while Stats reads is missed, not counted
	// twice. One that a steal moves from a ring read before to one read
	// after is counted twice, and the reverse missed: a snapshot of the
	// rings is approximate by up to the tasks stolen while it is read.
	var batched [NumPriorities]int
	for _, w := range p.workers[:p.parallelism] { // spares hold no batch
		if n := w.subs.Len(); n > 0 {
			batched[w.subsLevel.Load()] += n
		}
	}
	s := Stats{
		Workers:          live,
		Panics:           p.panics.Load(),
		Idle:             idle,
		QueuedUrgent:     batched[Urgent.level()] + int(q.levels[Urgent.level()].queued()),
		QueuedNormal:     batched[Normal.level()] + int(q.levels[Normal.level()].queued()),
		QueuedBackground: batched[Background.level()] + int(q.levels[Background.level()].queued()),
	}
	// Queued counts the same queued submissions as the levels above, not
	// a second read of them that could be smaller than their sum.
	s.Queued = s.QueuedUrgent + s.QueuedNormal + s.QueuedBackground + p.handoff.len()
	for _, w := range p.workers {
		n, total, longest := w.waits.read()
		s.QueueWaits += n
		s.QueueWaitTotal += total
		s.QueueWaitMax = max(s.QueueWaitMax, longest)
		s.Completed += w.completed.Load() + uint64(w.execDone.Load())
		s.Executed += w.pub.executed.Load()
		s.Forks += w.pub.forks.Load()
		s.Steals += w.pub.steals.Load()
		s.Helped += w.pub.helped.Load()
		s.Parks += w.pub.parks.Load()
		s.Blocks += w.pub.blocks.Load()
		s.Queued += w.deque.Len()
	}
	// Submitted is read after Completed: a task is counted submitted
	// before it can complete and both only grow, so Completed never
	// exceeds Submitted in a snapshot. Read before, it missed every task
	// submitted and completed between the two reads, by tens of thousands
	// when the reader was descheduled (TestRev24StatsCompletedNotAboveSubmitted,
	// review rev24).
	s.Submitted = q.submitted()
	return s
}
