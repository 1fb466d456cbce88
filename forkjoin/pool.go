package forkjoin

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/magpie-go/magpie/internal/deque"
	"github.com/magpie-go/magpie/internal/park"
)

// Pool is a fork-join pool: a fixed set of worker goroutines, each with its
// own work-stealing deque, plus a queue for work submitted from outside.
// All methods are safe for concurrent use.
type Pool struct {
	// Settings, fixed by New.
	parallelism int
	mode        Mode
	name        string
	isShared    bool // Default(): Close is a no-op
	onPanic     func(*PanicError)
	onStart     func(index int) // WithWorkerHooks: called by each worker goroutine as it starts (hooks.go)
	onExit      func(index int) // WithWorkerHooks: called by each worker goroutine as it ends

	// Workers, and their sleep.
	workers  []*Worker // the regular workers, then the spares for Block
	sleepers *park.Sleepers
	spareMu  sync.Mutex
	spares   []*Worker // spare workers not running, for Block; guarded by spareMu
	// Blocks queued for a compensating worker, oldest first (startSpare);
	// guarded by spareMu.
	spareWaits []*spareWait

	// Work that is on no worker's deque.
	inj     *injector // the submission queue (injector.go)
	handoff handoff   // tasks that waiting workers took but may not run

	// Lifecycle.
	closed    atomic.Bool
	closeOnce sync.Once
	closedCh  chan struct{} // closed by Close: wakes submitters waiting for room
	stopped   chan struct{} // closed when the last worker has exited

	// Observability.
	panics atomic.Uint64 // Execute panics reported
	slow   *slowWatch    // WithSlowTaskHandler's watchdog (slow.go); nil without it

	execLists execLists // free lists of typed Execute boxes, per action type (exectask.go)

	// The work in flight is accepted minus finished, two counters so that
	// a submitter does not write the line every completion writes: with
	// one counter, each submission fetched it back from the worker that
	// had last completed a task. Each is on a line of its own, away from
	// the fields above, which every submission reads (inj, closed,
	// sleepers). See inflight.
	_        [linePad]byte
	accepted atomic.Int64 // submissions (and Broadcasts) counted in flight; written by submitters only
	_        [linePad]byte
	finished atomic.Int64 // of those, completed or rejected after counting, but Execute tasks (Worker.execDone); written at completion
	_        [linePad]byte
	// counts packs two numbers in one word, so that one load reads both
	// at the same instant (Stats reports them together): the worker
	// goroutines not yet exited, spares included, in the high 32 bits, and
	// those of them in the scheduling loop's idle phase in the low 32.
	// Written whenever a worker goes idle or finds work.
	counts atomic.Int64
	_      [linePad]byte
}

// New starts a pool. With no options it has runtime.GOMAXPROCS(0) workers
// in LIFO mode (TestOptions). Close it when done to stop its goroutines.
func New(opts ...Option) *Pool {
	var c config
	for _, o := range opts {
		if o == nil {
			panic("forkjoin: New called with a nil Option")
		}
		o(&c)
	}
	n := c.parallelism
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	n = min(n, MaxParallelism)
	p := &Pool{
		mode:        c.mode,
		onPanic:     c.onPanic,
		onStart:     c.onStart,
		onExit:      c.onExit,
		sleepers:    park.New(n + maxBlocked(c, n)),
		parallelism: n,
		name:        c.name,
		isShared:    c.shared,
		closedCh:    make(chan struct{}),
		stopped:     make(chan struct{}),
	}
	if p.name == "" {
		p.name = fmt.Sprintf("pool-%d", poolCount.Add(1))
	}
	p.inj = newInjector(c, p.closedCh)
	if p.onPanic == nil {
		p.onPanic = func(pe *PanicError) {
			fmt.Fprintf(os.Stderr, "forkjoin: panic in a task started by Execute: %v\n\n%s\n", pe.Value, pe.Stack)
		}
	}
	p.workers = make([]*Worker, n+maxBlocked(c, n))
	for i := range p.workers {
		p.workers[i] = &Worker{
			pool:      p,
			index:     i,
			deque:     deque.New[node](),
			sleepers:  p.sleepers,
			fifo:      c.mode == FIFO,
			rng:       uint64(i)*0x9E3779B97F4A7C15 + 1,
			spare:     i >= n,
			takeBatch: 1,
		}
		if i < n {
			p.workers[i].takeBatch = c.takeBatchOr()
		}
	}
	p.spares = append(p.spares, p.workers[n:]...)
	p.addLive(int64(n))
	if c.slowHandler != nil { // before the workers start: they read p.slow
		p.slow = &slowWatch{threshold: c.slowThreshold, handler: c.slowHandler, done: make(chan struct{})}
	}
	for _, w := range p.workers[:n] {
		go w.loop()
	}
	if p.slow != nil {
		go p.watch(p.slow)
	}
	return p
}

