package forkjoin

// Batched takes: when a backlog of submitted tasks waits at one priority
// level, a worker takes up to WithTakeBatch of them at once (injector.take)
// and keeps all but the first in its ring (internal/ring), oldest first,
// where the other workers can take them. Taking one task at a time moved
// the submission queue's shared lines (the takers' lock and the level's
// taken count) between the cores at every task, so that two workers
// drained a backlog of tiny tasks more slowly than one
// (BenchmarkSubmitDrain; docs/design.md, "Batched takes").
//
// Invariants:
//
//   - A ring holds tasks of one level, all taken from the queue before
//     any task still in it at that level: a worker looking for a
//     submitted task treats a ring as the front of its level (take), so
//     that within a level tasks still start oldest first but for the
//     batches in flight.
//   - Only a regular worker fills its ring, with the takers' lock held,
//     only when it is empty and no ring holds tasks of another level,
//     only when one level alone holds tasks in the queue, and only when
//     at least two tasks per worker wait at that level (batchWanted); a
//     steal moves tasks from a ring into an empty one, with their level,
//     with the takers' lock held too (review rev32; only an owner's pops
//     of its own ring go without it): so the rings never hold two levels
//     at once. A compensating worker
//     (Block) never holds a batch, so a spare retiring takes none away.
//   - Every task in a ring is counted in flight (accepted, not finished)
//     and holds its WithMaxQueued token until it starts, as a queued one
//     does, and every worker that looks for work takes from the rings
//     before it sleeps (take, through findWork): a ring's tasks are never
//     stranded while a worker is free, however long its owner's current
//     task blocks. A fill wakes one sleeper, and each worker that steals
//     wakes the next while tasks are left in its ring, in any other
//     worker's or in the queue (take's more; TestRev31StealPassesWakeUpOn,
//     TestRev34LastStealPassesWakeUpOn: a steal from another ring than
//     the one whose wake-up it had). A worker waiting in a join does not
//     take them, as it does not take queued submissions (see waitUntil).
//   - Priorities and aging hold task by task: a task is started from a
//     ring only if take chose its level over the queue's levels, with
//     the aging counts of a take; only when the ring's level is the only
//     one with tasks and no count is set does the owner pop it without
//     the takers' lock (the choice and the counts are then known); in
//     that case a take under the lock, too, serves a ring chosen as
//     before the lock if it saw one then (batchSource, called again:
//     its own, else a random other, so that thieves spread), or else the
//     queue (the oldest ring if the queue is empty). Else, under the lock, take
//     looks at the rings again and serves the one whose front is the
//     oldest (oldestBatch), the taker's own or not: so a
//     take of the rings' level starts the head of the level, and the
//     head is passed over by at most aging+1 takes of other levels, as
//     in the queue (review rev33: the taker's own ring first let a busy
//     worker's ring hold the head for a round per task of the taker's
//     ring, TestRev33AgingReachesBusyWorkersRing; and a take that had
//     seen no ring before its wait for the lock counted a level held in
//     a ring filled meanwhile as empty, resetting its aging count,
//     TestRev33TakeLooksAtRingsUnderLock). A
//     Submit claimed in a ring by a worker joining its Future is no
//     task: a take that finds it drops it without counting it, as peek
//     drops a claimed slot of the queue (review rev33;
//     TestRev33ClaimedRingTaskCostsNoAgingRound).

import "github.com/magpie-go/magpie/internal/ring"

// maxTakeBatch is the largest batch: half a ring, so that a worker's ring
// never fills (it is filled only when empty, and a thief moves at most
// half of another's into its own, empty, ring).
const maxTakeBatch = ring.Cap / 2

// maxExecFree bounds a worker's list of free exec nodes: the nodes of a
// batch are taken from the taker's list and, when stolen, go back to the
// list of the worker that ran them, so one list could otherwise grow
// while another allocates.
const maxExecFree = 2 * ring.Cap

