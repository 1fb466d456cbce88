package forkjoin

import "sync"

// cell is the node of a typed task that returns a T: what the deques carry,
// the task's outcome, and who waits for it. Join, JoinTasks, Fork and Submit
// all run their tasks in cells (a taskCell, which adds the task itself).
type cell[T any] struct {
	node
	result T
	err    error        // *PanicError, or ErrClosed for a Submit to a closed pool
	pool   *Pool        // set for submitted (root) tasks, whose completion Close awaits
	scope  *computation // set by SubmitContext: the scope this cell owns
	mu     sync.Mutex
	wait   *waitList    // who sleeps until completion; guarded by mu
	typed  typedCell[T] // the taskCell around this cell
	owner  *Worker      // the worker that recycles the cell; nil: never recycled
}

type waitList struct {
	ch      chan struct{} // closed at completion; made on the first Get that waits
	workers []*Worker     // workers sleeping in a join
}

// typedCell is the part of a taskCell that needs the task's type: a Future,
// which knows only T, reaches it through this interface.
type typedCell[T any] interface {
	// join is Future.Join on this cell.
	join(f *Future[T], w *Worker) T
	// runInline runs the task on its owner w, which has just taken it
	// from its own deque, records the outcome and completes the cell, and
	// then, if hold is set and the task did not panic, holds the cell.
	runInline(w *Worker, hold bool) (T, error)
	// hold puts the cell on its owner's held list (see cellList).
	hold()
}

// taskCell is a cell with its task stored unboxed.
type taskCell[T any, C Computer[T]] struct {
	cell[T]
	task C
	list *cellList[T, C] // owner's free list for this type
	next *taskCell[T, C] // free list link
}

// complete marks c done and wakes whoever waits. The moment c is done its
// owner may recycle it, so complete reads everything it needs first and
// takes the wait list in the same critical section that completes c.
func (c *cell[T]) complete() {
	if s := c.scope; s != nil {
		s.stop()
		c.err = s.outcome(c.err)
	}
	pool := c.pool
	if !c.state.CompareAndSwap(pending, done) {
		// Waiting: registrations hold mu, so none is in progress once we
		// hold it, and none can follow once c is done.
		c.mu.Lock()
		wl := c.wait
		c.wait = nil
		c.state.Store(done)
		c.mu.Unlock()
		wl.wake()
	}
	if pool != nil {
		pool.rootDone()
	}
}

// wakeWaiters wakes everyone registered on c, for an owner that completed
// c itself (completeInline).
func (c *cell[T]) wakeWaiters() {
	c.mu.Lock()
	wl := c.wait
	c.wait = nil
	c.mu.Unlock()
	wl.wake()
}

func (wl *waitList) wake() {
	if wl == nil {
		return
	}
	if wl.ch != nil {
		close(wl.ch)
	}
	for _, w := range wl.workers {
		w.sleepers.Unpark(w.index)
	}
}

// register records a waiter under mu and moves the state to waiting: w, or
// a channel (returned) for a goroutine outside the pool when w is nil. It
// reports false if c completed first (nothing to wait for).
func (c *cell[T]) register(w *Worker) (ch chan struct{}, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.Load() == done {
		return nil, false
	}
	if c.wait == nil {
		c.wait = &waitList{}
	}
	if w != nil {
		for _, x := range c.wait.workers {
			if x == w {
				goto registered
			}
		}
		c.wait.workers = append(c.wait.workers, w)
	} else if c.wait.ch == nil {
		c.wait.ch = make(chan struct{})
	}
registered:
	// The completer swaps in done without mu; if it did so since the load
	// above, this CAS fails and we must not wait.
	if !c.state.CompareAndSwap(pending, waiting) && c.state.Load() == done {
		return nil, false
	}
	return c.wait.ch, true
}

func (c *cell[T]) addWaiter(w *Worker) { c.register(w) }

// await blocks the calling goroutine until c is done.
func (c *cell[T]) await() {
	if !c.isDone() {
		if ch, ok := c.register(nil); ok {
			<-ch
		}
	}
}