var poolCount atomic.Int64

// Parallelism returns the number of workers.
func (p *Pool) Parallelism() int { return orDefault(p, "Pool.Parallelism").parallelism }

// MaxWorkers returns the number of distinct worker indices the pool can
// have: Parallelism() plus the compensating workers Block may start
// (WithMaxBlocked). Every Worker.Index() of the pool is below it, so it
// sizes a per-worker array safely (TestWorkerIndexBelowMaxWorkers).
func (p *Pool) MaxWorkers() int { return len(orDefault(p, "Pool.MaxWorkers").workers) }

// Mode returns the pool's scheduling mode.
func (p *Pool) Mode() Mode { return orDefault(p, "Pool.Mode").mode }

// Closed reports whether Close or Shutdown has been called on p: from then
// on the pool refuses new work with ErrClosed (Execute returns it, Invoke
// called from outside the pool panics with it; the magpie helpers run
// what it refuses on their caller instead) while it finishes what it had
// accepted, whose tasks may go on forking
// and calling Invoke inline (see Close; TestPoolClosed). The Default
// pool is never closed. Like Java's
// ExecutorService.isShutdown, it is a snapshot: a pool reported open may
// be closed by the time the caller acts on it.
func (p *Pool) Closed() bool { return orDefault(p, "Pool.Closed").closed.Load() }

// isRunner marks *Pool as a Runner.
func (p *Pool) isRunner() {}

// Close shuts the pool down gracefully: it stops accepting submissions
// (Execute and Submit fail with ErrClosed, Invoke panics with it), lets
// every task already accepted run to completion, including all the tasks
// they fork, and waits until every worker goroutine has exited
// (TestAfterClose, TestCloseRunsEverythingOnce, TestCloseWaitsForRunningTasks).
// It is idempotent and safe to call concurrently; every call returns after
// the workers are gone (TestCloseIdempotentAndConcurrent).
//
// Called from inside one of the pool's own tasks, or from its panic
// handler (WithPanicHandler), for which a worker may be waiting, Close
// cannot wait for itself: it stops accepting submissions and returns at
// once, and the workers exit once the work in flight completes
// (TestPanicHandlerCanClose). So does Close from another pool's handler
// reporting, from one of this pool's workers, a panic AllOf or AnyOf
// dropped (TestOtherPoolsHandlerCanCloseReporterPool), and Close from
// Blocking's function run off one of its workers
// (TestBlockingForeignCanClose). Close on the Default pool does nothing
// (TestPoolClosed, TestNilPoolMethodsMeanDefault).
//
// Known limit: Close from a task of another pool that one of this pool's
// workers waits for (a task of p calls Invoke on q, and q's task calls
// p.Close) waits for that worker, which waits for it: a deadlock. Close
// such a pool from outside, or use Shutdown with a deadline, which gives
// up (TestShutdownAcrossPoolsWaits).
func (p *Pool) Close() {
	if p = orDefault(p, "Pool.Close"); p.isShared {
		return
	}
	p.beginClose()
	if cannotWaitFor(p) {
		return
	}
	<-p.stopped
	p.waitWatchdog()
}