// popBatch returns the next task of w's own ring for its scheduling loop,
// or nil if the ring is empty: before other workers' forks, so that w
// keeps the cache lines of its batch (the other workers take its older
// half when they run dry). The common case, the ring's level alone holding
// tasks and no aging count set, pops without the takers' lock, as take
// would; otherwise take chooses.
func (w *Worker) popBatch() *node {
	if w.subs.Len() == 0 {
		return nil
	}
	q := w.pool.inj
	if q.onlyLevel(int(w.subsLevel.Load())) && q.noPasses() {
		if x := w.subs.Pop(); x != nil {
			return x
		}
	}
	return w.pool.pollSubmission(w)
}

// batchSource returns the worker whose ring a take of w would serve first
// and the level of that ring's tasks: w itself if its ring holds tasks,
// else another regular worker's (starting at a random one), else nil. The
// level read for another worker is a snapshot: that ring may be emptied
// and refilled with another level before w takes from it. w may be nil
// (the queue's own tests). Once it holds the takers' lock, take looks
// at the rings again with oldestBatch, which chooses the ring it serves
// (TestRev32TakeRereadsRingLevelUnderLock); this look only decides
// whether w pops its own ring without the lock and whether to take the
// lock when the queue looks empty.
func (w *Worker) batchSource() (*Worker, int) {
	if w == nil {
		return nil, -1
	}
	if w.subs.Len() > 0 {
		return w, int(w.subsLevel.Load())
	}
	// Spares never hold a batch; a spare itself looks at every regular
	// worker, the only one of a pool of one too
	// (TestBlockedBatchOwnerServedBySpare).
	ws := w.pool.workers[:w.pool.parallelism]
	n := len(ws)
	if n == 1 && ws[0] == w {
		return nil, -1
	}
	start := int(w.random() % uint64(n))
	for k := range n {
		v := ws[(start+k)%n]
		if v != w && v.subs.Len() > 0 {
			return v, int(v.subsLevel.Load())
		}
	}
	return nil, -1
}

// takeBatched takes the oldest task of src's ring for w, or nil if the
// ring is empty by now: from its own ring, w pops it; from another
// worker's, w takes the older half, runs the first and keeps the others
// in its own ring if that is empty; if it is not (it holds younger tasks:
// see oldestBatch), and for a compensating worker, w takes the oldest
// alone. Called with the take lock held.
func (w *Worker) takeBatched(src *Worker) *node {
	if src == w {
		return w.subs.Pop()
	}
	if w.takeBatch < 2 || w.subs.Len() != 0 {
		return src.subs.StealHalf(nil)
	}
	// The level before the tasks: a worker that finds them in w's ring
	// then reads their level (see batchSource for the snapshot).
	l := src.subsLevel.Load()
	if w.subsLevel.Load() != l {
		w.subsLevel.Store(l)
	}
	return src.subs.StealHalf(&w.subs)
}

// stoleMore is the part of take's "more" owed to a steal from victim's
// ring in this take (nil: none): tasks moved to w's ring (into: by a
// steal into it while it was empty; the tasks it held before do not
// count, see injector.take), or left in any other worker's ring while a
// worker sleeps, since this steal may be the one a wake-up for them
// reached (TestRev31StealPassesWakeUpOn). Not only victim's: a worker
// woken for the tasks of one ring may steal from another (the oldest
// front, or a random one), and the chain of wake-ups of the first ring
// then went through it; when it took the last task of its victim, the
// first ring's tasks waited behind their owner's blocked task while a
// worker slept (TestRev34LastStealPassesWakeUpOn, review rev34). A take
// that stole a task claimed meanwhile goes on to its own ring or the
// queue and still owes it. Called with the take lock held: no ring is
// filled meanwhile, so a ring seen empty stays so (a pop seen late wakes
// a worker for nothing).
func (w *Worker) stoleMore(victim *Worker, into bool) bool {
	return victim != nil && (into && w.subs.Len() > 0 || w.sleepers.Any() && w.pool.othersHoldBatch(w))
}

