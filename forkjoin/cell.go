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

// runInline: see typedCell. A panic completes the cell with its
// *PanicError, and the cell is dropped rather than recycled.
func (c *taskCell[T, C]) runInline(w *Worker, hold bool) (r T, err error) {
	finished := false
	defer func() {
		if !finished {
			err = capturePanic(recover())
			c.err = err
			c.completeInline()
		}
	}()
	r = c.task.Compute(w)
	finished = true
	c.result = r // for a reader that finds the cell done before f settles
	c.completeInline()
	if hold {
		c.hold()
	}
	return r, nil
}

// completeInline completes a cell whose task its owner ran itself. Nobody
// else has it, so a release store does, where complete's swap would cost a
// fence. A reader that registered meanwhile (see Future) is woken; one that
// registers between the load and the store finds out by polling.
func (c *cell[T]) completeInline() {
	s := c.state.Load()
	storeRelease(&c.state, done)
	if s == waiting {
		c.wakeWaiters()
	}
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
		return c
	}
	return l.refill(w)
}

func panicNilWorker() {
	panic("forkjoin: Fork or Join called with a nil *Worker; from outside a task use Submit or Invoke")
}

// refill frees the held cells if no reader can see them any more, and
// returns one of them, or else a new cell.
func (l *cellList[T, C]) refill(w *Worker) *taskCell[T, C] {
	if l.nheld >= heldBatch {
		if w.quiescent() {
			for c := l.held; c != nil; {
				next := c.next
				c.clear()
				c.next, l.ready = l.ready, c
				c = next
			}
			l.held, l.nheld = nil, 0
			c := l.ready
			l.ready = c.next
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
