package forkjoin

import (
	"context"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/magpie-go/magpie/internal/deque"
	"github.com/magpie-go/magpie/internal/park"
	"github.com/magpie-go/magpie/internal/ring"
)

// Worker is a pool's worker as seen by the task it is running. Every task
// body receives the worker that runs it, never nil; pass it to Fork, Join
// and the helpers of package magpie to work inside the same computation.
// A *Worker belongs to the goroutine running the task: do not keep it past
// the task's return or hand it to another goroutine.
type Worker struct {
	// Set by New before any goroutine sees the worker; read-only after,
	// by anyone.
	pool     *Pool
	index    int
	deque    *deque.Deque[node]
	sleepers *park.Sleepers
	fifo     bool // async mode: the scheduling loop polls its own deque oldest first
	spare    bool // a compensating worker for Block (see startSpare)
	// spareState is a compensating worker's lifecycle state: spareFree,
	// spareRunning, spareRetiring or spareExiting (see startSpare).
	spareState atomic.Int32
	// blocking counts the Blocks in progress on this worker: written by
	// its goroutine, read by startSpare and endSpare (a spare blocked
	// itself is not given to another Block).
	blocking atomic.Int32
	// idling is set while a compensating worker's goroutine is in its
	// idle phase (it found no work), written by it, read by startSpare:
	// only an idle retiring one is taken over
	// (TestRev25BlockDoesNotTakeOverBusySpare).
	idling atomic.Bool
	// sawClosed is set by the worker's goroutine once it has seen the
	// pool closed at the start of a search, from which on it counts as
	// running while it searches; read by Pool.quiesced, so that no
	// worker leaves while another holds a task taken while counted idle.
	sawClosed atomic.Bool
	foreign   atomic.Int64          // goroutines reading this worker's forks through Futures (pin)
	inbox     atomic.Pointer[share] // Broadcast's shares for this worker, newest first (broadcast.go): any goroutine posts, only the worker takes

	_ [128]byte // owner-written fields below stay off the line thieves read

	// "Owner" below is the worker's goroutine. A compensating slot has
	// successive goroutines, and a Goexit hands a worker to a fresh one:
	// each hand-over is ordered as skipStart's is, so the owner-only
	// plain fields pass from one goroutine to the next without a race
	// (under -race: TestBlockChainsWithinBoundStress, TestGoexitInTask).

	// completed and execDone count the submitted tasks this worker has
	// completed, each task in one of them: a task completes with one
	// locked add, not two. Written by the owner only, read by Stats (their
	// sum), WorkerStats and, for execDone, Pool.inflight.
	completed atomic.Uint64 // submitted tasks but Execute's (Submit, Invoke from outside), counted by submission.execute
	execDone  atomic.Int64  // Execute tasks (closures and typed actions) finished
	// waits are the queue waits of the timed submissions this worker took
	// (injector.take), written by this worker only, read by Stats.
	waits     waitCounters
	slowStart atomic.Int64  // WithSlowTaskHandler: nanotime the running submitted task started, 0 if none (slow.go)
	slowTask  atomic.Uint64 // WithSlowTaskHandler: number of that task (slow.go)
	slowSeq   atomic.Uint64 // sequence lock around slowStart and slowTask (slow.go)
	slowTasks uint64        // submitted tasks started, numbering them; owner only
	// skipStart tells the worker's next goroutine not to call the start
	// hook, which called runtime.Goexit in the previous one (hooks.go).
	// Plain: only the worker's goroutines touch it, one after the other,
	// and the go statement (or, for a compensating worker, spareMu between
	// workerExited and startSpare, or workerExited's go statement when it
	// hands the slot to a queued Block) orders each before the next.
	skipStart bool
	// inHook is set while the goroutine runs a worker hook (callHook),
	// in which Block and Blocking call fn plainly (blockOn). Plain: only
	// the worker's goroutine reads or writes it.
	inHook bool

	execFree *execNode // exec nodes for Execute's functions; owner only (see execNode)

	trimTimer *time.Timer   // sleepIdle's timer; owner only
	trims     atomic.Uint32 // times sleepIdle trimmed the free lists: written by the owner, read by tests

	frame   scopeFrame        // the innermost running task of a Scope and its spawn credits (scope.go); owner only
	retired retireBatch       // finished spawned tasks not yet subtracted from their Scope's count (scope.go); owner only
	comp    *computation      // cancellation scope of the task running now; nil if none; owner only
	group   uint64            // computation of the task running now (see handoff); 0 in the scheduling loop; owner only
	rng     uint64            // random's state; owner only
	own     counters          // written by the owner only, without atomics
	pub     publishedCounters // copy of own that Stats reads
	cache   [cacheSlots]any   // per-type free lists; owner only (see cacheOf)

	// takeBatch is the most submitted tasks a take of this worker moves
	// (WithTakeBatch; 1 for a compensating worker): see takebatch.go.
	// Set by New before the worker starts; read-only after.
	takeBatch int
	// execFreeLen is the length of execFree; owner only.
	execFreeLen int

	_ [128]byte // the ring's head is written by other workers (takebatch.go)
	// subs holds the submitted tasks of a batch this worker took and has
	// not started, oldest first; other workers take the older half when
	// they find nothing else (takebatch.go).
	subs ring.Ring[node]
	// subsLevel is the level (Priority.level) of the tasks in subs:
	// written by this worker before it fills subs, read by the others.
	subsLevel atomic.Int32
}

