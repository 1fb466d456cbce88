package forkjoin

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
)

// Continuations: Then and ThenContext chain a stage on a Future, AllOf and
// AnyOf combine Futures, from any pools.
//
// # Invariant
//
// Nothing here waits and nothing recurses. A continuation registers a
// callback on its source's latch (latch.onSet) and returns; the callback
// runs once, on the goroutine that completes the source, and only decides:
// it submits the stage to its pool as a new task (never blocking: a full
// bounded queue is an error, ErrQueueFull), or completes the stage's
// Future at once with the source's error. A Future completed by a callback
// queues its own callbacks on the same firing (latch.setIn), so a chain of
// any length propagates in a loop on one frame, and a stage's function
// always starts on a fresh task, never on the stack that completed its
// source.
//
// The Futures made here are promises: cells that no task runs, with no
// pool, so that a Join of one waits as for another pool's task and never
// claims it. Each is completed exactly once, by whoever wins its one
// decision (a stage's started flag, AnyOf's won flag, AllOf's count), and
// its outcome is written before its latch is set and read after.

// promise is a Future completed by this file's code rather than by a task.
type promise[T any] struct {
	cell   cell[T]
	future Future[T]
	// origin is the pool whose task produced a panic in the outcome: its
	// panic handler gets the panic if AllOf or AnyOf drops it. Written
	// before the latch is set, read after.
	origin *Pool
}

func (pr *promise[T]) init() {
	pr.future.c = &pr.cell
	pr.cell.typed = pr // so that originOf finds origin; join is never called (no owner)
}

// join satisfies typedCell. Only the owner of a forked cell calls it, and a
// promise has none.
func (pr *promise[T]) join(*Worker) (T, error) {
	panic("forkjoin: internal error: join of a promise")
}

func (pr *promise[T]) originPool() *Pool { return pr.origin }

// complete records the outcome and sets the latch; its callbacks go on q
// (nil: they run before complete returns).
func (pr *promise[T]) complete(r T, err error, origin *Pool, q *firing) {
	pr.cell.result, pr.cell.err, pr.origin = r, err, origin
	pr.cell.latch.setIn(q)
}

// originOf returns the pool whose task produced c's outcome, if known: a
// submission's pool, or a promise's origin. Call it once c is done.
func originOf[T any](c *cell[T]) *Pool {
	if c.pool != nil {
		return c.pool
	}
	if o, ok := c.typed.(interface{ originPool() *Pool }); ok {
		return o.originPool()
	}
	return nil
}

// panicOf returns the *PanicError in err's chain, or nil.
func panicOf(err error) *PanicError {
	var pe *PanicError
	errors.As(err, &pe)
	return pe
}

// reportDropped hands a panic that AllOf or AnyOf does not deliver to the
// panic handler of the pool it came from (the Default pool's if unknown).
// Other errors (ErrClosed, a context's) are dropped.
func reportDropped(err error, origin *Pool) {
	var pe *PanicError
	if !errors.As(err, &pe) {
		return
	}
	if origin == nil {
		origin = Default()
	}
	origin.reportPanic(pe)
}

// checkChainable panics unless f can take callbacks: a Fork's Future cannot,
// since its cell is recycled by the forking worker once joined.
func checkChainable[T any](f *Future[T], name string) {
	checkFuture(f, name)
	if f.c.owner != nil {
		panic("forkjoin: " + name + " called with a Future from Fork; chain on Futures from Submit, SubmitContext, Then, AllOf or AnyOf")
	}
}

// Then returns the Future of fn applied to f's result. Once f completes,
// fn runs as a new task on p (nil: the Default pool); until then no worker
// and no goroutine waits for f. If f completed with an error (a
// *PanicError, ErrClosed, a context's error), fn does not run and the
// returned Future completes with the same error value, so a panic reaches
// every Future down a chain as one *PanicError. A panic in fn is the
// returned Future's *PanicError. If p is closed by the time f completes,
// or its bounded queue (WithMaxQueued) is full then, the Future completes
// with ErrClosed or ErrQueueFull, and fn does not run.
//
// Then is Java's thenApplyAsync(fn, executor). A stage waiting for its
// source does not keep p open: Close does not wait for it.
func Then[T, U any](p *Pool, f *Future[T], fn func(w *Worker, v T) U) *Future[U] {
	return thenOn(nil, p, f, fn, "Then")
}