// waitWatchdog waits for the slow-task watchdog, if any, which exits once
// the workers have.
func (p *Pool) waitWatchdog() {
	if p.slow != nil {
		<-p.slow.done
	}
}

// Shutdown is Close with a deadline: it stops accepting submissions and
// waits for the accepted work to finish and the workers to exit, but gives
// up when ctx is done. It then returns an error wrapping ctx.Err() that says
// how many accepted tasks had not finished; they keep running, and the
// workers still exit once they have (TestShutdownDeadline). ctx also bounds the wait for a
// slow-task handler still running once the work has finished
// (WithSlowTaskHandler; TestShutdownDeadlineBoundsWatchdogWait). ctx bounds the wait and cancels no
// task, as with http.Server.Shutdown: to stop tasks, cancel the contexts
// they were submitted with (SubmitContext), then Close to wait for them
// (TestShutdownContextBoundsOnlyTheDrain). Where Close would return at
// once without waiting (called from one of the pool's tasks, its panic
// handler, or another goroutine a worker of the pool waits for: see
// Close), Shutdown returns at once too, with an error wrapping
// ErrInsidePool that counts the unfinished tasks: nil always means that
// the work has finished and the workers have exited
// (TestShutdownFromInsideSaysItDidNotWait). Shutdown on the Default pool
// does nothing and returns nil (TestNilPoolMethodsMeanDefault).
func (p *Pool) Shutdown(ctx context.Context) error {
	if p = orDefault(p, "Pool.Shutdown"); p.isShared {
		return nil
	}
	p.beginClose()
	if cannotWaitFor(p) {
		return fmt.Errorf("%w: %d submitted tasks unfinished", ErrInsidePool, p.inflight())
	}
	select {
	case <-p.stopped:
	case <-ctx.Done():
		return fmt.Errorf("forkjoin: shutdown gave up with %d submitted tasks unfinished: %w",
			p.inflight(), ctx.Err())
	}
	if p.slow == nil {
		return nil
	}
	// The workers have exited; the watchdog exits once a slow-task handler
	// still running returns, which ctx bounds too: a handler blocked on a
	// report held Shutdown past its deadline
	// (TestShutdownDeadlineBoundsWatchdogWait, review rev17).
	select {
	case <-p.slow.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("forkjoin: shutdown gave up waiting for the slow-task handler (the work has finished): %w", ctx.Err())
	}
}

func (p *Pool) beginClose() {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		close(p.closedCh)
		p.sleepers.WakeAll()
	})
}

// Updates and reads of Pool.counts.
const liveOne = 1 << 32

// addIdle moves a worker into (d = 1) or out of (d = -1) the idle phase.
func (p *Pool) addIdle(d int64) {
	p.counts.Add(d)
	runningWorkers.Add(-d)
}

// addLive counts d worker goroutines that start, running.
func (p *Pool) addLive(d int64) {
	p.counts.Add(d * liveOne)
	runningWorkers.Add(d)
}

func (p *Pool) idleWorkers() int           { return int(int32(p.counts.Load())) }
func splitCounts(c int64) (live, idle int) { return int(c >> 32), int(int32(c)) }