// Pool returns the pool the worker belongs to.
func (w *Worker) Pool() *Pool {
	if w == nil {
		panicNilWorker("Worker.Pool")
	}
	return w.pool
}

// Index returns the worker's index: 0 to Parallelism()-1 for the pool's
// workers, and up to MaxWorkers()-1 for the compensating workers Block
// starts. Size per-worker arrays with MaxWorkers().
func (w *Worker) Index() int {
	if w == nil {
		panicNilWorker("Worker.Index")
	}
	return w.index
}

// Surplus returns the number of tasks in the worker's own deque minus the
// number of idle workers that could steal them, the estimate behind Java's
// getSurplusQueuedTaskCount. It counts deque elements: a block of up to 32
// tasks spawned into one Scope counts as one, since one steal takes it. A
// task that finds Surplus above a small threshold (about 3) has enough
// parallel slack around it and can stop splitting; a negative value means
// thieves are waiting for work. It costs a few atomic loads.
func (w *Worker) Surplus() int {
	if w == nil {
		panicNilWorker("Worker.Surplus")
	}
	return w.deque.OwnerLen() - w.pool.idleWorkers()
}

// pin registers a reader of one of w's forks (a Future's Get, Done or a
// Join from another worker) until the matching unpin. While any is
// registered, w recycles none of the cells it holds back (see cellList).
//
// The argument is Dekker's: the owner settles a Future (a release store),
// later runs quiescent's fence and load, and recycles only if that load
// sees no reader. A reader pins (a locked add, a full fence) and then loads
// the Future's state. If the owner's fence came first, the settle is
// visible to the reader, which then reads the handle and never the cell;
// if the reader's add came first, the owner's load sees it and recycles
// nothing.
func (w *Worker) pin() { w.foreign.Add(1) }

func (w *Worker) unpin() { w.foreign.Add(-1) }

// quiescent reports whether no reader is pinned, after a full fence (the
// locked add) that orders every earlier settle before the check.
func (w *Worker) quiescent() bool { return w.foreign.Add(0) == 0 }

// isRunner marks *Worker as a Runner.
func (w *Worker) isRunner() {}

// push forks n onto w's deque. This and unpush are the whole un-stolen
// fork/join path. The node goes to the deque's private part, with no atomic
// instruction, unless a thief has asked for work (it found w's public part
// empty): then everything private is published, and a sleeping worker, if
// any, is woken to take it.
//
// The hot paths (JoinTasks, ForkTask) spell push as
//
//	if !w.pushPrivate(n) { w.pushPublishing(n) }
//
// so that the common case is inlined: a call to a function that is not
// inlined costs more than the whole fast path.
func (w *Worker) push(n *node) {
	if !w.pushPrivate(n) {
		w.pushPublishing(n)
	}
}

