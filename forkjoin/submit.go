package forkjoin

import "context"

// Runner is where a computation runs: a *Pool (from outside, the call
// submits and waits) or a *Worker (from inside a task, the call runs inline
// in the same computation). Only *Pool and *Worker implement it. The
// helpers of package magpie take a Runner, and a nil Runner means Default().
type Runner interface{ isRunner() }

// Run runs fn on r and returns its result: inline on a *Worker, through
// Invoke on a *Pool, and on Default() if r is nil (a nil *Pool too). It is
// the bridge that lets one function serve callers inside and outside a pool
// (TestRun). A panic in fn is re-raised as a *PanicError either way
// (TestPanicContractInlineAndSubmitted). A nil *Worker in
// r panics with "forkjoin: Run called with a nil *Worker", the wording
// every function taking a *Worker uses (TestNilWorkerOneMessage;
// TestNilPoolMeansDefault for the nil pool).
func Run[T any](r Runner, fn func(*Worker) T) T {
	switch r := r.(type) {
	case *Worker:
		if r == nil {
			panicNilWorker("Run")
		}
		if fn == nil {
			// Invoke checks its own; called here, nil would raise a
			// runtime error in callInline's frame, a bug in magpie's.
			panic("forkjoin: Run called with a nil function")
		}
		return callInline(r, fn)
	case *Pool:
		if r == nil {
			r = Default()
		}
		return Invoke(r, fn)
	default:
		return Invoke(Default(), fn)
	}
}

// Execute schedules fn to run on the pool and returns without waiting. It
// returns ErrClosed once Close has been called, and ErrQueueFull when the
// pool's submission queue is bounded (WithMaxQueued) and full
// (TestAfterClose, TestMaxQueuedFailsFastWhenFull). Nobody joins fn, so a
// panic in it goes to the pool's panic handler (WithPanicHandler;
// TestPanicInExecute).
//
// Tasks submitted from outside (Execute, Submit, Invoke and their
// variants) are taken from the submission queue in the order their
// submissions were accepted, within each priority level, in both LIFO and
// FIFO mode: one at a time, or, under a backlog, in batches that idle
// workers share (WithTakeBatch, which states the order bound;
// TestSubmissionsStartInOrder, TestEntryPointsShareTheSubmissionOrder);
// Execute submits at Normal priority (see ExecutePriority).
// While more than 4,096 tasks of one priority wait, a submission yields
// the processor (runtime.Gosched) once in 64, so that with few Ps the
// workers keep up and the backlog stays small; it never blocks for it
// (TestSubmitterYieldsOnBacklog).
func (p *Pool) Execute(fn func(*Worker)) error {
	return p.ExecutePriority(Normal, fn)
}

// ExecutePriority is Execute at priority prio: a queued task is taken
// before every queued task of a lower priority (but for aging, see
// WithPriorityAging; TestPrioritiesOrderQueuedTasks).
func (p *Pool) ExecutePriority(prio Priority, fn func(*Worker)) error {
	if fn == nil {
		panic("forkjoin: Execute called with a nil function")
	}
	p = orDefault(p, "Pool.Execute")
	return p.submitAt(nil, nil, funcAction(fn), prio, false)
}

// ExecuteContext is Execute that, when the submission queue is bounded
// (WithMaxQueued) and full, waits for room until ctx is done, returning
// ctx.Err() then; fn is not accepted and never runs. It returns ErrClosed
// if the pool closes meanwhile. ctx bounds that wait and nothing else: an
// accepted fn runs to its end whatever becomes of ctx (its w.Context() is
// context.Background()), and with room fn is accepted even if ctx is
// already done, as semaphore.Weighted.Acquire may succeed then. To make fn
// cancelable, use SubmitContext. TestExecuteContextBoundsOnlyTheWaitForRoom
// proves each case.
func (p *Pool) ExecuteContext(ctx context.Context, fn func(*Worker)) error {
	return p.ExecuteContextPriority(ctx, Normal, fn)
}

// ExecuteContextPriority is ExecuteContext at priority prio.
func (p *Pool) ExecuteContextPriority(ctx context.Context, prio Priority, fn func(*Worker)) error {
	if fn == nil {
		panic("forkjoin: ExecuteContext called with a nil function")
	}
	p = orDefault(p, "Pool.ExecuteContext")
	return p.submitAt(ctx, nil, funcAction(fn), prio, true)
}

