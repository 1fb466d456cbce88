package forkjoin

import "context"

// Runner is where a computation runs: a *Pool (from outside, the call
// submits and waits) or a *Worker (from inside a task, the call runs inline
// in the same computation). Only *Pool and *Worker implement it. The
// helpers of package magpie take a Runner, and a nil Runner means Default().
type Runner interface{ isRunner() }

// Run runs fn on r and returns its result: inline on a *Worker, through
// Invoke on a *Pool, and on Default() if r is nil (a nil *Pool too). It is
// the bridge that lets one function serve callers inside and outside a pool.
// A panic in fn is re-raised as a *PanicError either way.
func Run[T any](r Runner, fn func(*Worker) T) T {
	switch r := r.(type) {
	case *Worker:
		if r == nil {
			panic("forkjoin: Run called with a nil *Worker")
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
// pool's submission queue is bounded (WithMaxQueued) and full. Nobody joins fn, so a panic
// in it goes to the pool's panic handler (WithPanicHandler).
func (p *Pool) Execute(fn func(*Worker)) error {
	if fn == nil {
		panic("forkjoin: Execute called with a nil function")
	}
	return p.submit(nil, &(&execNode{fn: fn, pool: p}).init().node, false)
}

// ExecuteContext is Execute that, when the submission queue is bounded
// (WithMaxQueued) and full, waits for room until ctx is done, returning
// ctx.Err() then. It returns ErrClosed if the pool closes meanwhile.
func (p *Pool) ExecuteContext(ctx context.Context, fn func(*Worker)) error {
	if fn == nil {
		panic("forkjoin: ExecuteContext called with a nil function")
	}
	return p.submit(ctx, &(&execNode{fn: fn, pool: p}).init().node, true)
}

// execNode is a fire-and-forget task from Execute.
type execNode struct {
	node
	fn   func(*Worker)
	pool *Pool
}

func (e *execNode) init() *execNode { e.job = e; return e }

func (e *execNode) execute(w *Worker) {
	finished := false
	defer func() {
		if !finished {
			e.pool.reportPanic(capturePanic(recover()))
			e.complete()
		}
	}()
	e.fn(w)
	finished = true
	e.complete()
}

func (e *execNode) complete() {
	e.fn = nil
	e.pool.rootDone() // nobody waits for an Execute task's latch
}

// reportPanic hands an Execute panic to the panic handler; a panic in the
// handler itself is dropped so that it cannot kill the worker.
func (p *Pool) reportPanic(pe *PanicError) {
	p.panics.Add(1)
	defer func() { _ = recover() }()
	p.onPanic(pe)
}

// Submit schedules fn on the pool from any goroutine and returns its
// Future; wait for it with Get (or Join inside a task). On a closed pool
// the Future is already done and Get returns ErrClosed.
func Submit[T any](p *Pool, fn func(*Worker) T) *Future[T] {
	if fn == nil {
		panic("forkjoin: Submit called with a nil function")
	}
	return SubmitTask[T](p, funcTask[T](fn))
}

// SubmitTask is Submit for a typed task.
func SubmitTask[T any, C Computer[T]](p *Pool, c C) *Future[T] {
	s := newSubmission[T](p, c)
	if err := p.submit(nil, &s.node, true); err != nil {
		s.fail(err)
	}
	return &s.future
}

// submission is a submitted task's cell together with its Future, in one
// allocation. The cell is never recycled.
type submission[T any, C Computer[T]] struct {
	taskCell[T, C]
	future Future[T]
}

func newSubmission[T any, C Computer[T]](p *Pool, c C) *submission[T, C] {
	s := &submission[T, C]{}
	s.task = c
	s.pool = p
	s.job = &s.taskCell
	s.typed = &s.taskCell
	s.future.c = &s.cell
	return s
}

// Invoke runs fn on the pool and waits for its result. A panic in fn (or in
// any task it joins) is re-raised here as a *PanicError; on a closed pool
// Invoke panics with ErrClosed. Invoke is safe from any number of
// goroutines at once. Called from inside one of the pool's own tasks it
// runs fn inline on that task's worker (it cannot deadlock, even with one
// worker); inside a task, prefer passing the *Worker to Run. Called from a
// task of another pool, it waits as rayon's install does: the calling
// worker keeps running its own pool's tasks meanwhile (any of them, as an
// idle worker would), so that pools that invoke each other, in chains or
// rings, cannot deadlock.
func Invoke[T any](p *Pool, fn func(*Worker) T) T {
	if fn == nil {
		panic("forkjoin: Invoke called with a nil function")
	}
	w := callingWorker()
	if w != nil && w.pool == p {
		return callInline(w, fn)
	}
	c := SubmitTask[T](p, funcTask[T](fn)).c
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
