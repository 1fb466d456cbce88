package forkjoin

import (
	"context"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/magpie-go/magpie/internal/park"
)

// Future is the handle of a forked or submitted task. It stays valid after
// the task completes: Join, Get and Done may be called any number of times,
// from any number of workers and goroutines.
//
// Joining a Future is deadlock-free within one computation (a task joins
// what it or its subtasks forked) and for submitted Futures. Two
// computations that each join a Future of the other form a cycle that no
// scheduler can break: a worker helping in one may run the other's task on
// top of its stack. Share results between computations through Get from
// outside the pool, or join them in one parent task.
//
// A Future from Fork costs no allocation when it does not escape the
// forking function (the usual fork, compute, join): the handle lives on the
// caller's stack and the task runs in a cell its worker recycles. The
// first Join by the forking worker copies the outcome into the handle and
// recycles the cell; Get, Done and a Join from another worker are slower
// (they register with the forking worker, which then keeps its recycled
// cells back until they are done) and meant for the rare fork whose result
// is wanted elsewhere. Such a waiter is woken when the task completes; only
// when it registers at the very moment the forking worker finishes running
// the task itself can the wake-up be missed, and then the waiter finds out
// by polling (from 20 µs, doubling up to 5 ms).
type Future[T any] struct {
	c     *cell[T]      // c.owner is the forking worker, which recycles c; nil for submitted tasks
	state atomic.Uint32 // forks: unsettled, then settled by the owner's first Join
	// A settled fork's outcome, copied from c before c was recycled.
	result T
	err    error
}

// The states of a fork's Future. It is settled once its owner has joined
// it: from then on its outcome is in the handle and its cell may belong to
// another task. Joining marks the owner's first Join in progress: a Join
// of the same Future nested inside it (by a task the first one runs while
// it waits) settles the Future but leaves the cell to the GC, so that the
// outer Join never meets the cell again as another task's.
const (
	unsettled uint32 = iota
	settled
	joining
)

// Fork schedules fn to run on the pool, possibly on another worker, and
// returns its Future. Join it from the same task to get the result; an
// un-stolen Fork+Join costs a push and a pop on w's own deque, with no
// atomic instruction. The Future itself allocates nothing unless it escapes
// (see Future); the closure fn does if it captures variables, which
// ForkTask avoids.
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
	return forkCell[T](w, funcTask[T](fn))
}

// ForkTask is Fork for a typed task: c is stored unboxed in a cell that w
// recycles, so forking a small struct allocates nothing in the steady state.
func ForkTask[T any, C Computer[T]](w *Worker, c C) *Future[T] {
	return &Future[T]{c: forkCell[T](w, c)}
}