// pushPrivate is push's fast path: it reports false, having done nothing
// to the deque, if n must be published or the ring must grow.
func (w *Worker) pushPrivate(n *node) bool {
	n.comp = w.comp
	n.group = w.group
	w.own.forks++
	return w.deque.PushPrivate(n)
}

// pushPublishing is push's slow path, after pushPrivate reported false.
// If the push published w's private tasks (a thief asked for work), it
// wakes a sleeper to take them.
func (w *Worker) pushPublishing(n *node) {
	if w.deque.PushLazy(n) {
		w.published()
	}
}

// pop takes the newest task of w's deque, and wakes a sleeper if that
// published the remaining private tasks (a thief asked for work: see
// internal/deque, "No hidden work").
func (w *Worker) pop() *node {
	x, pub := w.deque.Pop()
	if pub {
		w.published()
	}
	return x
}

// publishTasks makes w's private tasks stealable and wakes a sleeper, if
// any, to take them: for a wait that blocks w without helping (Block's fn,
// Future.Get inside a task). A thief's request is served at the owner's
// next push or pop (internal/deque, "No hidden work"), and a blocked
// worker makes none: its private tasks would stay hidden for the whole
// wait, which may be a wait for one of them
// (TestGetOfOwnForkInsideTaskPublishes). Owner only.
func (w *Worker) publishTasks() {
	if w.deque.Publish() {
		w.published()
	}
}

// publishCaller is publishTasks for the worker running on the calling
// goroutine, if it is one, which it returns (nil if none): Future.Get
// calls it before it blocks. The worker is the deque's owner, since only
// its own goroutine finds it.
func publishCaller() *Worker {
	w := callingWorker()
	if w != nil {
		w.publishTasks()
	}
	return w
}

// published wakes a sleeper, if any, after w published tasks.
func (w *Worker) published() {
	if w.sleepers.Any() {
		w.sleepers.WakeOne()
	}
}

// unpush pops w's own deque until it finds n, which it then removes and
// reports true. Tasks popped on the way (forked but never joined, or joined
// out of order) are run: they are w's own work. It reports false once the
// deque is empty: n was stolen.
//
// Like push, the hot paths spell it out so that the common case inlines:
//
//	if x := w.deque.PopPrivate(); x == n || w.unpushAfter(x, n) { ... }
func (w *Worker) unpush(n *node) bool {
	if w.unpushAfter(nil, n) {
		w.own.executed++
		return true
	}
	return false
}

// unpushAfter is unpush after a pop that returned x, which is not n: nil
// (no private element) or a task forked after n. It leaves the count of
// executed tasks to its caller.
func (w *Worker) unpushAfter(x, n *node) bool {
	ran := false // a task ran above n
	for {
		if x != nil {
			w.execute(x)
			ran = true
			if n.isDone() {
				return false // run meanwhile by a Join nested in x
			}
		}
		x = w.pop()
		if x == n {
			// n runs next, inline, and need not belong to the scope of a
			// spawned task run above: flush that task's retirement, as
			// before any other code that may wait (scope.go, "Batched
			// retirement"; TestUnpushedScopeTaskRetiredBeforeJoinRunsB).
			// Only after a task ran: the un-stolen Join pays nothing. On
			// false the caller waits, and waitUntil flushes.
			if ran {
				w.flushRetired()
			}
			return true
		}
		if x == nil {
			return false
		}
	}
}

// execute runs a node taken from a deque or the submission queue. A
// submitted node runs only if this worker claims it first (its joiner may
// have run it already).
func (w *Worker) execute(n *node) {
	if n.root && !w.pool.claim(n) {
		return
	}
	w.run(n)
}

