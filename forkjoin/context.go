package forkjoin

import (
	"context"
	"errors"
	"sync/atomic"
)

// computation is the cancellation scope of a task tree started by
// InvokeContext or SubmitContext. Every node forked inside it carries it,
// and a worker running one of its nodes has it in w.comp, so that w.Err is
// two loads and a fork can refuse to start work nobody wants any more.
type computation struct {
	// ctx, stop and parent are written before any other goroutine can
	// reach the computation (newComputation, submitContext, invokeInline:
	// the AfterFunc's goroutine touches only canceled) and read-only after.
	ctx      context.Context
	canceled atomic.Bool // set once ctx is done
	stop     func() bool // unregisters the context.AfterFunc
	// running counts the tasks of the computation, its root excepted, that
	// workers run through Worker.run (stolen, or taken by an idle worker):
	// the tasks that can still run once the root has unwound. drained is
	// the latch of a root waiting for running to drop to 0 (settle).
	running atomic.Int64
	drained atomic.Pointer[latch]
	// ended is set once the root has run and either its Future has
	// completed or the root settles canceled: a task of the computation
	// joining its own root (a SubmitContext's Future) waits for it, and
	// unwinds if the root settles, which waits for that task
	// (TestRev22ForkJoiningItsRootAfterCancel).
	ended latch
	// parent is the computation of the task that started this one with an
	// InvokeContext, inline on its worker (invokeInline) or on another
	// pool, nil otherwise: that task of parent waits for this computation's
	// root and cannot return before it. A task here that waits for a SubmitContext
	// root's Future of parent (or of a computation further down the
	// chain) is in that root's own computation for the wait (isWithin;
	// TestRev26GetOfRootFromNestedComputationAfterCancel).
	parent *computation
}

// isWithin reports whether c is root or a computation nested in it
// through InvokeContext inline calls (parent links). A nil c is within
// nothing.
func (c *computation) isWithin(root *computation) bool {
	for ; c != nil; c = c.parent {
		if c == root {
			return true
		}
	}
	return false
}

// unwindEnded unwinds a task of root's computation, or of one nested in
// it, whose wait for root's Future ended on root's ended latch with the
// Future not complete: root is settling canceled, waiting for this task
// (see joinOther). It panics with root's ctx.Err(), as a fork in root's
// computation would; from a nested computation its InvokeContext returns
// that panic to the task of root's computation below it, which unwinds at
// its next fork.
func (root *computation) unwindEnded() {
	panic(root.ctx.Err())
}

// leave ends a task counted in running, and wakes a settle waiting for the
// last one. The decrement and the Swap are sequentially consistent, as are
// settle's Store and load: either settle sees running at 0, or leave sees
// its latch.
func (c *computation) leave() {
	if c.running.Add(-1) == 0 {
		if l := c.drained.Swap(nil); l != nil {
			l.set()
		}
	}
}

// settle is called on the root's worker w once the root task has returned
// or unwound, before its outcome is published. If ctx is done, the root may
// have unwound at a fork (checkCanceled) past Joins it never reached, while
// tasks it forked before still run on other workers: settle waits, helping,
// until none does, so that none can write to the caller's memory after the
// call returns (TestRev21SubmitContextCanceledAtForkWaitsForEarlierFork).
// A task that starts after the cancellation is skipped at its start, so
// once running is 0 nothing of the computation does any more work.
func (c *computation) settle(w *Worker) {
	if c.ctx.Err() == nil {
		return
	}
	// The AfterFunc that sets canceled runs on a goroutine of its own,
	// maybe not yet: a task starting after settle saw running at 0 must
	// see canceled all the same, or it runs after the call has returned
	// (TestRev22ForkStartedAfterCanceledRootIsSkipped). The Store and the
	// loads of running below pair with runCounted's Add and the task's
	// checkCanceled: either settle sees the task counted, or the task sees
	// canceled.
	c.canceled.Store(true)
	c.ended.set() // after canceled: a task joining the root wakes and unwinds
	for c.running.Load() != 0 {
		l := &latch{}
		c.drained.Store(l)
		if c.running.Load() == 0 {
			break
		}
		w.waitUntil(l, nil)
	}
}

