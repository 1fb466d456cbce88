package forkjoin

// cell is the node of a typed task that returns a T: what the deques carry,
// the task's outcome, and (in its latch) who waits for it. Join, JoinTasks,
// Fork and Submit all run their tasks in cells (a taskCell, which adds the
// task itself and its free-list links; a Submit's is a submission, which
// adds the task and the Future: submit.go).
//
// The plain fields: result and err are written by the goroutine that
// completes the cell before it sets the latch, and read by others only
// once they see the latch set (probe, await, addWaiter's false); pool,
// scope, typed and owner are set before the cell is published (a deque
// push, a submission's slot, a Future returned) and read-only after;
// joining is the owner's. A recycled cell is rewritten only by its owner
// once no reader is left (clear; see cellList).
type cell[T any] struct {
	node
	result T
	err    error        // *PanicError, or ErrClosed for a Submit to a closed pool
	pool   *Pool        // set for submitted (root) tasks, whose completion Close awaits
	scope  *computation // set by SubmitContext: the scope this cell owns
	typed  typedCell[T] // the taskCell around this cell, or a continuation's promise (then.go); nil in a submission
	owner  *Worker      // the worker that recycles the cell; nil: never recycled
	// joining is set while the owner's first Join of the cell's Future
	// helps or runs newer tasks: a Join of the same Future nested in it
	// must then leave the cell alone (see joinOwned). Only the owner's
	// goroutine reads or writes it.
	joining bool
}

// typedCell is the part of a taskCell that needs the task's type: a Future,
// which knows only T, reaches it through this interface.
type typedCell[T any] interface {
	// join is the owner's Join of the cell's Future (see Future.Join). It
	// returns the outcome, and has held or dropped the cell.
	join(w *Worker) (T, error)
}

// taskCell is a cell with its task stored unboxed.
type taskCell[T any, C computer[T]] struct {
	cell[T]
	task C
	list *cellList[T, C] // owner's free list for this type
	next *taskCell[T, C] // free list link
}

// complete sets c's latch, with the outcome already recorded, and tells a
// submitted task's pool. The moment the latch is set the owner may recycle
// c, so complete reads everything it needs first.
func (c *cell[T]) complete() {
	if s := c.scope; s != nil {
		s.stop()
		if c.err = s.outcome(c.err); c.err != nil {
			var zero T
			c.result = zero
		}
	}
	pool, scope := c.pool, c.scope
	c.latch.set()
	if scope != nil {
		scope.ended.set() // wakes the root's joiners of its own computation
	}
	if pool != nil {
		pool.rootDone()
	}
}