// run runs a node within its cancellation scope (restored after: w may be
// helping, running another computation's task on top of its own).
func (w *Worker) run(n *node) {
	if !n.spawn {
		w.flushRetired() // see "Batched retirement" in scope.go
	}
	w.own.executed++
	// Read first: a completed exec node goes back to w's free list.
	watched := n.root && w.pool.slow != nil
	var outer slowState
	if watched {
		outer = w.beginRoot()
	}
	savedComp, savedGroup := w.comp, w.group
	w.comp, w.group = n.comp, n.group
	if c := n.comp; c != nil && !n.root {
		w.runCounted(c, n)
	} else {
		n.job.execute(w)
	}
	w.comp, w.group = savedComp, savedGroup
	if watched {
		w.endRoot(outer)
	}
}

// runCounted runs n, a task of the computation c other than its root,
// counted in c.running while it runs (however it ends: a deferred call),
// so that the root's completion can wait for it once c is canceled (see
// computation.settle).
func (w *Worker) runCounted(c *computation, n *node) {
	c.running.Add(1)
	defer c.leave()
	n.job.execute(w)
}

// waitUntil is the one wait of a worker: it returns once l is set, and
// until then w runs other tasks (its own, those of hint's thief, which are
// likely hint's subtasks, then anyone's) and sleeps only when it finds
// none. Sleeping, it is registered both on l (woken when l is set) and with
// the pool's sleepers (woken for new work, which it helps with), and it
// re-checks l and every deque between registering and sleeping, so that
// neither wake-up can be lost (see internal/park). hint may be nil.
//
// A waiting worker never runs a submitted (root) task: a root is an
// unrelated computation that may itself join a Future lower on this
// worker's stack, which could then never complete (Java's ForkJoinPool
// does not help with external submissions while joining either). Roots
// are only ever in the submission queue (injector.go), which a waiting
// worker does not poll.
func (w *Worker) waitUntil(l *latch, hint *node) {
	var bo park.Backoff
	registered := false // w called Prepare during this wait: see below the loop
	for !l.probe() {
		if w.helpOrSnooze(hint, &bo) {
			continue
		}
		w.sleepers.Prepare(w.index, w.group == 0)
		registered = true
		if _, ok := l.addWaiter(w); !ok {
			w.sleepers.Cancel(w.index)
			break
		}
		if w.inbox.Load() != nil { // a Broadcast's share: run it before sleeping
			w.sleepers.Cancel(w.index)
			continue
		}
		if x := w.findHelp(hint); x != nil {
			w.sleepers.Cancel(w.index)
			w.own.helped++
			w.execute(x)
			bo.Reset()
			continue
		}
		w.own.parks++
		w.flushRetired()
		w.publish()
		w.sleepers.Sleep(w.index)
		w.sleepers.Cancel(w.index)
		bo.Reset()
	}
	if registered {
		// Registered since a Prepare, w may have been the sleeper a
		// producer's WakeOne, or a submitter's WakeIdle (waitForeign
		// registers as idle), picked for work that this worker, returning
		// to its task, will not look at now: pass the wake-up on so that
		// the work does not wait. Every exit needs it: after Sleep, after
		// the addWaiter failure (l set since the loop's check), and after
		// a task run by findHelp or a Broadcast share (l set meanwhile);
		// only the first passed it on, and a submission waited while the
		// pool's other worker slept (TestForeignWaitKeepsSubmitWakeup).
		w.pool.wakeIfWork()
	}
	// Back to the waiting task, which need not belong to the scopes of the
	// tasks helped meanwhile and may block (scope.go, "Batched retirement").
	w.flushRetired()
}