// ThenContext is Then within a cancellation scope: once ctx is done, a
// stage still waiting for f completes at once with ctx.Err() (without
// waiting for f, and fn never runs); a stage already queued on p completes
// with ctx.Err() when a worker takes it, without running fn; a running one
// is canceled as SubmitContext's task is, its Future reporting ctx.Err().
//
// A stage canceled before f completes does not stay registered on f: f
// keeps at most about twice as many records as it has live dependents,
// however many canceled chains were made on it while it was pending
// (TestCanceledStagesDoNotPileUpOnPendingSource).
//
// A stage that calls runtime.Goexit completes with ErrGoexit, its one
// report (TestThenGoexitReportedOnce). Known limit: an AnyOf that
// completed keeps its callback on each source still pending, since that
// callback reports the source's panic, which AnyOf drops, when it comes.
func ThenContext[T, U any](ctx context.Context, p *Pool, f *Future[T], fn func(w *Worker, v T) U) *Future[U] {
	if ctx == nil {
		panic("forkjoin: ThenContext called with a nil context")
	}
	return thenOn(ctx, p, f, fn, "ThenContext")
}

// stage is the state of one Then. ctx, pool and fn are set before the
// stage is registered anywhere (the AfterFunc, the source's callback) and
// are read-only after.
type stage[T, U any] struct {
	promise[U]
	ctx  context.Context // nil for Then
	pool *Pool
	fn   func(*Worker, T) U
	// started is won once, by the source's callback (which then starts or
	// fails the stage) or by ctx's cancellation (which fails it).
	started atomic.Bool
	// stop unregisters ctx's AfterFunc. Written before the source's
	// callback is registered (latch.onSet's lock orders it before the
	// callback reads it); the AfterFunc itself never reads it.
	stop func() bool
}

func thenOn[T, U any](ctx context.Context, p *Pool, f *Future[T], fn func(*Worker, T) U, name string) *Future[U] {
	checkChainable(f, name)
	if fn == nil {
		panic("forkjoin: " + name + " called with a nil function")
	}
	p = orDefault(p, name)
	s := &stage[T, U]{ctx: ctx, pool: p, fn: fn}
	s.init()
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			s.started.Store(true)
			var zeroU U
			s.complete(zeroU, err, nil, nil)
			return &s.future
		}
		s.stop = context.AfterFunc(ctx, s.cancel)
	}
	src := f.c
	start := func(q *firing) { s.start(src, q) }
	var moot *atomic.Bool // with a ctx: canceled before src completed (see latch.onSet)
	if ctx != nil {
		moot = &s.started // registered unfired, started means canceled
	}
	if !src.latch.onSet(start, moot) {
		fireNow(start)
	}
	return &s.future
}

// start runs once src is done, on the goroutine that completed it (or that
// called Then, if src was done already): it submits the stage or fails it.
func (s *stage[T, U]) start(src *cell[T], q *firing) {
	if !s.started.CompareAndSwap(false, true) {
		return // canceled first
	}
	var zeroU U
	if s.stop != nil {
		s.stop()
	}
	if err := src.err; err != nil {
		s.complete(zeroU, err, originOf(src), q)
		return
	}
	if s.ctx != nil {
		if err := s.ctx.Err(); err != nil {
			s.complete(zeroU, err, nil, q)
			return
		}
	}
	if err := s.pool.submitAt(nil, nil, &stageTask[T, U]{s, src.result}, Normal, false); err != nil {
		s.complete(zeroU, err, nil, q)
	}
}

// cancel is ctx's AfterFunc: it fails the stage if it has not started.
func (s *stage[T, U]) cancel() {
	if s.started.CompareAndSwap(false, true) {
		var zeroU U
		s.complete(zeroU, s.ctx.Err(), nil, nil)
	}
}

// stageTask is a stage's task on its pool, an Execute action, which
// records its own runtime.Goexit (goexitRecorder) in the stage's Future.
type stageTask[T, U any] struct {
	s *stage[T, U]
	v T
}

func (t *stageTask[T, U]) Compute(w *Worker) { t.s.run(w, t.v) }
func (t *stageTask[T, U]) recordsGoexit()    {}

