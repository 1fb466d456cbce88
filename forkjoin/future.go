package forkjoin

import (
	"context"
	"sync/atomic"
)

// Future is the handle of a forked or submitted task. It stays valid after
// the task completes: Join, Get and Done may be called any number of times,
// from any number of workers and goroutines.
//
// Joining a Future is deadlock-free within one computation (a task joins
// what it or its subtasks forked) and for submitted Futures. Two
// computations that each join a Future of the other form a cycle that no
// scheduler can break. Share results between computations through Get from
// outside the pool, or join them in one parent task.
//
// A Future from Fork costs no allocation when it does not escape the
// forking function (the usual fork, compute, join): the handle lives on the
// caller's stack and the task runs in a cell its worker recycles. The
// first Join by the forking worker copies the outcome into the handle and
// recycles the cell; Get, Done and a Join from another worker are slower
// (they register with the forking worker, which then keeps its recycled
// cells back until they are done) and meant for the rare fork whose result
// is wanted elsewhere. Such a waiter sleeps until the task completes and
// is woken then; a worker helps with other work of its pool meanwhile.
type Future[T any] struct {
	c     *cell[T]      // c.owner is the forking worker, which recycles c; nil for submitted tasks
	state atomic.Uint32 // forks: unsettled, then settled by the owner's first Join
	// A settled fork's outcome, copied from c before c was recycled.
	// Written once, before state becomes settled; read after it is.
	result T
	err    error
}

// The states of a fork's Future. It is settled once its owner has joined
// it: from then on its outcome is in the handle and its cell may belong to
// another task.
const (
	unsettled uint32 = iota
	settled
)

// Fork schedules fn to run on the pool, possibly on another worker, and
// returns its Future. Join it from the same task to get the result; an
// un-stolen Fork+Join costs a push and a pop on w's own deque and one
// atomic store that settles the Future (another goroutine may read it).
// The Future itself allocates nothing unless it escapes
// (see Future); the closure fn does if it captures variables, which
// ForkTask (typed.go; task.Fork for users) avoids.
func Fork[T any](w *Worker, fn func(*Worker) T) *Future[T] {
	// Kept small enough to inline, like ForkTask, so that the handle can
	// live on the caller's stack.
	return &Future[T]{c: forkFunc(w, fn)}
}

// forkFunc is kept out of line: inlined, its body would push Fork past the
// inlining budget, and then every Future from Fork would escape.
//
//go:noinline
func forkFunc[T any](w *Worker, fn func(*Worker) T) *cell[T] {
	if fn == nil {
		panic("forkjoin: Fork called with a nil function")
	}
	if w == nil {
		panicNilWorker("Fork")
	}
	return forkCell[T](w, funcTask[T](fn))
}

// forkCell forks c on w in a recycled cell: the body of ForkTask
// (typed.go). It takes no name for the nil *Worker message (Fork checks w
// before): an argument more would push ForkTask, and task.ForkAction
// around it, over the inlining budget.
func forkCell[T any, C computer[T]](w *Worker, c C) *cell[T] {
	if w == nil {
		panicNilWorker("ForkTask")
	}
	if any(c) == nil {
		panicNilTask("ForkTask")
	}
	w.checkCanceled()
	l := cacheOf[cellList[T, C]](w)
	n := l.ready
	if n != nil {
		l.ready = n.next
		if n.latch.state.Load() != latchUnset {
			n.clear()
		}
	} else {
		n = l.refill(w)
	}
	n.task = c
	if !w.pushPrivate(&n.node) {
		w.pushPublishing(&n.node)
	}
	return &n.cell
}

// Done reports whether the task has completed (returned or panicked).
func (f *Future[T]) Done() bool {
	checkFuture(f, "Done")
	if f.c.owner == nil {
		return f.c.isDone()
	}
	if f.state.Load() == settled {
		return true
	}
	defer f.c.owner.unpin()
	f.c.owner.pin()
	return f.state.Load() == settled || f.c.isDone()
}