// waitForeign waits for l, the latch of a task on another pool, keeping
// w's own pool going: while it waits, w runs any task of its pool, as an
// idle worker would (submitted ones included), so that a task of the other
// pool that invokes w's pool in turn finds a worker (rayon's install does
// the same). The price of running unrelated tasks on this stack is the one
// waitUntil avoids inside a pool: one of them that calls runtime.Goexit
// unwinds the waiting task too; the wait then goes on in settleForeign, so
// that the waiting task's computation does not report ErrGoexit while the
// task on the other pool still runs (TestGoexitInForeignWaitWaitsForIt). A
// hook runs no task (WithWorkerHooks): a worker in a hook waits as the
// hook's joins do, running only tasks of the hook's own computation
// (TestHookForeignWaitRunsNoSubmission; it ran a queued Execute inside the
// hook before).
func (w *Worker) waitForeign(l *latch) {
	comp, group := w.comp, w.group
	var slow slowState // WithSlowTaskHandler: the waiting task's (slow.go)
	if w.pool.slow != nil {
		slow = slowState{w.slowStart.Load(), w.slowTask.Load()}
	}
	returned := false
	defer func() {
		if !returned { // a task run below called runtime.Goexit
			w.settleForeign(l, comp, group, slow)
		}
	}()
	if w.inHook {
		w.waitUntil(l, nil) // w.group is the hook's computation (callHook)
	} else {
		w.group = 0 // any task: see findHelp
		w.waitUntil(l, nil)
		w.group = group
	}
	returned = true
}

// settleForeign is waitForeign's wait for l going on while the goroutine
// unwinds from a runtime.Goexit of a task that the wait ran. w's
// computation is stale (the Goexit skipped Worker.run's restoring it), so
// it is set back to comp and group, the waiting task's, and so is its
// slow-task state (slow), which the Goexit of a submitted task left
// naming that task as running: the watchdog reported the waiting task a
// second time (TestSettleForeignSlowReportsOnce). A task of another
// computation run on the unwinding stack could wait for something only the
// unwinding brings, so w does not help here when it need not: a
// compensating worker takes its place, as in Block, and w blocks until l
// is set (TestGoexitSettleRunsOnlyItsComputation arranges this). With none
// free (WithMaxBlocked), w helps with any task of its pool as before: the
// task on the other pool may be waiting for one, and only w may be left to
// run it (TestGoexitInForeignWaitNoSpareHelps). Such a task may call
// Goexit in turn: untilSettled waits again.
func (w *Worker) settleForeign(l *latch, comp *computation, group uint64, slow slowState) {
	restoreSlow := func() {
		if w.pool.slow != nil {
			w.setSlow(slow)
		}
	}
	if !w.inHook {
		w.publishTasks()  // the spare must see w's tasks: l's may wait for one
		w.blocking.Add(1) // before the search, as in blockOn
		if lease := w.pool.startSpare(w, false); lease.held() {
			defer w.blocking.Add(-1)
			defer w.pool.endSpare(lease)
			w.untilSettled(comp, group, func() {
				restoreSlow()
				w.blockSettling(l)
			})
			return
		}
		w.blocking.Add(-1) // no spare: w helps instead
	}
	helpGroup := group // a hook helps only its own computation
	if !w.inHook {
		helpGroup = 0 // any task, as in waitForeign
	}
	w.untilSettled(comp, helpGroup, func() {
		restoreSlow()
		w.waitUntil(l, nil)
	})
	w.group = group
}

// blockSettling is settleForeign's wait behind a compensating worker: it
// blocks w until l is set, running no task, but first flushes w's batch
// of retired spawned tasks, whose scope may be what l's task waits for
// (TestSettleForeignFlushesRetiredBatch), and, meanwhile, the Broadcast
// shares posted to w, which only w runs, and which l's task may be
// waiting for (TestSettleForeignRunsBroadcastShares). A share may call
// runtime.Goexit: settleForeign's untilSettled waits again
// (TestSettleForeignShareGoexitStillWaits). w sleeps on its token
// without registering as a sleeper, so that no wake-up for work picks
// it: l's set (addWaiter) and post give it a token.
func (w *Worker) blockSettling(l *latch) {
	w.flushRetired()
	for !l.probe() {
		if w.inbox.Load() != nil {
			w.runShares()
			continue
		}
		if _, ok := l.addWaiter(w); !ok {
			break
		}
		if w.inbox.Load() != nil { // posted before addWaiter: its token may be spent
			continue
		}
		w.sleepers.Sleep(w.index)
	}
}