// run is the stage's task on s.pool. It completes the Future however fn
// ends: returned, panicked, canceled, or runtime.Goexit (recorded as a
// *PanicError, as for any task).
func (s *stage[T, U]) run(w *Worker, v T) {
	var r U
	var err error
	finished := false
	defer func() {
		if !finished {
			var zeroU U
			s.complete(zeroU, CapturePanic(recover()), s.pool, nil)
		}
	}()
	fn := s.fn
	if s.ctx == nil {
		r = fn(w, v)
	} else if err = s.ctx.Err(); err == nil {
		r, err = invokeInline(s.ctx, w, func(w *Worker) U { return fn(w, v) })
	}
	finished = true
	s.complete(r, err, s.pool, nil)
}

// allOf is the state of one AllOf.
type allOf[T any] struct {
	promise[[]T]
	cells   []*cell[T]
	results []T     // results[i] written by the callback of cells[i] only
	errs    []error // likewise
	left    atomic.Int64
}

// AllOf returns a Future of the results of fs, in order, once every one
// has completed. If any completed with an error, the Future completes with
// the error of the first such in fs's order (the same value: a
// *PanicError passes unchanged), and any other panic among fs goes to the
// panic handler of the pool it came from. With no Futures it completes at
// once with an empty slice. No worker waits meanwhile.
func AllOf[T any](fs ...*Future[T]) *Future[[]T] {
	for _, f := range fs {
		checkChainable(f, "AllOf")
	}
	a := &allOf[T]{
		cells:   make([]*cell[T], len(fs)),
		results: make([]T, len(fs)),
		errs:    make([]error, len(fs)),
	}
	a.init()
	if len(fs) == 0 {
		a.complete([]T{}, nil, nil, nil)
		return &a.future
	}
	for i, f := range fs {
		a.cells[i] = f.c // before any callback is registered: the last one reads cells
	}
	a.left.Store(int64(len(fs)))
	for i, c := range a.cells {
		arrive := func(q *firing) { a.arrive(i, q) }
		if !c.latch.onSet(arrive, nil) {
			fireNow(arrive)
		}
	}
	return &a.future
}

// arrive records the outcome of cells[i]; the last arrival completes the
// Future. The atomic decrement orders every earlier arrival's writes
// before the last one's reads.
func (a *allOf[T]) arrive(i int, q *firing) {
	c := a.cells[i]
	a.results[i], a.errs[i] = c.result, c.err
	if a.left.Add(-1) != 0 {
		return
	}
	// Report each dropped panic once: one *PanicError may reach several
	// of fs (two Thens of one source, or the same Future twice), and the
	// one delivered is not dropped. Panics are told apart by their
	// *PanicError pointer, never by comparing errors with ==, which
	// panics on an incomparable dynamic type.
	first := -1
	reported := []*PanicError{nil}
	for j, err := range a.errs {
		switch {
		case err == nil:
		case first < 0:
			first = j
			reported = append(reported, panicOf(err)) // delivered
		default:
			if pe := panicOf(err); !slices.Contains(reported, pe) {
				reported = append(reported, pe)
				reportDropped(err, originOf(a.cells[j]))
			}
		}
	}
	if first >= 0 {
		a.complete(nil, a.errs[first], originOf(a.cells[first]), q)
		return
	}
	a.complete(a.results, nil, nil, q)
}

// AnyOf returns a Future that completes as the first of fs to complete
// does, with its result or its error. The others' results are dropped
// when they complete, and a panic among them goes to the panic handler of
// the pool it came from. It panics if fs is empty (a Future that can
// never complete). No worker waits meanwhile.
func AnyOf[T any](fs ...*Future[T]) *Future[T] {
	if len(fs) == 0 {
		panic("forkjoin: AnyOf called with no Futures")
	}
	for _, f := range fs {
		checkChainable(f, "AnyOf")
	}
	pr := &promise[T]{}
	pr.init()
	// winner holds the error the winner delivered (in a box, so that a nil
	// error is a value too): set in the same CAS that decides the race, so
	// a loser sees it and does not report the very panic AnyOf delivered.
	type outcome struct{ err error }
	var winner atomic.Pointer[outcome]
	for _, f := range fs {
		c := f.c
		arrive := func(q *firing) {
			if winner.CompareAndSwap(nil, &outcome{c.err}) {
				pr.complete(c.result, c.err, originOf(c), q)
				return
			}
			if pe := panicOf(c.err); pe != nil && pe == panicOf(winner.Load().err) {
				return // the panic AnyOf delivered: not dropped
			}
			reportDropped(c.err, originOf(c))
		}
		if !c.latch.onSet(arrive, nil) {
			fireNow(arrive)
		}
	}
	return &pr.future
}