// Join waits for the task and returns its result, re-panicking with its
// *PanicError if it panicked. It must be called from a task running on w.
// If the task still sits in w's deque, w runs it inline; otherwise w helps
// with other work until the task completes.
//
// f does not escape through Join: no pointer to f is passed to anything
// the compiler cannot see through (the typed cell's join gets only the
// worker, and returns the outcome for settle to store), so a Future that
// is forked and joined in one function stays on that function's stack
// (scripts/check-escape guards this).
func (f *Future[T]) Join(w *Worker) T {
	if f == nil || f.c == nil {
		checkFuture(f, "Join")
	}
	c := f.c
	if c.owner != w || w == nil {
		return f.joinOther(w)
	}
	if f.state.Load() == settled {
		return f.outcome()
	}
	r, err := c.typed.join(w)
	f.settle(r, err)
	if err != nil {
		panic(err)
	}
	return r
}

// settle stores the outcome of the owner's Join in f and then marks f
// settled, unless a Join of f nested in this one settled it already. It
// runs on the owner's goroutine only.
//
// A reader (awaitFork) registers on the cell's latch and then loads
// f.state; settle stores f.state and then loads the latch's state. Both
// are sequentially consistent atomics, so (Dekker) either the reader sees
// f settled, or settle sees the registration and sets the latch, with the
// outcome in the cell too, which wakes the reader. The cell is not recycled
// under the reader: it is pinned (see Worker.pin).
func (f *Future[T]) settle(r T, err error) {
	if f.state.Load() == settled {
		return
	}
	f.result, f.err = r, err
	f.state.Store(settled)
	if c := f.c; c.latch.state.Load() == latchSleepy {
		c.result, c.err = r, err
		c.latch.set()
	}
}

// outcome returns a settled Future's result, or re-panics its panic.
func (f *Future[T]) outcome() T {
	if f.err != nil {
		panic(f.err)
	}
	return f.result
}

// joinOther is Join by a worker other than the forking one, or of a
// submitted task.
func (f *Future[T]) joinOther(w *Worker) T {
	if w == nil {
		panicNilWorker("Future.Join") // from outside a task, Get is the call
	}
	var r T
	var err error
	if f.c.owner != nil {
		r, err = f.awaitFork(nil, w)
	} else {
		c := f.c
		if !c.isDone() {
			// Submitted: run it here if nobody has started it (it may still
			// wait in a queue), else wait for whoever runs it.
			switch {
			case c.scope != nil && w.comp.isWithin(c.scope):
				// A task of the root's own computation, or of one nested
				// in it by an InvokeContext from one of its tasks, inline
				// or on another pool
				// (TestRev26GetOfRootFromNestedComputationAfterCancel); the
				// root has started, so there is nothing to claim. Once
				// canceled, the root settles, waiting for this task,
				// before it completes. ended is set then too; the task
				// unwinds (the Join would re-panic with ctx.Err() anyway).
				if w.pool != c.pool {
					w.waitForeign(&c.scope.ended)
				} else {
					w.waitUntil(&c.scope.ended, &c.node)
				}
				if !c.isDone() {
					c.scope.unwindEnded()
				}
			case w.pool != c.pool:
				w.waitForeign(&c.latch)
			case c.pool.claim(&c.node):
				c.pool.inj.dropClaimed() // its slot leaves the queue now, not at the next take
				w.run(&c.node)
			default:
				w.waitUntil(&c.latch, &c.node)
			}
		}
		r, err = c.result, c.err
	}
	if err != nil {
		panic(err)
	}
	return r
}