// helpOrSnooze is one step of a worker waiting: it runs a task that may
// help hint along, or else spins or yields for a while. It reports false
// once the backoff is exhausted and the caller should block.
func (w *Worker) helpOrSnooze(hint *node, bo *park.Backoff) bool {
	if w.inbox.Load() != nil && w.runShares() { // a Broadcast waits for this worker: see Broadcast
		bo.Reset()
		return true
	}
	if x := w.findHelp(hint); x != nil {
		w.own.helped++
		w.execute(x)
		bo.Reset()
		return true
	}
	w.flushRetired() // nothing to help with: before spinning or sleeping (scope.go)
	return bo.Snooze()
}

// findHelp finds a task of w's own computation for a worker waiting on n
// (nil: no hint): from its own deque first, then from the thief of n, then
// from any other worker, then among the tasks handed off by other waiting
// workers. A task of another computation taken on the way is handed off
// (see handoff), not run.
func (w *Worker) findHelp(n *node) *node {
	if w.group == 0 {
		return w.findWork() // waitForeign: any task of the pool
	}
	if x := w.pop(); x != nil { // newest first in either mode (see Scope)
		if x = w.mayHelp(x); x != nil {
			return x
		}
	}
	// The thief of n is most likely busy with n's subtasks: help it first
	// (leapfrogging). It may belong to another pool when w joins a future
	// forked elsewhere; then there is nothing of ours to take from it.
	if n != nil {
		if t := n.thief.Load(); t != nil && t != w && t.pool == w.pool {
			if x := w.stealFrom(t); x != nil {
				if x = w.mayHelp(x); x != nil {
					return x
				}
			}
		}
	}
	if x := w.stealAny(); x != nil {
		if x = w.mayHelp(x); x != nil {
			return x
		}
	}
	return w.pool.handoff.take(w.group)
}

// mayHelp passes x through if a worker waiting in w's computation may run
// it, and otherwise hands a task of another computation to the handoff
// list. x comes from a deque, so it is not a submitted (root) task: those
// are only ever in the injector, which a waiting worker does not poll.
func (w *Worker) mayHelp(x *node) *node {
	if x.group == w.group {
		return x
	}
	w.pool.handOff(x)
	return nil
}

// findWork finds a task for the scheduling loop: own deque (LIFO, or FIFO in
// async mode), then stealing from a random victim onwards, then handed-off
// tasks, then the submission queue (one task, the oldest of the most urgent
// level: see injector.take).
func (w *Worker) findWork() *node {
	var x *node
	if w.fifo {
		// Poll publishes the private part and takes the oldest task; a
		// sleeper must be woken for the rest (internal/park: publish, then
		// wake). A thief that asked while w held them went to sleep, and
		// w may now run one for long (TestFIFOPollWakesForPublishedTasks).
		pub := w.deque.Publish()
		x = w.deque.Poll()
		if pub && w.deque.Len() > 0 {
			w.published()
		}
	} else {
		x = w.pop()
	}
	if x != nil {
		return x
	}
	if x = w.popBatch(); x != nil {
		return x
	}
	if x = w.stealAny(); x != nil {
		return x
	}
	if x = w.pool.handoff.take(0); x != nil {
		return x
	}
	return w.pool.pollSubmission(w)
}

// stealAny tries every other worker once, starting at a random one, so that
// thieves spread over victims instead of convoying on worker 0.
func (w *Worker) stealAny() *node {
	ws := w.pool.workers
	if live, _ := splitCounts(w.pool.counts.Load()); live <= w.pool.parallelism {
		// No spare is running (see Block), so none holds a task: their
		// deques are empty. A spare counts itself live before it starts,
		// so one that pushes after this load finds this worker registered
		// if it goes to sleep (see internal/park), and wakes it.
		ws = ws[:w.pool.parallelism]
	}
	n := len(ws)
	if n == 1 {
		return nil
	}
	start := int(w.random() % uint64(n))
	for k := 0; k < n; k++ {
		v := ws[(start+k)%n]
		if v == w {
			continue
		}
		if x := w.stealFrom(v); x != nil {
			return x
		}
	}
	return nil
}