// execNode runs an Execute's action (its function, or a typed action:
// exectask.go), which the submission queue holds without a node (see
// injector.go). The worker that takes the action from the queue puts it
// in an exec node from its own free list (Worker.execFree) and runs it at
// once, or, for a task of a batch, keeps the node in its ring
// (takebatch.go), whence it or another worker takes it. The worker that
// runs the node puts it back on its own free list when the task
// completes: a list is touched by its worker's goroutine alone, so it
// needs no synchronization. A node has one holder at a time (no handle
// is returned, it is never on a deque): the taker, then, through a
// ring's atomic slots (and the take lock a steal holds), the worker that
// runs it (TestBatchExecNodesRunAcrossWorkers). A list holds as many
// nodes as Execute tasks have been nested on its worker at once (see
// waitForeign), and those of stolen batches, up to maxExecFree.
type execNode struct {
	node
	act      spawnAction // Execute's function (a funcAction), or a typed action (exectask.go); written by the taker, read and cleared by the runner
	pool     *Pool       // set when the node is made; read-only after
	nextFree *execNode   // link on the free list of the worker holding the node
}

// execNode returns one of w's exec nodes, set to run act as computation
// group.
func (w *Worker) execNode(act spawnAction, group uint64) *node {
	e := w.execFree
	if e != nil {
		w.execFree = e.nextFree
		w.execFreeLen--
	} else {
		e = &execNode{pool: w.pool}
		e.job = e
		e.root, e.solo = true, true
	}
	e.act, e.group = act, group
	return &e.node
}

func (e *execNode) execute(w *Worker) {
	finished := false
	defer func() {
		if !finished {
			v := recover()
			if _, own := e.act.(goexitRecorder); !own || v != nil {
				e.pool.reportPanic(CapturePanic(v))
			}
			e.complete(w)
		}
	}()
	e.act.Compute(w)
	finished = true
	e.complete(w)
}

// goexitRecorder is an Execute action that records its own
// runtime.Goexit where its submitter receives it (a Then stage completes
// its Future with ErrGoexit): the panic handler, which takes only what
// nobody receives, does not hear of it again (TestThenGoexitReportedOnce).
type goexitRecorder interface{ recordsGoexit() }

// complete tells the pool that e has completed (nobody waits for an
// Execute task's latch) and puts e back on the free list of w, the worker
// that runs it (not always the one that took it: see execNode).
func (e *execNode) complete(w *Worker) {
	e.act = nil
	if w.execFreeLen < maxExecFree {
		e.nextFree = w.execFree
		w.execFree = e
		w.execFreeLen++
	} // else left to the GC: see maxExecFree
	e.pool.execDone(w)
}

// reportPanic hands a panic nobody re-raises (an Execute's, a hook's, one
// AllOf or AnyOf drops) to the panic handler, and returns once the handler
// has. A panic in the handler itself is dropped so that it cannot kill the
// worker. The handler runs on a goroutine of its own, so that a
// runtime.Goexit in it (t.FailNow in a test's handler) ends that goroutine
// alone: on the caller's it unwound the bookkeeping around the report (an
// Execute's completion, the firing of a completed Future's callbacks),
// which left the pool counting the task in flight, so that Close hung, and
// left Futures chained on the source incomplete
// (TestPanicHandlerGoexitLosesNothing).
//
// The handler's goroutine is registered (awaitedByGoroutine) while the
// handler runs with p and the pool of the reporting worker, so that Close
// and Shutdown of either called from it return at once, as from one of the
// pool's tasks: the reporter is often one of p's workers, which waits for
// the handler, and a Close that waited for the workers to exit waited for
// that one (TestPanicHandlerCanClose); the reporter of a panic AllOf or
// AnyOf drops may be a worker of another pool, whose Close from p's
// handler hung the same way (TestOtherPoolsHandlerCanCloseReporterPool).
func (p *Pool) reportPanic(pe *PanicError) {
	p.panics.Add(1)
	runHandler(waitersOf(p), func() { p.onPanic(pe) })
}

// Submit schedules fn on the pool from any goroutine and returns its
// Future; wait for it with Get (or Join inside a task). On a closed pool
// the Future is already done and Get returns ErrClosed (TestAfterClose). A nil p means
// Default(), here and in every function that takes a *Pool
// (TestNilPoolMeansDefault).
// Submit is at Normal priority, like Execute, and queued in the same order
// (TestEntryPointsShareTheSubmissionOrder).
func Submit[T any](p *Pool, fn func(*Worker) T) *Future[T] {
	return SubmitPriority(p, Normal, fn)
}

// SubmitPriority is Submit at priority prio (see ExecutePriority).
func SubmitPriority[T any](p *Pool, prio Priority, fn func(*Worker) T) *Future[T] {
	if fn == nil {
		panic("forkjoin: Submit called with a nil function")
	}
	return submitTask[T](p, prio, funcTask[T](fn))
}

// submitTask submits the typed task c at priority prio: the body of Submit,
// Invoke from outside and SubmitTaskPriority (typed.go). c is not nil.
func submitTask[T any, C computer[T]](p *Pool, prio Priority, c C) *Future[T] {
	p = orDefault(p, "Submit")
	s := newSubmission[T](p, c)
	if err := p.submitAt(nil, &s.node, nil, prio, true); err != nil {
		s.fail(err)
	}
	return &s.future
}