// Get waits for the task from any goroutine and returns its result, or the
// task's *PanicError, ErrClosed if it was submitted to a closed pool, or,
// for SubmitContext, the computation's ctx.Err() (see SubmitContext).
//
// ctx bounds Get's wait and nothing else, as in any Go call that waits: if
// ctx is done before the task completes, Get returns ctx.Err() at once,
// while the task may still run (it is not canceled, and may still write to
// memory it shares with the caller). To stop the task, cancel the context
// given to SubmitContext; to wait until it has stopped, call Get again
// with a context that is not done (context.Background()), which returns
// only once the task and every task it joined have stopped
// (TestFutureGetContextBoundsOnlyTheWait).
//
// Inside a task use Join instead: Get blocks the worker without helping,
// and would deadlock a pool whose other workers all wait for this one.
// Before it blocks it makes the worker's private tasks stealable, as Block
// does, so that an idle worker can run a fork that Get waits for
// (TestGetOfOwnForkInsideTaskPublishes). A task of a SubmitContext's own
// computation that Gets the root's Future unwinds, as at a fork, once the
// computation is canceled, as Join does: the canceled root waits for the
// tasks still running before its Future completes
// (TestRev22ForkJoiningItsRootAfterCancel). So does a task of a
// computation nested in the root's by an InvokeContext from one of its
// tasks, inline or on another pool, whose InvokeContext then returns the
// unwinding as its error
// (TestRev26GetOfRootFromNestedComputationAfterCancel).
func (f *Future[T]) Get(ctx context.Context) (T, error) {
	checkFuture(f, "Get")
	if f.c.owner != nil {
		return f.awaitFork(ctx, nil)
	}
	c := f.c
	if !c.latch.probe() {
		// Get inside a task blocks its worker: see publishCaller.
		if w := publishCaller(); w != nil && c.scope != nil && w.comp.isWithin(c.scope) {
			// A task of the root's own computation, as in joinOther:
			// once canceled, the root settles, waiting for this task,
			// before it completes. ended is set by the settle too; the
			// task then unwinds as at a fork
			// (TestRev22ForkJoiningItsRootAfterCancel, wait=get).
			if !c.scope.ended.await(doneOf(ctx)) {
				var zero T
				return zero, ctx.Err()
			}
			if !c.isDone() {
				c.scope.unwindEnded() // settle set canceled before ended
			}
		}
	}
	if !c.latch.await(doneOf(ctx)) {
		var zero T
		return zero, ctx.Err()
	}
	return c.result, c.err
}

// checkFuture panics with a clear message for a nil *Future or a zero
// Future (one not made by Fork or Submit).
func checkFuture[T any](f *Future[T], method string) {
	if f == nil || f.c == nil {
		panic("forkjoin: " + method + " called on a nil *Future or a Future not made by Fork or Submit")
	}
}

// awaitFork waits for a fork from anywhere but its owner's Join: from a
// goroutine (w nil; ctx may end the wait) or from another worker w, which
// helps with other work meanwhile. It pins the owner's recycled cells for
// its duration, so that c cannot become another task's cell under it.
func (f *Future[T]) awaitFork(ctx context.Context, w *Worker) (T, error) {
	defer f.c.owner.unpin()
	f.c.owner.pin()
	c := f.c
	published := false // publishCaller ran (w nil only)
	for {
		if f.state.Load() == settled {
			return f.result, f.err
		}
		if c.isDone() {
			return c.result, c.err
		}
		// Register, then look at f again (see settle): from here on the
		// owner's settle sets the latch if it has not been seen settled.
		if _, ok := c.latch.addWaiter(w); !ok || f.state.Load() == settled {
			continue
		}
		if w == nil && !published {
			// Get inside a task blocks its worker, perhaps the fork's
			// owner with f's task private in its deque: see publishCaller.
			publishCaller()
			published = true
		}
		switch {
		case w != nil && w.pool != c.owner.pool:
			w.waitForeign(&c.latch)
		case w != nil:
			w.waitUntil(&c.latch, &c.node)
		case !c.latch.await(doneOf(ctx)):
			var zero T
			return zero, ctx.Err()
		}
	}
}

// doneOf returns ctx.Done(), or nil (never ready) for a nil ctx.
func doneOf(ctx context.Context) <-chan struct{} {
	if ctx == nil {
		return nil
	}
	return ctx.Done()
}