func (w *Worker) stealFrom(v *Worker) *node {
	x := v.deque.Steal()
	if x == nil {
		return nil
	}
	x.thief.Store(w)
	w.own.steals++
	// More work where this came from and someone asleep: wake a helper, so
	// that parallelism ramps up without each push paying for it.
	if v.deque.Len() > 0 && w.sleepers.Any() {
		w.sleepers.WakeOne()
	}
	return x
}

// random returns the next value of the worker's xorshift64* generator.
func (w *Worker) random() uint64 {
	x := w.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	w.rng = x
	return x * 2685821657736338717
}

// exitIdle reports whether w, idle, leaves its loop: for a regular
// worker, the pool is closed and drained and no worker runs a task any
// more (Pool.quiesced: a fork never joined may still run, and Block, on a
// drained pool: TestRev27DrainedPoolKeepsWorkerForBlock); for a
// compensating worker, it was told to retire. A retiring
// one first drops the functions of the taken submission slots, as a
// worker does before it sleeps (trimSpares), since it exits instead: it
// may have run the last submission after every other worker went to
// sleep, and none of them looks again until new work wakes it
// (TestIdlePoolDropsFunctionRunOnCompensatingWorker).
//
// A retiring worker leaves only if its CAS to spareExiting wins over a
// Block reclaiming it (startSpare); having lost, it goes on as a running
// one. A running one stays on a drained pool too, until the Block it
// stands in for returns and retires it (endSpare, which wakes it): a fork
// never joined outlives its root, so a drained pool may still run Blocks.
// It left, the slot went to the next Block, and the first Block's end
// then retired that Block's worker (TestRev25DrainedPoolSpareStaysForItsBlock).
func (w *Worker) exitIdle() bool {
	if !w.spare {
		return w.pool.quiesced() // not drained alone: see quiesced
	}
	if w.spareState.Load() == spareRetiring &&
		w.spareState.CompareAndSwap(spareRetiring, spareExiting) {
		w.pool.inj.trimSpares()
		return true
	}
	return false
}

// retiringBusy reports whether w, a compensating worker between two tasks,
// leaves its loop although work may be waiting: it was told to retire (the
// task it stood in for has returned from Block) and holds no task of its
// own, so that nothing is left where only it would look. The pool's
// Parallelism() workers take the rest. Without this check a spare left only
// once it found no work, so under steady load the pool ran one worker more
// than its parallelism for as long as the load lasted
// (TestSpareRetiresUnderSteadyLoad). As exitIdle, it drops the functions of
// taken submission slots first, and, since it leaves work behind, it wakes
// a sleeper if any work is visible (a worker goes to sleep only after
// finding none, and whoever makes work visible later wakes one; the call is
// a safety net on a path taken once per Block).
//
// As in exitIdle, it leaves only if its CAS to spareExiting wins over a
// Block reclaiming it.
func (w *Worker) retiringBusy() bool {
	if w.spareState.Load() != spareRetiring || w.deque.OwnerLen() != 0 ||
		!w.spareState.CompareAndSwap(spareRetiring, spareExiting) {
		return false
	}
	w.pool.inj.trimSpares()
	w.pool.wakeIfWork()
	return true
}

// idlePhase moves w into (in) or out of the idle phase: the pool's count
// and, for a compensating worker, idling (see startSpare).
func (w *Worker) idlePhase(in bool) {
	if in {
		w.pool.addIdle(1)
	} else {
		w.pool.addIdle(-1)
	}
	if w.spare {
		w.idling.Store(in)
	}
}

// searchClosed is called by w, idle, before it searches for work: on a
// closed pool it moves w out of the idle phase for the search (the caller
// moves it back if the search finds nothing), so that a task it takes is
// never held by a worker counted idle, and reports true; else it reports
// false and w searches counted idle. See Pool.quiesced.
func (w *Worker) searchClosed() bool {
	if !w.pool.closed.Load() {
		return false
	}
	if !w.sawClosed.Load() {
		w.sawClosed.Store(true)
	}
	w.idlePhase(false)
	return true
}