// forkCell forks c on w in a recycled cell.
func forkCell[T any, C Computer[T]](w *Worker, c C) *cell[T] {
	if w == nil {
		panicNilWorker()
	}
	w.checkCanceled()
	l := cacheOf[cellList[T, C]](w)
	n := l.ready
	if n != nil {
		l.ready = n.next
		if n.state.Load() != pending {
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
// with other work until the task completes. Join on a nil *Future is a nil
// pointer dereference, as with any method that needs its receiver.
func (f *Future[T]) Join(w *Worker) T {
	// Join inlines (cost 79 of 80 in Go 1.26, hence no check for f == nil):
	// a check, then one interface call into the typed cell, which holds
	// the fast path (taskCell.join).
	//
	// f is passed through a uintptr because the compiler assumes that an
	// interface method keeps whatever pointer it is passed, and would move
	// every Future to the heap, where the point of the handle is that it
	// lives on the forking task's stack. Hiding f from escape analysis is
	// sound because no implementation of join keeps f beyond the call
	// (go build -gcflags=-m=2 reports its parameter f leaking only with
	// derefs=1, the cell and outcome f points to, never f itself), so f
	// stays reachable, and is moved with the stack if the stack grows, as
	// any pointer argument is. It is runtime.noescape's idiom, written so
	// that go vet accepts it.
	if f.c == nil {
		panic("forkjoin: Join called on a nil *Future or a Future not made by Fork or Submit")
	}
	p := uintptr(unsafe.Pointer(f))
	return f.c.typed.join(*(**Future[T])(unsafe.Pointer(&p)), w)
}

// outcome returns a settled Future's result, or re-panics its panic.
func (f *Future[T]) outcome() T {
	if f.err != nil {
		panic(f.err)
	}
	return f.result
}

// joinOwned is the forking worker's Join when its fork is not the newest
// task in w's deque (x is what w popped instead, possibly nil): it runs
// the newer tasks, then the fork inline if it is still there, or else helps
// until it completes; then it settles f and recycles the cell.
func (f *Future[T]) joinOwned(w *Worker, x *node) {
	c := f.c
	if x == &c.node {
		// Popped, but f is being joined further down this stack: a nested
		// Join runs the task and leaves the cell to the GC.
		w.own.executed++
		f.result, f.err = c.typed.runInline(w, false)
		storeRelease(&f.state, settled)
		return
	}
	outer := f.state.Load() == unsettled
	if outer {
		storeRelease(&f.state, joining)
	}
	var r T
	var err error
	ran := false
	if c.isDone() {
		if x != nil {
			w.deque.PushLazy(x) // not ours to run now
		}
	} else if w.unpushAfter(x, &c.node) {
		w.own.executed++
		r, err = c.typed.runInline(w, outer)
		ran = true
	} else {
		w.helpUntilDone(&c.node)
	}
	if !ran {
		if f.state.Load() == settled {
			return // a nested Join settled f while w ran other tasks
		}
		r, err = c.result, c.err
		if outer && err == nil {
			c.typed.hold()
		}
	}
	f.result, f.err = r, err
	storeRelease(&f.state, settled)
}

// joinOther is Join by a worker other than the forking one, or of a
// submitted task.
func (f *Future[T]) joinOther(w *Worker) T {
	if w == nil {
		panic("forkjoin: Future.Join called with a nil *Worker; from outside a task use Get")
	}
	if f.c.owner != nil {
		r, err := f.awaitFork(nil, w)
		if err != nil {
			panic(err)
		}
		return r
	}
	c := f.c
	if !c.isDone() {
		// Submitted: run it here if nobody has started it (it may still
		// wait in a queue), else wait for whoever runs it.
		if w.pool == c.pool && c.pool.claim(&c.node) {
			w.run(&c.node)
		} else {
			w.helpUntilDone(&c.node)
		}
	}
	if c.err != nil {
		panic(c.err)
	}
	return c.result
}

// Get waits for the task from any goroutine and returns its result, or the
// task's *PanicError, ErrClosed if it was submitted to a closed pool, or
// ctx.Err() if ctx is done first (the task itself keeps running). Inside a
// task use Join instead: Get blocks the worker without helping, and would
// deadlock a pool whose other workers all wait for this one.
func (f *Future[T]) Get(ctx context.Context) (T, error) {
	checkFuture(f, "Get")
	if f.c.owner != nil {
		return f.awaitFork(ctx, nil)
	}
	c := f.c
	if !c.isDone() {
		if ch, ok := c.register(nil); ok {
			select {
			case <-ch:
			case <-ctx.Done():
				var zero T
				return zero, ctx.Err()
			}
		}
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

// Polling bounds for a reader of a fork whose owner runs the task itself.
const (
	minForkPoll = 20 * time.Microsecond
	maxForkPoll = 5 * time.Millisecond
)

// awaitFork waits for a fork from anywhere but its owner's Join: from a
// goroutine (w nil; ctx may end the wait) or from another worker w, which
// helps with other work meanwhile. It pins the owner's recycled cells for
// its duration, so that c cannot become another task's cell under it.
func (f *Future[T]) awaitFork(ctx context.Context, w *Worker) (T, error) {
	defer f.c.owner.unpin()
	f.c.owner.pin()
	c := f.c
	var bo park.Backoff
	for poll := minForkPoll; ; {
		if f.state.Load() == settled {
			return f.result, f.err
		}
		if c.isDone() {
			return c.result, c.err
		}
		if w != nil && w.helpOrSnooze(&c.node, &bo) {
			continue
		}
		ch, ok := c.register(nil)
		if !ok || f.state.Load() == settled {
			continue
		}
		var ctxDone <-chan struct{}
		if ctx != nil {
			ctxDone = ctx.Done()
		}
		t := time.NewTimer(poll)
		select {
		case <-ch:
		case <-t.C:
			poll = min(2*poll, maxForkPoll)
		case <-ctxDone:
			t.Stop()
			var zero T
			return zero, ctx.Err()
		}
		t.Stop()
	}
}
