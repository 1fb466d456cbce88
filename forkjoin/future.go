package forkjoin

import (
	"context"
	"sync"
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
type Future[T any] struct {
	node
	result T
	err    error        // *PanicError, or ErrClosed for a Submit to a closed pool
	pool   *Pool        // set for submitted (root) tasks, whose completion Close awaits
	scope  *computation // set by SubmitContext: the scope this future owns
	mu     sync.Mutex
	wait   *waitList // who sleeps until completion; guarded by mu
}

type waitList struct {
	ch      chan struct{} // closed at completion; made on the first Get that waits
	workers []*Worker     // workers sleeping in Join
}

// futureNode stores the task unboxed beside its Future.
type futureNode[T any, C Computer[T]] struct {
	Future[T]
	task C
}

// futureSlab carves futures for one task type out of blocks, so that a fork
// that must hand out a handle costs a fraction of an allocation. A block
// stays alive while any future in it is referenced.
type futureSlab[T any, C Computer[T]] struct {
	block []futureNode[T, C]
}

const futureSlabSize = 32

func newFuture[T any, C Computer[T]](w *Worker, c C) *futureNode[T, C] {
	var f *futureNode[T, C]
	if w != nil {
		s := cacheOf[futureSlab[T, C]](w)
		if len(s.block) == 0 {
			s.block = make([]futureNode[T, C], futureSlabSize)
		}
		f = &s.block[0]
		s.block = s.block[1:]
	} else {
		f = new(futureNode[T, C])
	}
	f.task = c
	f.job = f
	return f
}

func (f *futureNode[T, C]) execute(w *Worker) {
	finished := false
	defer func() {
		if !finished {
			f.err = capturePanic(recover())
			f.complete()
		}
	}()
	w.checkCanceled()
	f.result = f.task.Compute(w)
	finished = true
	var zero C
	f.task = zero // the future outlives the task: drop what it references
	f.complete()
}

// fail completes f, never run, with err.
func (f *futureNode[T, C]) fail(err error) {
	f.pool = nil
	f.err = err
	f.task = *new(C)
	f.state.Store(done)
}

// complete marks f done and wakes whoever waits.
func (f *Future[T]) complete() {
	if c := f.scope; c != nil {
		c.stop()
		f.err = c.outcome(f.err)
	}
	if f.state.Swap(done) == waiting {
		f.mu.Lock()
		wl := f.wait
		f.wait = nil
		f.mu.Unlock()
		if wl.ch != nil {
			close(wl.ch)
		}
		for _, w := range wl.workers {
			w.sleepers.Unpark(w.index)
		}
	}
	if f.pool != nil {
		f.pool.rootDone()
	}
}

// register records a waiter under mu and moves the state to waiting. It
// reports false if f completed first (nothing to wait for).
func (f *Future[T]) register(w *Worker) (ch chan struct{}, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state.Load() == done {
		return nil, false
	}
	if f.wait == nil {
		f.wait = &waitList{}
	}
	if w != nil {
		for _, x := range f.wait.workers {
			if x == w {
				goto registered
			}
		}
		f.wait.workers = append(f.wait.workers, w)
	} else if f.wait.ch == nil {
		f.wait.ch = make(chan struct{})
	}
registered:
	// The completer swaps in done without mu; if it did so since the load
	// above, this CAS fails and we must not wait.
	if !f.state.CompareAndSwap(pending, waiting) && f.state.Load() == done {
		return nil, false
	}
	return f.wait.ch, true
}

func (f *Future[T]) addWaiter(w *Worker) { f.register(w) }

// Done reports whether the task has completed (returned or panicked).
func (f *Future[T]) Done() bool { return f.isDone() }

// Join waits for the task and returns its result, re-panicking with its
// *PanicError if it panicked. It must be called from a task running on w.
// If the task still sits in w's deque, w runs it inline; otherwise w helps
// with other work until the task completes.
func (f *Future[T]) Join(w *Worker) T {
	if f == nil {
		panic("forkjoin: Join called on a nil *Future")
	}
	if !f.isDone() {
		if w == nil {
			panic("forkjoin: Future.Join called with a nil *Worker; from outside a task use Get")
		}
		switch {
		case f.root:
			// Submitted: run it here if nobody has started it (it may
			// still wait in a queue), else wait for whoever runs it.
			if w.pool == f.pool && f.pool.claim(&f.node) {
				w.run(&f.node)
			} else {
				w.helpUntilDone(&f.node)
			}
		case w.unpush(&f.node):
			f.job.execute(w)
		default:
			w.helpUntilDone(&f.node)
		}
	}
	if f.err != nil {
		panic(f.err)
	}
	return f.result
}

// Get waits for the task from any goroutine and returns its result, or the
// task's *PanicError, ErrClosed if it was submitted to a closed pool, or
// ctx.Err() if ctx is done first (the task itself keeps running). Inside a
// task use Join instead: Get blocks the worker without helping, and would
// deadlock a pool whose other workers all wait for this one.
func (f *Future[T]) Get(ctx context.Context) (T, error) {
	if f == nil {
		panic("forkjoin: Get called on a nil *Future")
	}
	if !f.isDone() {
		if ch, ok := f.register(nil); ok {
			select {
			case <-ch:
			case <-ctx.Done():
				var zero T
				return zero, ctx.Err()
			}
		}
	}
	return f.result, f.err
}

// await blocks the calling goroutine until f is done.
func (f *Future[T]) await() {
	if !f.isDone() {
		if ch, ok := f.register(nil); ok {
			<-ch
		}
	}
}

// Fork schedules fn to run on the pool, possibly on another worker, and
// returns its Future. Join it from the same task to get the result; an
// un-stolen Fork+Join costs two pushes and a pop on w's own deque. The
// Future is carved from a per-worker slab, so a fork costs a small fraction
// of an allocation, plus the closure fn if it captures variables; ForkTask
// avoids the closure.
func Fork[T any](w *Worker, fn func(*Worker) T) *Future[T] {
	if fn == nil {
		panic("forkjoin: Fork called with a nil function")
	}
	return ForkTask[T](w, funcTask[T](fn))
}

// ForkTask is Fork for a typed task: c is stored unboxed in the future.
func ForkTask[T any, C Computer[T]](w *Worker, c C) *Future[T] {
	if w == nil {
		panic("forkjoin: Fork called with a nil *Worker; from outside a task use Submit")
	}
	w.checkCanceled()
	f := newFuture[T](w, c)
	w.push(&f.node)
	return &f.Future
}
