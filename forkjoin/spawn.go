package forkjoin

import "sync/atomic"

// Spawned tasks: the node that Scope.Spawn and SpawnTask push, and its
// recycling.
//
// # Invariant
//
// A spawn node is reused only when no goroutine but its owner can read it.
// The owner is the worker whose free list the node came from; the node
// goes back to that list once it has run, and the owner takes it again
// for a later spawn. The argument, step by step:
//
//   - Nobody waits for one spawned task (the scope's counter and latch
//     track them all), so no node outlives its run in a handle, a waiter
//     list or a hint: the node's latch is never used, and waitUntil is
//     never given a spawn node as its hint.
//   - A thief reads a node only after its CAS of the deque's top took it
//     (internal/deque), and a worker that took a node runs it, or hands it
//     off to be run, once (handoff.go). Worker.run reads the node's fields
//     before execute and nothing after it; execute copies the scope and
//     the task out of the node first and then releases it, so from that
//     point the node is garbage to everyone but the list it goes back to.
//     A stale pointer to it left in a deque's ring slot is never
//     dereferenced: a thief that read it there fails its CAS (the index
//     has been taken).
//   - A node run by its owner goes back to the owner's free list with
//     plain stores: only the owner's goroutine touches that list.
//   - A node run by another worker goes back through the list's returned
//     stack: the runner writes the node's link and then CASes the stack's
//     head; the owner takes the whole stack with one Swap. The CAS and the
//     Swap are the synchronization: everything the runner did to the node
//     happens before the owner's next use of it. Only whole-stack takes
//     happen, so the stack has no ABA problem.
//
// A node's thief field keeps the last thief's pointer: nobody reads the
// thief of a spawn node (it serves waitUntil's hint, see the first point).
//
// A panic in the task, runtime.Goexit or a cancellation cannot leave a
// node half released: the node is released before the task starts.
//
// While its worker is busy, a free list keeps every node the worker had
// spawned and unfinished at once, so that the next loop of the same size
// allocates nothing; when the worker runs out of work and goes to sleep, it
// trims its lists to spawnListCap nodes (trim, called from the idle loop),
// so that one burst of a million spawns does not leave a hundred megabytes
// on the list, for every later collection to scan, for the life of the
// pool (TestSpawnListIsBounded). A hard cap instead made a flat loop of 1M
// spawns allocate its nodes every time, several times slower per spawn
// (measured in docs/design.md, "Irregular work: Scope").

// spawnAction is the shape of a typed spawned task (package task's
// RecursiveAction has it).
type spawnAction interface{ Compute(w *Worker) }

// funcAction adapts a closure to spawnAction, for Scope.Spawn and for
// Execute (a submission slot holds a spawnAction: exectask.go).
type funcAction func(*Worker)

func (f funcAction) Compute(w *Worker) { f(w) }

// spawnNode is one spawned task: the node the deques carry, its scope and
// its task, stored unboxed. On a FIFO pool the task is zero: the node is a
// ticket for the scope's oldest task (see Scope).
type spawnNode[A spawnAction] struct {
	node
	scope *Scope
	task  A
	list  *spawnList[A] // the free list the node came from and goes back to
	next  *spawnNode[A] // link on list.free (owner only) or list.returned
}

// spawnListCap is what an idle worker keeps of a free list of spawn nodes:
// 4,096 nodes of about 100 bytes, 400 KB per worker and task type.
const spawnListCap = 4096

// spawnList is a worker's free list of spawn nodes of one task type.
type spawnList[A spawnAction] struct {
	owner *Worker       // set once, before any node of the list is pushed
	free  *spawnNode[A] // owner only
	nfree int           // owner only: the length of free
	// returned holds nodes that other workers ran, newest first: they push
	// with a CAS, the owner takes them all with a Swap.
	returned atomic.Pointer[spawnNode[A]]
	// nreturned counts the nodes pushed on returned since the owner last
	// took it, so that trim knows when to look. A push that races the
	// owner's take may be counted on either side of the reset: the count
	// is off by at most one per racing runner.
	nreturned atomic.Int32
}