// execute runs the task of a cell taken from a deque or the submission
// queue and completes the cell with its result or panic. (A submitted
// task runs in a submission instead: submit.go.)
func (c *taskCell[T, C]) execute(w *Worker) {
	finished := false
	defer func() {
		if !finished {
			c.err = CapturePanic(recover())
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

// join is the owner's Join of the cell's Future, called by Future.Join
// once it has checked that w is the owner and the Future is not settled.
// The fast path is written out here, in the typed cell, so that an
// un-stolen fork's Join costs one interface call into it and the task's
// own Compute, with no further call but the deferred one: the fork is
// still the newest task in w's deque and no outer Join of it is in
// progress, so w runs it inline. The cell is never marked done then (see
// cellList): the outcome goes to the Future alone (Future.settle).
//
// The fast path also needs w to be in the computation c was forked in, as
// it is when one task forks and joins: a Future that left its computation
// (the fork of an InvokeContext that returns it unjoined) is joined on the
// slow path, which runs the task in its own computation as a thief would
// (runInline; TestForkBelongsToItsComputation).
func (c *taskCell[T, C]) join(w *Worker) (T, error) {
	x := w.deque.PopPrivate()
	if x != &c.node || c.joining || c.comp != w.comp || c.group != w.group {
		return c.joinOwned(w, x)
	}
	w.own.executed++
	ran := false
	defer func() {
		if !ran {
			recovered := recover()
			pe := c.failInline(recovered)
			if recovered != nil {
				panic(pe)
			} // else runtime.Goexit: let it go on unwinding
		}
	}()
	r := c.task.Compute(w)
	ran = true
	c.dropTask()
	c.hold()
	return r, nil
}

// joinOwned is the owner's Join when its fork is not the newest task in
// w's deque, or a Join of the same Future is already in progress further
// down this stack (x is what w popped: nil, a task forked after c, or c
// itself). It runs the newer tasks, then c inline if it is still there,
// or else helps until c completes. The first Join holds the cell for
// recycling (if the task did not panic); a nested one leaves it alone, so
// that the outer Join never meets the cell again as another task's.
func (c *taskCell[T, C]) joinOwned(w *Worker, x *node) (T, error) {
	if x == &c.node {
		// Popped while an outer Join of c is in progress: run it here and
		// complete the cell, which the outer Join then finds done. Or
		// popped by the first Join, in another computation than c's (see
		// join): that one holds the cell, as the fast path does.
		w.own.executed++
		r, err := c.runInline(w)
		if !c.joining && err == nil {
			c.hold()
		}
		return r, err
	}
	if c.isDone() {
		// Stolen and completed, or panicked in an earlier Join.
		if x != nil {
			w.pushPublishing(x) // not ours to run now: back where it was
		}
		if !c.joining && c.err == nil {
			c.hold()
		}
		return c.result, c.err
	}
	outer := !c.joining
	c.joining = true
	var r T
	var err error
	if w.unpushAfter(x, &c.node) {
		w.own.executed++
		r, err = c.runInline(w)
	} else {
		w.waitUntil(&c.latch, &c.node)
		r, err = c.result, c.err
	}
	if outer {
		c.joining = false
		if err == nil {
			c.hold()
		}
	}
	return r, err
}

// runInline runs the task on its owner w, which has just taken it from its
// own deque, records the outcome and completes the cell (a reader may be
// waiting on it). A panic completes the cell with its *PanicError. The task
// runs in the computation it was forked in, as Worker.run runs a stolen
// one: skipped if that was canceled, and seeing its context. Run from
// another computation than its own (a Future that left it, joined by its
// owner in a task outside it), it is counted in its computation's running
// as Worker.run counts a stolen task, so that the computation's canceled
// root waits for it (computation.settle;
// TestRev22ForkJoinedInlineFromAnotherComputationIsWaitedFor). From its
// own computation it is not: the frame below it, one of the computation's,
// already holds the root up.
func (c *taskCell[T, C]) runInline(w *Worker) (r T, err error) {
	savedComp, savedGroup := w.comp, w.group
	w.comp, w.group = c.comp, c.group
	comp := c.comp // read once: the cell is not read after its latch is set
	counted := comp != nil && comp != savedComp
	if counted {
		comp.running.Add(1) // before checkCanceled: see settle
	}
	ran := false
	defer func() {
		w.comp, w.group = savedComp, savedGroup
		if !ran {
			err = c.failInline(recover())
			r = c.result
		}
		if counted {
			comp.leave() // after the cell completes, as in runCounted
		}
	}()
	w.checkCanceled()
	r = c.task.Compute(w)
	ran = true
	c.dropTask()
	c.result = r
	c.latch.set()
	return r, nil
}

// failInline completes, with the *PanicError of recovered, a cell whose
// task panicked (or, with recovered nil, called runtime.Goexit) while its
// owner ran it. The cell is dropped rather than recycled: a reader may
// still look at it. It must be called from the deferred function that
// recovered, so that the stack it captures still holds the panicking
// frames.
func (c *taskCell[T, C]) failInline(recovered any) *PanicError {
	pe := CapturePanic(recovered)
	c.err = pe
	c.dropTask()
	c.latch.set()
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
// A cell on either list whose latch is unset is clean: no result, no
// thief, no waiter, and no task (its joiner dropped it). This holds for the
// cells of un-stolen forks, which their owner ran without ever marking them
// done, and for released cells. Any other cell (completed by a thief, run
// by a slow path of Join, or registered on by a reader) is cleared when it
// is taken, so that freeing a batch costs no walk over it.
//
// made counts the cells of the list not dropped: on either list, or out (a
// fork not joined yet, or held by a Future that was never joined). When
// the worker has slept idleTrimDelay with nothing to run and made exceeds
// cellListCap, trim cuts the lists down to cellListCap cells, as spawn
// lists are trimmed: a burst of forks does not keep its cells for the life
// of the pool. It counts only on the allocation path, so forks and joins
// pay nothing for it.
type cellList[T any, C computer[T]] struct {
	ready *taskCell[T, C]
	held  *taskCell[T, C]
	nheld int
	made  int
}

const (
	heldBatch   = 32   // held cells freed by one fence
	heldMax     = 4096 // held cells beyond which they are left to the GC
	cellListCap = 4096 // free cells a sleeping worker keeps per task type (see trim)
)

// takeCell returns a cell for a fork on w, from w's free list for this task
// type or new. It checks w and the cancellation of w's computation first,
// as every fork does. (forkCell spells it out, to save a call.)
func takeCell[T any, C computer[T]](w *Worker, api string) *taskCell[T, C] {
	if w == nil {
		panicNilWorker(api)
	}
	w.checkCanceled()
	l := cacheOf[cellList[T, C]](w)
	if c := l.ready; c != nil {
		l.ready = c.next
		if c.latch.state.Load() != latchUnset {
			c.clear()
		}
		return c
	}
	return l.refill(w)
}

// panicNilWorker panics with the one message every function of the package
// gives for a nil *Worker (a typed nil in a Runner included): api names the
// function. TestNilWorkerOneMessage walks them all.
func panicNilWorker(api string) {
	panic("forkjoin: " + api + " called with a nil *Worker")
}

// panicNilTask panics with the message for a typed task that is a nil
// interface value (C an interface type): its Compute cannot be called, and
// calling it would raise a runtime error in the runtime's own frame, which
// would read as a bug in magpie (internalerr.go).
func panicNilTask(api string) {
	panic("forkjoin: " + api + " called with a nil task")
}

// orDefault returns p, or Default() for a nil p: every function that takes
// a *Pool, and every method of a nil *Pool, reads nil as Default()
// (TestNilPoolMeansDefault, TestNilPoolMethodsMeanDefault). A Pool not made
// by New (a zero Pool) panics with a message naming api: its nil fields
// would otherwise raise a runtime error in the runtime's own frames, which
// reads as a bug in magpie (TestUserMistakeInsideTaskIsTheTasks).
func orDefault(p *Pool, api string) *Pool {
	if p == nil {
		return Default()
	}
	if p.inj == nil {
		panic("forkjoin: " + api + " called with a Pool not made by New")
	}
	return p
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
			if c.latch.state.Load() != latchUnset {
				c.clear()
			}
			return c
		}
		if l.nheld >= heldMax {
			l.made -= l.nheld
			l.held, l.nheld = nil, 0 // a long Get pins them: let the GC have them
		}
	}
	l.made++
	c := &taskCell[T, C]{list: l}
	c.owner = w
	c.job = c
	c.typed = c
	return c
}

// trim cuts the lists down to cellListCap cells, the others going to the
// GC; the owner calls it when it has slept idleTrimDelay with nothing to
// run (sleepIdle). Held
// cells are kept first (up to cellListCap): a reader may still see them,
// and dropping them is safe anyway (nobody returns a dropped cell to the
// list). It looks at the cells only when made exceeds cellListCap (a
// burst, or many Futures never joined); otherwise it costs one compare.
func (l *cellList[T, C]) trim() {
	if !l.overCap() {
		return
	}
	var dropped int
	l.held, l.nheld, dropped = cutCells(l.held, cellListCap)
	l.made -= dropped
	l.ready, _, dropped = cutCells(l.ready, cellListCap-l.nheld)
	l.made -= dropped
}

// overCap reports whether trim would look at the cells. Owner only.
func (l *cellList[T, C]) overCap() bool { return l.made > cellListCap }

// cutCells keeps the first keep cells (at least 0) of the list from c and
// drops the rest; it returns the list, the number kept and the number
// dropped.
func cutCells[T any, C computer[T]](c *taskCell[T, C], keep int) (head *taskCell[T, C], kept, dropped int) {
	var last *taskCell[T, C]
	for x := c; x != nil && kept < keep; x = x.next {
		last, kept = x, kept+1
	}
	rest := c
	if last != nil {
		rest, last.next = last.next, nil
		head = c
	}
	for ; rest != nil; rest = rest.next {
		dropped++
	}
	return head, kept, dropped
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
// it (see cellList), so the plain stores race with nothing.
func (c *taskCell[T, C]) clear() {
	var zeroC C
	var zeroT T
	c.task, c.result, c.err = zeroC, zeroT, nil
	c.joining = false
	c.latch.reset()
	if c.thief.Load() != nil {
		c.thief.Store(nil)
	}
}