// execute runs the task of a cell taken from a deque or the submission
// queue and completes the cell with its result or panic.
func (c *taskCell[T, C]) execute(w *Worker) {
	finished := false
	defer func() {
		if !finished {
			c.err = capturePanic(recover())
			c.dropTask()
			c.complete()
		}
	}()
	w.checkCanceled()
	c.result = c.task.Compute(w)
	finished = true
	c.dropTask()
	c.complete()
}

// dropTask lets the GC have what the task references, once it has run.
func (c *taskCell[T, C]) dropTask() {
	var zero C
	c.task = zero
}

// fail completes c, never run, with err.
func (c *taskCell[T, C]) fail(err error) {
	c.pool = nil
	c.err = err
	c.dropTask()
	c.state.Store(done)
}

// join is Future.Join, which only checks f: the fast path is written out
// here, in the typed cell, so that an un-stolen fork's Join costs one
// interface call into it and the task's own Compute, with no further call
// but the deferred one. The fast path is the forking task joining its fork
// while the fork is still the newest task in w's deque: nothing else runs
// before the task itself, so no nested Join can interfere (see joining).
// f must not be kept beyond the call (see Future.Join).
func (c *taskCell[T, C]) join(f *Future[T], w *Worker) T {
	if c.owner != w || w == nil {
		return f.joinOther(w)
	}
	s := f.state.Load()
	if s == settled {
		return f.outcome()
	}
	x := w.deque.PopPrivate()
	if s != unsettled || x != &c.node {
		f.joinOwned(w, x)
		return f.outcome()
	}
	w.own.executed++
	ran := false
	defer func() {
		if !ran {
			recovered := recover()
			f.err = c.failInline(recovered)
			storeRelease(&f.state, settled)
			if recovered != nil {
				panic(f.err)
			} // else runtime.Goexit: let it go on unwinding
		}
	}()
	r := c.task.Compute(w)
	ran = true
	c.dropTask()
	// The outcome goes to f alone: the cell is never marked done (see
	// cellList), as readers look at f first. One that registered on the
	// cell meanwhile is woken here; one that registers between the store
	// and the load below sees f settled when it checks again after
	// registering (awaitFork), unless the store is still in this core's
	// store buffer, and then it finds out by polling (see Future).
	f.result = r
	storeRelease(&f.state, settled)
	if c.state.Load() == waiting {
		c.wakeWaiters()
	}
	c.hold()
	return r
}

// runInline: see typedCell. A panic completes the cell with its
// *PanicError, and the cell is dropped rather than recycled.
func (c *taskCell[T, C]) runInline(w *Worker, hold bool) (r T, err error) {
	ran := false
	defer func() {
		if !ran {
			err = c.failInline(recover())
		}
	}()
	r = c.task.Compute(w)
	ran = true
	c.result = r
	if c.completeInline() {
		c.wakeWaiters()
	}
	if hold {
		c.hold()
	}
	return r, nil
}

// completeInline completes a cell whose task its owner ran itself. Nobody
// else has the cell, so a release store does, where complete's swap would
// cost a fence. It reports whether a reader registered meanwhile (see
// Future): the caller must then wake it with wakeWaiters, a call kept out
// of completeInline so that completeInline inlines. A reader that registers
// between the load and the store finds out by polling.
func (c *cell[T]) completeInline() (wake bool) {
	s := c.state.Load()
	storeRelease(&c.state, done)
	return s == waiting
}

// failInline completes, with the *PanicError of recovered, a cell whose
// task panicked (or, with recovered nil, called runtime.Goexit) while its
// owner ran it. The cell is dropped rather than recycled: a reader may
// still look at it. It must be called from the deferred function that
// recovered, so that the stack it captures still holds the panicking
// frames.
func (c *taskCell[T, C]) failInline(recovered any) *PanicError {
	pe := capturePanic(recovered)
	c.err = pe
	if c.completeInline() {
		c.wakeWaiters()
	}
	return pe
}