// takeSpawnNode counts a spawn into s from a task running on w and
// returns a node for it, from w's free list or new, with its scope set.
// The caller has checked s, w and the task for nil; it stores the task (or
// queues it, on a FIFO pool) and pushes the node.
func takeSpawnNode[A spawnAction](s *Scope, w *Worker, api string) *spawnNode[A] {
	w.checkCanceled()
	if !s.count(w) {
		panic("forkjoin: " + api + " called after its RunScope returned")
	}
	l := cacheOf[spawnList[A]](w)
	t := l.free
	if t == nil {
		t = l.refill(w)
	}
	l.free = t.next
	if l.nfree > 0 {
		l.nfree--
	}
	t.next = nil
	t.scope = s
	return t
}

// refill returns a node when the free list is empty: the first of the
// nodes other workers returned, the rest becoming the free list, or a new
// node.
func (l *spawnList[A]) refill(w *Worker) *spawnNode[A] {
	if l.owner == nil {
		l.owner = w // a new list: nobody else has seen it
	}
	if l.returned.Load() != nil { // a load first: an empty stack costs no locked instruction
		if t := l.returned.Swap(nil); t != nil {
			l.nreturned.Store(0)
			// The caller takes t and moves the list head to t.next. The
			// count of the new free list is an estimate (see nreturned);
			// trim counts exactly when it matters.
			l.nfree = max(int(l.nreturned.Swap(0)), 1)
			return t
		}
	}
	t := &spawnNode[A]{list: l}
	t.job = t
	return t
}

// trim cuts the list down to spawnListCap nodes, the others going to the
// GC; the owner calls it when it goes to sleep with nothing to run. It
// looks at the nodes only after a burst: when the counts stay within the
// cap it costs two loads.
func (l *spawnList[A]) trim() {
	if l.nfree+int(l.nreturned.Load()) <= spawnListCap {
		return
	}
	if l.returned.Load() != nil {
		r := l.returned.Swap(nil) // the stack is ours: whole-stack take
		l.nreturned.Store(0)
		for r != nil && l.nfree < spawnListCap { // move what fits onto free
			next := r.next
			r.next = l.free
			l.free = r
			l.nfree++
			r = next
		}
	}
	n, last := 1, l.free
	for last != nil && n < spawnListCap {
		last, n = last.next, n+1
	}
	if last != nil {
		last.next = nil
	}
	l.nfree = 0
	for t := l.free; t != nil; t = t.next {
		l.nfree++
	}
}

// execute runs a spawned task: it takes the scope and the task out of the
// node, releases the node, and runs the task (on a FIFO pool, the scope's
// oldest task) in the scope.
func (t *spawnNode[A]) execute(w *Worker) {
	s, a := t.scope, t.task
	t.release(w)
	if s.fifo != nil {
		runSpawned(s, w, funcAction(s.fifo.pop()))
		return
	}
	runSpawned(s, w, a)
}

// release puts t back on its owner's free list, cleared; w is the worker
// that ran it. t must not be touched afterwards (see the invariant).
func (t *spawnNode[A]) release(w *Worker) {
	var zero A
	t.task, t.scope = zero, nil // let the GC have what they hold
	l := t.list
	if l.owner == w {
		t.next = l.free // plain: only the owner touches free
		l.free = t
		l.nfree++
		return
	}
	for {
		h := l.returned.Load()
		t.next = h // plain: nobody can see t until the CAS below succeeds
		if l.returned.CompareAndSwap(h, t) {
			l.nreturned.Add(1)
			return
		}
	}
}

// runSpawned runs a on w as a task of s and retires it from s: a panic
// (or runtime.Goexit) is recorded for RunScope, and the count drops even
// then.
func runSpawned[A spawnAction](s *Scope, w *Worker, a A) {
	outer := w.enterScope(s)
	finished := false
	defer func() {
		if !finished {
			s.recordPanic(CapturePanic(recover()))
		}
		s.finish(w.leaveScope(outer)) // the node's own latch stays unset: nobody waits for one spawned task
	}()
	w.checkCanceled()
	a.Compute(w)
	finished = true
}