// loop is the worker goroutine's scheduling loop.
func (w *Worker) loop() {
	p := w.pool
	exited := false
	hooked := false  // this goroutine called the start hook: it calls exit last
	inStart := false // the start hook is running
	defer func() {
		if !exited {
			// A task (or the start hook) called runtime.Goexit, which no
			// recover stops. The node it ran was completed with a
			// PanicError; this goroutine cannot continue, so hand the
			// worker to a fresh one, after this one's exit hook (the
			// deferred call runs even if the hook calls Goexit too).
			if inStart {
				w.skipStart = true // the fresh goroutine must not call it again
			}
			defer func() {
				unregisterGoroutine()
				go w.loop()
			}()
			if hooked {
				w.callHook(p.onExit)
			}
			return
		}
		defer func() {
			w.flushRetired()
			w.publish()
			unregisterGoroutine()
			p.workerExited(w) // after the exit hook: Close returns after it
		}()
		if hooked {
			w.callExitHook()
		}
	}()
	registerGoroutine(w)
	w.comp, w.group = nil, 0 // after a Goexit restart, the unwound task's are stale
	if w.pool.slow != nil && w.slowStart.Load() != 0 {
		w.setSlow(slowState{}) // likewise
	}
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(),
		pprof.Labels("magpie.pool", p.name, "magpie.worker", strconv.Itoa(w.index))))
	if w.skipStart {
		w.skipStart = false
	} else {
		hooked, inStart = true, true
		w.callHook(p.onStart) // nothing without WithWorkerHooks
		inStart = false
	}

	var bo park.Backoff
	idle := false
	if w.spare {
		w.idling.Store(false)
	}
	for {
		if w.inbox.Load() != nil { // a Broadcast waits for this worker
			if idle {
				idle = false
				w.idlePhase(false) // a worker running user code counts as running (see caller.go)
			}
			w.runShares()
			bo.Reset()
			continue
		}
		if w.spare && w.retiringBusy() {
			w.flushRetired()
			if !idle {
				idle = true
				w.publish()       // before it counts as idle: see Stats
				w.idlePhase(true) // workerExited counts an idle worker out
			}
			break
		}
		if idle && w.searchClosed() {
			idle = false
		}
		if x := w.findWork(); x != nil {
			if idle {
				idle = false
				w.idlePhase(false)
			}
			w.execute(x)
			bo.Reset()
			continue
		}
		w.flushRetired() // out of work (scope.go)
		if !idle {
			idle = true
			// Publish before counting as idle: a Stats that reads the idle
			// count (first) with every worker idle then reads (after) the
			// counters of all the work done before, as Stats promises of
			// an idle pool; the other order showed an idle pool with its
			// last tasks missing (TestStatsIdleSnapshotIsExact).
			w.publish()
			w.idlePhase(true)
		}
		if w.exitIdle() {
			break
		}
		if bo.Snooze() {
			continue
		}
		w.sleepers.Prepare(w.index, true)
		if w.inbox.Load() != nil {
			w.sleepers.Cancel(w.index)
			continue
		}
		closed := w.searchClosed()
		if x := w.findWork(); x != nil {
			w.sleepers.Cancel(w.index)
			idle = false
			if !closed {
				w.idlePhase(false)
			}
			w.execute(x)
			bo.Reset()
			continue
		}
		if closed {
			w.idlePhase(true)
		}
		if w.exitIdle() {
			w.sleepers.Cancel(w.index)
			// Registered since Prepare, w may be the sleeper a producer's
			// WakeOne or WakeIdle picked for work it published after w's
			// findWork above: the token leaves with w, so pass it on. A
			// retiring spare dropped it, and the submission waited while
			// the pool's other idle worker slept
			// (TestRetiringSpareKeepsSubmitWakeup).
			p.wakeIfWork()
			break
		}
		p.inj.trimSpares() // nothing to run: give a burst's spare blocks back
		w.subs.DropTaken() // and the taken tasks its ring still points to (TestIdlePoolDropsBatchedSubmissions)
		w.own.parks++
		w.publish()
		w.sleepIdle() // and, after idleTrimDelay, the free lists' excess (cache.go)
		w.sleepers.Cancel(w.index)
	}
	exited = true
}