// workerExited is called by each worker goroutine as it exits, idle: it
// stops counting as idle and as live in one step. A compensating worker's
// slot goes to the oldest Block queued for one, in a fresh goroutine
// (which this one's live count passes to, so that the pool never looks
// stopped), or back on the spare list (see startSpare).
func (p *Pool) workerExited(w *Worker) {
	if w.spare {
		p.spareMu.Lock()
		if q := p.nextSpareWait(w); q != nil {
			q.s = w
			w.spareState.Store(spareRunning)
			p.spareMu.Unlock()
			// Still live: only out of the idle phase, in one step (two,
			// live up then down, showed Stats one worker more than
			// MaxWorkers: TestBlockChainsWithinBoundStress).
			p.addIdle(-1)
			go w.loop() // after this goroutine's exit hook: the hooks alternate
			return
		}
		// Counted out before the slot is free: a Block may start its next
		// goroutine as soon as it is, and Stats showed one worker more
		// than MaxWorkers meanwhile (TestBlockChainsWithinBoundStress).
		w.spareState.Store(spareFree)
		live, _ := splitCounts(p.counts.Add(-liveOne - 1))
		p.spares = append(p.spares, w)
		p.spareMu.Unlock()
		if live == 0 {
			close(p.stopped)
		} else {
			// The regular workers may be asleep on a drained pool,
			// waiting for the last running worker (this one) to be idle
			// or gone: see quiesced.
			p.quiesced()
		}
		return
	}
	if p.counts.Add(-liveOne-1)>>32 == 0 {
		close(p.stopped)
	}
}

// inflight returns the number of accepted submissions not yet completed.
// finished is read first: both counters only grow and finished never
// exceeds accepted (a task is counted accepted before it can finish or be
// rejected), so the difference is never negative, and 0 means that every
// submission accepted by the time finished was read had finished then.
//
// The Execute tasks each worker has finished are counted on the worker
// (Worker.execDone, a line only it writes), not in finished, which the
// workers would otherwise pass between them at every task; inflight adds
// them up, which costs a load per worker, and is called only by Shutdown
// and on a closed pool. Each count only grows, and all are read before
// accepted, so the argument holds for their sum.
func (p *Pool) inflight() int64 {
	f := p.finished.Load()
	for _, w := range p.workers {
		f += w.execDone.Load()
	}
	return p.accepted.Load() - f
}

// drained reports whether a closed pool has finished all accepted work.
// Its workers may not exit for that alone: see quiesced.
func (p *Pool) drained() bool {
	return p.closed.Load() && p.inflight() == 0
}

// quiesced reports whether a regular worker, idle, may leave its loop: the
// pool is drained and no worker runs a task or holds one, and then wakes
// the sleeping workers, which leave too. Drained is not enough: a fork
// never joined outlives its root, so a drained pool may still run tasks,
// which may fork and Block; a regular worker that left as soon as the pool
// was drained was not there to run what such a Block waited for
// (TestRev27DrainedPoolKeepsWorkerForBlock, review rev27).
//
// Why idle at one load of counts means that nothing is left: no worker
// runs a task, so none makes work any more (a closed pool refuses
// submissions and Broadcasts, and counts the accepted ones in inflight),
// and none holds a task it took while counted idle. A worker takes work
// while counted idle only in a search begun before it saw the pool closed
// (Worker.loop: once it has, it counts as running while it searches), and
// it leaves the idle phase as soon as that search returns a task; it sets
// sawClosed after such a search, and every worker with a goroutine has
// set it before this loads counts (loaded after the flags: a search that
// took a task while counted idle ended with the worker counted running
// before its flag was set). The last worker to become idle, or a
// compensating worker exiting (workerExited), finds it so and wakes the
// others: a sleeper registers before it loads the flags and counts, and
// the waker stores its flag and adds to counts before it loads the
// sleepers (Dekker, all sequentially consistent atomics). Close's WakeAll
// makes every sleeper look, and set its flag, once.
func (p *Pool) quiesced() bool {
	if !p.drained() {
		return false
	}
	for _, v := range p.workers {
		if v.spare && v.spareState.Load() == spareFree {
			continue // no goroutine; one started later counts as running
		}
		if !v.sawClosed.Load() {
			return false
		}
	}
	if live, idle := splitCounts(p.counts.Load()); live != idle {
		return false
	}
	p.sleepers.WakeAll()
	return true
}

// execDone is rootDone for an Execute task finished on w, counted on w.
func (p *Pool) execDone(w *Worker) {
	w.execDone.Add(1) // only w writes it; an atomic so that inflight reads it at any time
	if p.closed.Load() && p.inflight() == 0 {
		p.sleepers.WakeAll()
	}
}