// settleOn is settle for a root that is unwinding (a panic, or
// runtime.Goexit) on w, in the root's computation c and group, through
// untilSettled: so what must follow the wait (completing the root's
// Future) is in a deferred call (TestCanceledSettleSurvivesGoexit).
func (c *computation) settleOn(w *Worker, group uint64) {
	w.untilSettled(c, group, func() { c.settle(w) })
}

func newComputation(ctx context.Context) *computation {
	c := &computation{ctx: ctx}
	c.stop = context.AfterFunc(ctx, func() { c.canceled.Store(true) })
	return c
}

// Err returns the error of the context of the computation w is running, once
// it is done (canceled or past its deadline), and nil otherwise, including
// for computations started without a context. It costs two loads: call it
// in inner loops of long tasks to stop early.
func (w *Worker) Err() error {
	if w == nil {
		panicNilWorker("Worker.Err")
	}
	if c := w.comp; c != nil && c.canceled.Load() {
		return c.ctx.Err()
	}
	return nil
}

// Context returns the context of the computation w is running, or
// context.Background() for computations started without one.
func (w *Worker) Context() context.Context {
	if w == nil {
		panicNilWorker("Worker.Context")
	}
	if c := w.comp; c != nil {
		return c.ctx
	}
	return context.Background()
}

// checkCanceled unwinds the calling task if its computation was canceled:
// forks and the start of every task call it, so that a canceled computation
// stops forking, skips the tasks it had queued, and unwinds through its
// joins to the caller of InvokeContext (which has returned already). It
// reads canceled alone, which the context's AfterFunc sets on a goroutine
// of its own, maybe late; the start of a submitted root reads ctx.Err()
// too (submission.execute), so that a root canceled while it waited in
// the queue or a ring is skipped however late the AfterFunc runs
// (TestRev35CanceledRootInRingIsSkipped).
//
// The nil test is all that computations without a context pay, and it is
// small enough to be inlined at every fork.
func (w *Worker) checkCanceled() {
	if w.comp != nil {
		w.unwindIfCanceled()
	}
}

//go:noinline
func (w *Worker) unwindIfCanceled() { // kept out of line so checkCanceled inlines
	if c := w.comp; c.canceled.Load() {
		panic(c.ctx.Err())
	}
}

// InvokeContext runs fn on the pool like Invoke, within a computation that
// ctx cancels. Once ctx is done, tasks of the computation that have not
// started are skipped, a fork inside it panics to unwind the task that
// forks (the panic is recovered by the runtime, never seen by the caller),
// and running tasks can observe the cancellation with w.Err() or
// w.Context().Done().
//
// InvokeContext returns only once fn has returned or unwound, and with it
// every task fn joined: no task it waited for can still write to the
// caller's memory, canceled or not. (A task forked and never joined is not
// waited for, as with Invoke, unless ctx is done before fn completes: a
// fork that unwinds the task skips the Joins after it, so InvokeContext
// then also waits for every task of the computation already running on
// another worker, joined or not:
// TestRev21SubmitContextCanceledAtForkWaitsForEarlierFork.) Such a fork still belongs to this
// computation if its Future outlives fn and is joined by a task outside
// it: the task sees ctx in w.Context(), and once ctx is done it is skipped
// if it has not started, and the Join re-panics with a *PanicError
// wrapping ctx.Err(), as Java's join of a cancelled task throws, whichever
// worker runs it (TestForkBelongsToItsComputation). If ctx is done before
// fn completes, it returns ctx.Err(), joined (errors.Join) with the
// *PanicError if a task panicked as well; otherwise fn's result, or the
// *PanicError of a panic in fn or a task it joins (returned, not
// re-panicked). A cooperative
// computation unwinds at its next fork, its next task start or its next
// check of w.Err(); a task that ignores the context holds the return up
// until it finishes, however long that takes (Go cannot preempt it). With
// a bounded submission queue (WithMaxQueued), ctx also bounds the wait for
// room: fn then never runs. A ctx already done returns ctx.Err() at once.
// Called from inside one of p's tasks, fn runs inline on that worker; from
// a task of another pool, that worker keeps its own pool going while it
// waits, as Invoke does. A nil p means Default(). TestContextContract
// walks each of these callers with tasks that cooperate, ignore the
// context, or panic; TestExecuteContextBoundsOnlyTheWaitForRoom the wait
// for room.
func InvokeContext[T any](ctx context.Context, p *Pool, fn func(*Worker) T) (T, error) {
	if fn == nil {
		panic("forkjoin: InvokeContext called with a nil function")
	}
	if ctx == nil {
		panic("forkjoin: InvokeContext called with a nil context")
	}
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	p = orDefault(p, "InvokeContext")
	w := callingWorker()
	if w != nil && w.pool == p {
		return invokeInline(ctx, w, fn)
	}
	var parent *computation
	if w != nil {
		parent = w.comp // w waits for the new computation's root, as inline
	}
	f := submitContext(ctx, p, fn, parent)
	c := f.c
	if w != nil {
		w.waitForeign(&c.latch)
	} else {
		c.latch.await(nil)
	}
	if c.err != nil {
		return zero, c.err
	}
	return c.result, nil
}