// othersHoldBatch reports whether the ring of a regular worker other than
// w holds tasks.
func (p *Pool) othersHoldBatch(w *Worker) bool {
	for _, v := range p.workers[:p.parallelism] {
		if v != w && v.subs.Len() > 0 {
			return true
		}
	}
	return false
}

// claimedRoot reports whether x, a submitted node taken from a ring, was
// claimed by a worker joining its Future (Future.joinOther), which runs
// it: x is then no task for the taker. A claim made after this load is
// found by the taker's own claim (Worker.execute), which skips the task.
func (x *node) claimedRoot() bool { return !x.solo && x.claimed.Load() }

// oldestBatch returns the regular worker whose ring's front is the
// oldest task held in a ring, and that ring's level, or nil and -1 if
// every ring is empty: the ring a take under the lock serves, so that a
// take of the rings' level starts the oldest task of that level. Taking
// w's own ring first let the head of a level wait in the ring of a busy
// worker while w started its younger tasks one per aging round: with
// aging 4, 40 Urgent tasks started ahead of it, where the bound is 5
// (TestRev33AgingReachesBusyWorkersRing, review rev33). The rings hold
// one level at a time, whose tasks' group numbers grow with their
// position in the level (groupOf). Called with the take lock held: a
// front read may be popped by its owner at once (the take then looks
// again), but no node's group changes meanwhile (a submission's is set
// before it is queued, an exec node's only by a take, under the lock).
func (w *Worker) oldestBatch() (*Worker, int) {
	var (
		src    *Worker
		oldest uint64
	)
	for _, v := range w.pool.workers[:w.pool.parallelism] { // spares hold no batch
		if x := v.subs.Peek(); x != nil && (src == nil || x.group < oldest) {
			src, oldest = v, x.group
		}
	}
	if src == nil {
		return nil, -1
	}
	return src, int(src.subsLevel.Load())
}

// batchWanted returns how many tasks beyond the first a take of w from
// level l should move to w's ring, with queued tasks left at that level
// and candidates the levels take chose among (bit l for level l): none
// for a compensating worker or a pool with WithTakeBatch(1), none unless
// level l alone holds tasks and w's ring is empty, and none while fewer
// than two tasks per worker wait, so that a short queue keeps the order
// of one task per take; else up to the take batch.
func (w *Worker) batchWanted(queued uint64, candidates uint8, l int) int {
	if w == nil || w.takeBatch < 2 || candidates != 1<<l || w.subs.Len() != 0 || w.pool.ringsHoldOther(l) {
		return 0
	}
	per := (queued + 1) / uint64(w.pool.parallelism) // the one taken counts
	if per < 2 {
		return 0
	}
	return int(min(per, uint64(w.takeBatch))) - 1
}

// ringsHoldOther reports whether a regular worker's ring holds tasks of
// a level other than l. Called by batchWanted with the take lock held:
// fills and steals happen only under it (a steal moves tasks into an
// empty ring with their level), and only pops without it, so a ring it
// sees empty or at level l holds no other level until the lock is
// released. Hence rings never hold two levels at
// once, and the lock-free pops (popBatch, take's first path), which look
// only at the queue's levels, miss no more urgent task in a ring
// (review rev31 found that a fill after the unlock let a second level
// into the rings).
func (p *Pool) ringsHoldOther(l int) bool {
	for _, v := range p.workers[:p.parallelism] {
		if v.subs.Len() > 0 && int(v.subsLevel.Load()) != l {
			return true
		}
	}
	return false
}

// fillBatch puts xs, tasks taken at level l, in w's empty ring. Called
// with the take lock held (see ringsHoldOther).
func (w *Worker) fillBatch(l int, xs []*node) {
	if w.subsLevel.Load() != int32(l) {
		w.subsLevel.Store(int32(l)) // before the tasks: see takeBatched
	}
	w.subs.Fill(xs)
}