// rootDone is called when a submitted task completes, or when a counted
// submission is rejected. The worker that makes the count reach 0 on a
// closed pool wakes every sleeper: if two finish the last two tasks at
// once, the later of their adds sees both (sequential consistency).
func (p *Pool) rootDone() {
	p.finished.Add(1)
	if p.closed.Load() && p.inflight() == 0 {
		p.sleepers.WakeAll()
	}
}

// pollSubmission takes the next submitted task for w's scheduling loop
// (see injector.take), or returns nil if none is ready. If more remain and
// a worker sleeps, it wakes one (only an idle worker runs them), so that a
// backlog ramps up every worker.
func (p *Pool) pollSubmission(w *Worker) *node {
	x, more := p.inj.take(w)
	if more && p.sleepers.Any() {
		p.sleepers.WakeIdle()
	}
	return x
}

// claim decides who runs a submitted node: the first worker to claim it
// (a Submit's Future joined inside a task may run it while it is still
// queued). A solo node (Execute's) has no Future: the worker that took it
// is the only one that can run it. Claiming also makes room in a bounded
// queue (WithMaxQueued bounds the submissions that have not started).
func (p *Pool) claim(n *node) bool {
	if !n.solo && !n.claimed.CompareAndSwap(false, true) {
		return false
	}
	p.inj.releaseRoom()
	return true
}

// handOff puts x, a task of another computation taken by a waiting worker,
// on the handoff list, and wakes a worker that may run it: an idle one, or
// else every waiting one, since the one waiting in x's computation cannot
// be told apart (a rare path: it takes two computations on one pool).
func (p *Pool) handOff(x *node) {
	p.handoff.put(x)
	if p.sleepers.Any() && !p.sleepers.WakeIdle() {
		p.sleepers.WakeAll()
	}
}

// wakeIfWork wakes a sleeper if any work is visible. Slow path only.
func (p *Pool) wakeIfWork() {
	if !p.sleepers.Any() {
		return
	}
	work := !p.inj.empty() || p.handoff.len() > 0
	for _, v := range p.workers {
		// A worker's ring too (takebatch.go): a spare that leaves with
		// the wake-up a batch's taker gave it must pass it on
		// (TestRev31WakeIfWorkSeesRings).
		work = work || v.deque.Len() > 0 || v.subs.Len() > 0
	}
	if work {
		p.sleepers.WakeOne()
	}
}

// submit queues a root task from outside the pool at Normal priority. With
// WithMaxQueued, a full queue fails at once with ErrQueueFull unless wait
// is set; then it waits for room until ctx (nil: forever) is done or the
// pool closes.
//
// Close needs no lock against submit: submit counts the task in accepted
// before it checks closed, and Close sets closed before workers check
// inflight, so (sequential consistency) either submit sees the pool closed
// and backs out, or the workers see the task counted and wait for it.
func (p *Pool) submit(ctx context.Context, n *node, wait bool) error {
	return p.submitAt(ctx, n, nil, Normal, wait)
}

// submitAt is submit at priority prio, of the node n or, if n is nil, of
// Execute's action act (its function as a funcAction, or a typed action:
// exectask.go).
func (p *Pool) submitAt(ctx context.Context, n *node, act spawnAction, prio Priority, wait bool) error {
	l := prio.level()
	if p.inj.room != nil {
		if err := p.acquireRoom(ctx, wait); err != nil {
			return err
		}
	}
	p.accepted.Add(1)
	if p.closed.Load() {
		p.rootDone()
		p.inj.releaseRoom()
		return ErrClosed
	}
	if n != nil {
		n.root = true
	}
	backlog := p.inj.push(l, act, n)
	if p.sleepers.Any() {
		p.sleepers.WakeIdle() // a worker waiting in a join would not run it
	}
	if backlog {
		runtime.Gosched()
	}
	return nil
}
