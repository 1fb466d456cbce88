package forkjoin

// joinNode is the recyclable node behind Join and JoinTasks: no handle to it
// escapes, and only its forking worker ever joins it, so the forker can put
// it back on its free list as soon as it has read the result.
type joinNode[T any, C Computer[T]] struct {
	node
	task   C
	result T
	panic  *PanicError
	owner  *Worker
	list   *joinFreeList[T, C] // the owner's free list for this type
	next   *joinNode[T, C]     // free list link
}

// joinFreeList is a worker's free list of join nodes of one type.
type joinFreeList[T any, C Computer[T]] struct {
	head *joinNode[T, C]
}

func (n *joinNode[T, C]) execute(w *Worker) {
	finished := false
	defer func() {
		if !finished {
			n.panic = capturePanic(recover())
			n.complete()
		}
	}()
	w.checkCanceled()
	n.result = n.task.Compute(w)
	finished = true
	n.complete()
}

func (n *joinNode[T, C]) complete() {
	owner := n.owner // read before the node may be recycled
	if n.state.Swap(done) == waiting {
		owner.pool.sleepers.Unpark(owner.index)
	}
}

func (n *joinNode[T, C]) addWaiter(w *Worker) {
	// Only the owner joins a join node, so the owner is the waiter.
	n.state.CompareAndSwap(pending, waiting)
}

// Join runs a and b, potentially in parallel, and returns both results. It
// forks b, runs a on the calling worker, then joins b: if nobody stole b it
// runs inline, as a plain call; if b was stolen the worker helps (runs other
// tasks) until b completes. If a or b panics, Join waits until the other
// has finished or is known never to start, then re-panics with a
// *PanicError (a's if both panicked).
//
// Join hands out no handle, so its node is recycled: after warm-up it
// allocates nothing beyond the closure b itself when b captures variables
// (it escapes because another worker may run it). JoinTasks avoids even
// that.
func Join[A, B any](w *Worker, a func(*Worker) A, b func(*Worker) B) (ra A, rb B) {
	if a == nil || b == nil {
		panic("forkjoin: Join called with a nil function")
	}
	n := pushJoin[B](w, funcTask[B](b))
	phase := 1 // 1: running a; 2: running b inline; 0: finished
	defer func() {
		if phase != 0 {
			w.abandonJoin(&n.node, phase, recover())
		}
	}()
	ra = a(w) // called directly, not through funcTask, so a does not escape
	if w.unpush(&n.node) {
		phase = 2
		rb = b(w)
	} else if rb, phase = n.awaitStolen(w); phase != 0 {
		phase = 0
		panic(n.panic)
	}
	phase = 0
	n.release()
	return ra, rb
}

// JoinTasks is Join for typed tasks: b is stored unboxed in a recycled node,
// so an un-stolen JoinTasks allocates nothing. It is the runtime's cheapest
// fork: the fork and the join below are written out so that their fast
// paths (a private push, a private pop) inline, and an un-stolen JoinTasks
// makes no call beyond a.Compute, b.Compute and its deferred function.
func JoinTasks[A, B any, CA Computer[A], CB Computer[B]](w *Worker, a CA, b CB) (ra A, rb B) {
	n := takeJoinNode[B, CB](w)
	n.task = b
	if !w.pushPrivate(&n.node) {
		w.pushPublishing(&n.node)
	}
	phase := 1 // as in Join
	defer func() {
		if phase != 0 {
			w.abandonJoin(&n.node, phase, recover())
		}
	}()
	ra = a.Compute(w)
	if x := w.deque.PopPrivate(); x == &n.node || w.unpushAfter(x, &n.node) {
		w.own.executed++
		phase = 2
		rb = b.Compute(w)
	} else if rb, phase = n.awaitStolen(w); phase != 0 {
		phase = 0
		panic(n.panic)
	}
	phase = 0
	n.release()
	return ra, rb
}

// pushJoin takes a node from w's free list for this task type (or makes
// one) and forks c in it.
func pushJoin[T any, C Computer[T]](w *Worker, c C) *joinNode[T, C] {
	n := takeJoinNode[T, C](w)
	n.task = c
	w.push(&n.node)
	return n
}

// takeJoinNode returns a node from w's free list for this task type, or a
// new one. It checks w and the cancellation of w's computation first, as
// every fork does.
func takeJoinNode[T any, C Computer[T]](w *Worker) *joinNode[T, C] {
	if w == nil {
		panic("forkjoin: Join called with a nil *Worker; from outside a task use Invoke")
	}
	w.checkCanceled()
	list := cacheOf[joinFreeList[T, C]](w)
	if n := list.head; n != nil {
		list.head = n.next
		return n
	}
	return newJoinNode(w, list)
}

func newJoinNode[T any, C Computer[T]](w *Worker, list *joinFreeList[T, C]) *joinNode[T, C] {
	n := &joinNode[T, C]{owner: w, list: list}
	n.job = n
	return n
}

// awaitStolen waits, helping, for a stolen node. It returns the result, or
// a non-zero phase if the task panicked (its *PanicError is in n.panic).
func (n *joinNode[T, C]) awaitStolen(w *Worker) (T, int) {
	w.helpUntilDone(&n.node)
	if n.panic != nil {
		return n.result, 1 // n is dropped, not recycled
	}
	n.state.Store(pending)
	n.thief.Store(nil)
	return n.result, 0
}

// release puts n back on its owner's free list.
func (n *joinNode[T, C]) release() {
	var zeroC C
	var zeroT T
	n.task, n.result = zeroC, zeroT // let the GC have what they reference
	n.next = n.list.head
	n.list.head = n
}

// abandonJoin runs while a Join unwinds from a panic (or runtime.Goexit) in
// a (phase 1) or in b run inline (phase 2). In phase 1, b's node is either
// still in w's deque, where it is removed unrun, or was stolen, and then the
// panic waits until the thief has finished it. The node is not recycled.
func (w *Worker) abandonJoin(n *node, phase int, recovered any) {
	pe := capturePanic(recovered)
	if phase == 1 && !w.unpushOnly(n) && recovered != nil {
		w.helpUntilDone(n)
	}
	if recovered == nil {
		return // runtime.Goexit: let it continue unwinding
	}
	panic(pe)
}