// submission is a submitted task's cell, its task and its Future, in one
// allocation (at most 192 bytes for an int result and a one-word task, a
// size class of its own, since it stopped embedding a taskCell, whose free
// list links a submission never uses; 208 before: TestSubmissionSize). The cell is
// never recycled: the Future may be read by any goroutine at any time, and
// releasing it would take an API to release a Future, which magpie does
// not have. Only the worker that claims the node runs it (execute), or the
// submitter fails it before publishing it (fail).
type submission[T any, C computer[T]] struct {
	cell[T]
	task   C
	future Future[T]
}

func newSubmission[T any, C computer[T]](p *Pool, c C) *submission[T, C] {
	s := &submission[T, C]{task: c}
	s.pool = p
	s.job = s
	s.future.c = &s.cell
	return s
}

// execute runs the submitted task on w, which claimed it (from the queue,
// or joining its Future), and completes the cell with its result or panic,
// as taskCell.execute does for a fork, then counts it in w.completed (on
// both ways out, so that a task that called runtime.Goexit counts too:
// TestStatsCompletedCountsGoexit).
func (s *submission[T, C]) execute(w *Worker) {
	finished := false
	defer func() {
		if !finished {
			s.err = CapturePanic(recover())
			s.dropTask()
			// Deferred, so that it runs even if a task that the settle
			// below runs calls runtime.Goexit, which unwinds this call
			// too (TestCanceledSettleSurvivesGoexit).
			defer func() {
				s.complete()
				w.completed.Add(1) // only w writes it; an atomic so that Stats reads it at any time
			}()
			if s.scope != nil {
				s.scope.settleOn(w, s.group)
			}
		}
	}()
	if c := s.scope; c != nil && !c.canceled.Load() && c.ctx.Err() != nil {
		// Canceled before its start, in the queue or in a worker's ring
		// (takebatch.go), while the AfterFunc that sets canceled may
		// not have run yet (it runs on a goroutine of its own): the
		// task is skipped all the same, as InvokeContext promises of a
		// task not started once ctx is done
		// (TestRev35CanceledRootInRingIsSkipped, review rev35; it ran,
		// with w.Err() nil). Its forks see canceled from here on.
		c.canceled.Store(true)
	}
	w.checkCanceled()
	s.result = s.task.Compute(w)
	if s.scope != nil {
		// Before finished: a runtime.Goexit of a task the settle runs is
		// then the deferred call's to complete (TestCanceledSettleSurvivesGoexit).
		s.scope.settle(w)
	}
	finished = true
	s.dropTask()
	s.complete()
	w.completed.Add(1)
}

// dropTask lets the GC have what the task references, once it has run.
func (s *submission[T, C]) dropTask() {
	var zero C
	s.task = zero
}

// fail completes s, never run, with err.
func (s *submission[T, C]) fail(err error) {
	s.pool = nil
	s.err = err
	s.dropTask()
	s.latch.set()
}

// Invoke runs fn on the pool and waits for its result. A panic in fn (or in
// any task it joins) is re-raised here as a *PanicError; on a closed pool
// Invoke panics with ErrClosed (TestAfterClose). Invoke is safe from any
// number of goroutines at once (TestConcurrentInvokes). Called from inside
// one of the pool's own tasks it runs fn inline on that task's worker (it
// cannot deadlock, even with one worker: TestInvokeFromOwnTask); inside a
// task, prefer passing the *Worker to Run. Called from a
// task of another pool, it waits as rayon's install does: the calling
// worker keeps running its own pool's tasks meanwhile (any of them, as an
// idle worker would), so that pools that invoke each other, in chains or
// rings, cannot deadlock (TestInvokeAcrossPools). A nil p means Default(), from a task of
// Default() too (fn then runs inline; TestNilPoolMeansDefault).
func Invoke[T any](p *Pool, fn func(*Worker) T) T {
	return InvokePriority(p, Normal, fn)
}

// InvokePriority is Invoke that, called from outside p, submits fn at
// priority prio. Called from one of p's own tasks it runs fn inline, as
// Invoke does, whatever prio (TestInvokePriority).
func InvokePriority[T any](p *Pool, prio Priority, fn func(*Worker) T) T {
	if fn == nil {
		panic("forkjoin: Invoke called with a nil function")
	}
	p = orDefault(p, "Invoke")
	w := callingWorker()
	if w != nil && w.pool == p {
		return callInline(w, fn)
	}
	c := submitTask[T](p, prio, funcTask[T](fn)).c
	if w != nil {
		w.waitForeign(&c.latch) // a task of another pool: keep that pool going
	} else {
		c.latch.await(nil)
	}
	if c.err != nil {
		panic(c.err)
	}
	return c.result
}