// invokeInline runs fn on w within a new computation, as a nested
// InvokeContext from inside a task.
func invokeInline[T any](ctx context.Context, w *Worker, fn func(*Worker) T) (result T, err error) {
	c := newComputation(ctx)
	defer c.stop()
	saved := w.comp
	c.parent = saved
	w.comp = c
	finished := false
	group := w.group
	defer func() { w.comp = saved }()
	defer func() {
		if !finished {
			r := recover()
			c.settleOn(w, group) // a Goexit too: c's tasks must not outlive it
			if r != nil {
				result, err = zero(result), c.outcome(CapturePanic(r))
			} // else runtime.Goexit: let it unwind
		}
	}()
	result = fn(w)
	c.settle(w) // before finished: see submission.execute
	finished = true
	if err = c.outcome(nil); err != nil {
		result = zero(result)
	}
	return result, err
}

func zero[T any](T) (z T) { return z }

// outcome maps how the computation's root task finished (err is nil, or
// its *PanicError) to what the caller sees. If the context is done by then,
// the computation was canceled before it completed: the caller gets
// ctx.Err(), alone if the task returned or unwound because of the
// cancellation, joined with the *PanicError if it panicked for another
// reason.
func (c *computation) outcome(err error) error {
	ctxErr := c.ctx.Err()
	if ctxErr == nil {
		return err
	}
	if err == nil || errors.Is(err, ctxErr) {
		return ctxErr
	}
	return errors.Join(ctxErr, err)
}

// SubmitContext is Submit within a cancellation scope: when ctx is done,
// the computation stops as described for InvokeContext, and the Future's
// outcome is what InvokeContext would return: ctx.Err() if ctx was done
// before the task completed (joined with the *PanicError if a task
// panicked as well), set only once the task and every task it joined have
// stopped. Get with a live context returns that outcome then; Join
// re-panics with it (the error itself, ctx.Err() or the join of both,
// rather than a *PanicError when no task panicked). Get's own context only
// bounds Get's wait (see Future.Get). If the submission queue is bounded
// and full, SubmitContext waits for room until ctx is done; the Future
// then reports ctx.Err() and fn never runs. A nil p means Default().
// TestContextContract and TestExecuteContextBoundsOnlyTheWaitForRoom
// prove it.
func SubmitContext[T any](ctx context.Context, p *Pool, fn func(*Worker) T) *Future[T] {
	if fn == nil {
		panic("forkjoin: SubmitContext called with a nil function")
	}
	if ctx == nil {
		panic("forkjoin: SubmitContext called with a nil context")
	}
	return submitContext(ctx, orDefault(p, "SubmitContext"), fn, nil)
}

// submitContext is SubmitContext on p (not nil) of a computation whose
// parent (see computation) is parent: InvokeContext from a task of another
// pool passes the waiting task's computation.
func submitContext[T any](ctx context.Context, p *Pool, fn func(*Worker) T, parent *computation) *Future[T] {
	s := newSubmission[T](p, funcTask[T](fn))
	c := newComputation(ctx)
	c.parent = parent
	s.comp = c
	s.scope = c
	if err := p.submit(ctx, &s.node, true); err != nil {
		c.stop()
		s.fail(err)
	}
	return &s.future
}