// cellList is a worker's free list of cells of one task type: cells whose
// owner is that worker, taken by its forks and put back by its joins.
//
// Cells joined through JoinTasks or Join go straight back to ready: no
// handle to them exists, so once the owner has read the result nobody else
// can look at them. A cell joined through a Future is different: another
// goroutine may still hold the Future and read the cell (Get, Done, a Join
// from another worker) at the moment the owner's Join settles the Future.
// Such cells are held back, and move to ready only when the owner, after a
// full fence, sees no such reader registered (Worker.quiescent). The fence
// costs one locked instruction per batch of heldBatch cells, where a fence
// per join would cost more than the whole fork (see Future).
//
// A cell on either list whose state is pending is clean: no result, no
// thief, no waiter, and no task (its joiner dropped it). This holds for the
// cells of un-stolen forks, which their owner ran without ever marking them
// done, and for released cells. Any other cell (completed by a thief, run
// by a slow path of Join, or registered on by a reader) is cleared when it
// is taken, so that freeing a batch costs no walk over it.
type cellList[T any, C Computer[T]] struct {
	ready *taskCell[T, C]
	held  *taskCell[T, C]
	nheld int
}

const (
	heldBatch = 32   // held cells freed by one fence
	heldMax   = 4096 // held cells beyond which they are left to the GC
)

// takeCell returns a cell for a fork on w, from w's free list for this task
// type or new. It checks w and the cancellation of w's computation first,
// as every fork does. (forkCell spells it out, to save a call.)
func takeCell[T any, C Computer[T]](w *Worker) *taskCell[T, C] {
	if w == nil {
		panicNilWorker()
	}
	w.checkCanceled()
	l := cacheOf[cellList[T, C]](w)
	if c := l.ready; c != nil {
		l.ready = c.next
		if c.state.Load() != pending {
			c.clear()
		}
		return c
	}
	return l.refill(w)
}

func panicNilWorker() {
	panic("forkjoin: Fork or Join called with a nil *Worker; from outside a task use Submit or Invoke")
}

// refill frees the held cells if no reader can see them any more, and
// returns one of them, or else a new cell. The held list becomes the ready
// list as it is: a cell is cleared when it is taken, and only if it needs
// it (see cellList).
func (l *cellList[T, C]) refill(w *Worker) *taskCell[T, C] {
	if l.nheld >= heldBatch {
		if w.quiescent() {
			c := l.held
			l.ready, l.held, l.nheld = c.next, nil, 0
			if c.state.Load() != pending {
				c.clear()
			}
			return c
		}
		if l.nheld >= heldMax {
			l.held, l.nheld = nil, 0 // a long Get pins them: let the GC have them
		}
	}
	c := &taskCell[T, C]{list: l}
	c.owner = w
	c.job = c
	c.typed = c
	return c
}

// release puts a cell joined without a handle back on its owner's free
// list.
func (c *taskCell[T, C]) release() {
	c.clear()
	c.next = c.list.ready
	c.list.ready = c
}

// releaseUnstolen is release for a cell its owner took back from its own
// deque: nobody else saw it, so only the task needs clearing (the result
// was never written).
func (c *taskCell[T, C]) releaseUnstolen() {
	var zeroC C
	c.task = zeroC
	c.next = c.list.ready
	c.list.ready = c
}

// hold puts a cell joined through a Future on its owner's held list. Its
// fields stay as they are: a reader may still be reading the result.
func (c *taskCell[T, C]) hold() {
	l := c.list
	c.next = l.held
	l.held = c
	l.nheld++
}

// clear resets a cell for reuse; only its owner, with no reader left, calls
// it. Nobody else can be looking at the cell, so the state needs no fence;
// the thief's slot, reset only after a steal, takes the atomic store.
func (c *taskCell[T, C]) clear() {
	var zeroC C
	var zeroT T
	c.task, c.result = zeroC, zeroT
	if c.state.Load() != pending {
		storeRelease(&c.state, pending)
	}
	if c.thief.Load() != nil {
		c.thief.Store(nil)
	}
	if c.wait != nil {
		c.wait = nil
	}
}
