package forkjoin

import (
	"sync/atomic"
	"unsafe"
)

// Spawned tasks: the block of tasks that Scope.Spawn and SpawnTask push,
// and its recycling.
//
// # Blocks
//
// A spawn node (spawnNode) holds up to spawnBlock tasks of one type and
// one scope, oldest first: it is one deque element for all of them. On a
// LIFO pool a spawn appends its task to the newest element of the worker's
// deque when that element is a spawn node of the same type, scope and
// computation with room, private (no thief can see it), and no thief has
// asked for work (Deque.PeekPrivate); otherwise it pushes a new node. Every
// worker that takes a node (the owner's pop, a thief's steal, a waiting
// worker's help) runs one task of it, the newest (execute): it takes the
// task out, pushes the node with the others back on its own deque, and
// runs the task. So:
//
//   - A flat loop of spawns costs one deque push per spawnBlock spawns,
//     and a thief takes up to spawnBlock tasks with one steal and runs them
//     from its own deque, where the spawner's lines are not: the tasks
//     cross between cores once per block, not once each
//     (TestSpawnFillsBlocks).
//   - Order: a worker runs the newest spawned task first, as before: the
//     newest task of the newest element; a task that a running task spawns
//     goes above the tasks waiting in its block (appended to the block, or
//     in a node pushed after it). On a FIFO pool a node holds one ticket
//     and is never appended to: the tickets keep their order on the deque
//     and the scope's queue keeps the order of the tasks (see Scope).
//   - No hidden work: a task that waits is always in a deque element, and
//     an element is public or private by the split deque's rules, which
//     serve a thief's request at the owner's next push or pop. A spawn that
//     finds a request pending pushes (and so publishes), it does not append;
//     running a task from a node first pushes the rest back, which
//     publishes them when a thief asked; so a block is never a loop that
//     hides its other tasks behind a long one
//     (TestScopeSpawnLoopLeavesAreStealable).
//   - Exactly once: a node is in at most one place at a time (a deque, or
//     the hands of the one worker that took it), and only the worker that
//     holds it changes it: appending needs it private to the appender's
//     deque, taking a task needs it taken off a deque. Each task slot is
//     filled once and taken once.
//
// # Recycling invariant
//
// A spawn node is reused only when no goroutine but its owner can read it.
// The owner is the worker whose free list the node came from; the node
// goes back to that list once its last task has been taken out, and the
// owner takes it again for a later spawn. The argument, step by step:
//
//   - Nobody waits for one spawned task (the scope's counter and latch
//     track them all), so no node outlives its run in a handle, a waiter
//     list or a hint: the node's latch is never used, and waitUntil is
//     never given a spawn node as its hint.
//   - A thief reads a node only after its CAS of the deque's top took it
//     (internal/deque), and a worker that took a node executes it, or
//     hands it off to be executed, once (handoff.go). Worker.run reads the
//     node's fields before execute and nothing after it; execute takes a
//     task and the scope out of the node and then either pushes the node
//     back (and no longer touches it: another worker may take it at once)
//     or, when it took the last task, releases it, before the task runs.
//     A stale pointer to the node left in a deque's ring slot is never
//     dereferenced: a thief that read it there fails its CAS (the index
//     has been taken).
//   - A node released by its owner goes back to the owner's free list with
//     plain stores: only the owner's goroutine touches that list.
//   - A node released by another worker goes back through the list's
//     returned stack: the releaser writes the node's link and then CASes
//     the stack's head; the owner takes the whole stack with one Swap. The
//     CAS and the Swap are the synchronization: everything the releaser
//     and earlier holders did to the node happens before the owner's next
//     use of it (each hand-over between holders is a deque push and take,
//     which orders them in turn). Only whole-stack takes happen, so the
//     stack has no ABA problem.
//
// A node's thief field keeps the last thief's pointer: nobody reads the
// thief of a spawn node (it serves waitUntil's hint, see the first point).
//
// A panic in the task, runtime.Goexit or a cancellation cannot leave a
// node half done: the node is pushed back or released before the task
// starts.
//
// While its worker is busy or only briefly idle, a free list keeps every
// node the worker had in use at once, so that the next loop of the same
// size allocates nothing (TestSpawnListKeptOverShortSleep); once the
// worker has slept idleTrimDelay with nothing to run, it trims its lists
// to spawnListCap nodes (trim, called from sleepIdle in cache.go), so that
// one burst of a million spawns does not leave its nodes on the list, for
// every later collection to scan, for the life of the pool
// (TestSpawnListIsBounded). A hard cap instead made a flat loop of 1M
// spawns allocate its nodes every time, several times slower per spawn,
// and so did a trim at every sleep on 2 workers (measured in
// docs/design.md, "Irregular work: Scope").

// spawnAction is the shape of a typed spawned task (package task's
// RecursiveAction has it).
type spawnAction interface{ Compute(w *Worker) }

// funcAction adapts a closure to spawnAction, for Scope.Spawn and for
// Execute (a submission slot holds a spawnAction: exectask.go).
type funcAction func(*Worker)

func (f funcAction) Compute(w *Worker) { f(w) }

// spawnBlock is the most tasks one spawn node holds; a node of a task type
// larger than 16 bytes holds fewer, about spawnBlockBytes of them (at
// least one), so that a block of large tasks stays small.
const (
	spawnBlock      = 32
	spawnBlockBytes = spawnBlock * 16
)

// blockLen returns the number of tasks of type A a spawn node holds.
func blockLen[A spawnAction]() int {
	var a A
	size := int(unsafe.Sizeof(a))
	return max(1, min(spawnBlock, spawnBlockBytes/max(size, 1)))
}

// spawnNode is a block of spawned tasks of one scope, stored unboxed, and
// the node the deques carry for them. On a FIFO pool it holds one zero
// task: the node is a ticket for the scope's oldest task (see Scope).
type spawnNode[A spawnAction] struct {
	node
	scope *Scope
	n     int           // the number of tasks waiting
	tasks []A           // tasks[:n] wait, oldest first, tasks[n:] are zero; len(tasks) is blockLen[A]()
	list  *spawnList[A] // the free list the node came from and goes back to
	next  *spawnNode[A] // link on list.free (owner only) or list.returned
}

// spawnListCap is what an idle worker keeps of a free list of spawn nodes:
// as many as hold 4,096 tasks (for a closure, a node and its tasks take
// about 400 bytes: 50 KB per worker and task type).
const spawnListCap = 4096 / spawnBlock

// spawnList is a worker's free list of spawn nodes of one task type.
type spawnList[A spawnAction] struct {
	owner *Worker       // set once, before any node of the list is pushed
	free  *spawnNode[A] // owner only
	nfree int           // owner only: the length of free
	_     [128]byte     // returned's line, which other workers write, off the owner's
	// returned holds nodes that other workers emptied, newest first: they
	// push with a CAS, the owner takes them all with a Swap.
	returned atomic.Pointer[spawnNode[A]]
	// nreturned counts the nodes pushed on returned since the owner last
	// took it, so that trim knows when to look. A push that races the
	// owner's take may be counted on either side of the reset: the count
	// is off by at most one per racing releaser.
	nreturned atomic.Int32
	_         [128]byte
}

// spawn counts a spawn of a into s from a task running on w and puts a in
// a spawn node on w's deque (see Blocks). The caller has checked s, w and
// a for nil; api names it in the misuse panic.
func spawn[A spawnAction](s *Scope, w *Worker, a A, api string) {
	w.checkCanceled()
	if !s.count(w) {
		panic("forkjoin: " + api + " called after its RunScope returned")
	}
	if s.fifo != nil {
		fn, ok := any(a).(funcAction) // Scope.Spawn's closure as it is: a method value would allocate
		if !ok {
			fn = a.Compute
		}
		s.fifo.push(fn) // the node is a ticket for the oldest task
		t := cacheOf[spawnList[A]](w).take(w)
		t.scope = s
		t.n = 1
		if !w.pushSpawned(&t.node, s, s.groupOn(w)) {
			w.pushPublishing(&t.node)
		}
		return
	}
	if x := w.deque.PeekPrivate(); x != nil && x.spawn {
		// Every node of s on w's deque carries the same computation
		// (pushSpawned), so the scope test is all that appending needs.
		if t, ok := x.job.(*spawnNode[A]); ok && t.scope == s && t.n < len(t.tasks) {
			// Plain: t is private to w's deque, which no other goroutine reads.
			t.tasks[t.n] = a
			t.n++
			w.own.forks++
			return
		}
	}
	t := cacheOf[spawnList[A]](w).take(w)
	t.scope = s
	t.tasks[0] = a
	t.n = 1
	t.spawn = true // appendable (never on a FIFO pool, whose tickets keep their order)
	if !w.pushSpawned(&t.node, s, s.groupOn(w)) {
		w.pushPublishing(&t.node)
	}
}

// pushSpawned is pushPrivate for n, a spawn node of s: n carries s's
// computation rather than the spawner's, under s's number for it on w's
// pool, group (scope.go, "Whose computation"). The callers spell the
// push as the hot paths do (see push), so that it inlines.
func (w *Worker) pushSpawned(n *node, s *Scope, group uint64) bool {
	n.comp, n.group = s.comp, group // group is s.groupOn(w)
	w.own.forks++
	return w.deque.PushPrivate(n)
}

// take returns a node from the free list, or from refill. Owner only.
func (l *spawnList[A]) take(w *Worker) *spawnNode[A] {
	t := l.free
	if t == nil {
		t = l.refill(w)
	}
	l.free = t.next
	if l.nfree > 0 {
		l.nfree--
	}
	t.next = nil
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
			// The caller takes t and moves the list head to t.next. The
			// count of the new free list is an estimate (see nreturned);
			// trim counts exactly when it matters.
			l.nfree = max(int(l.nreturned.Swap(0)), 1)
			return t
		}
	}
	t := &spawnNode[A]{list: l, tasks: make([]A, blockLen[A]())}
	t.job = t
	return t
}

// trim cuts the list down to spawnListCap nodes, the others going to the
// GC; the owner calls it when it has slept idleTrimDelay with nothing to
// run. It looks at the nodes only after a burst: when the counts stay within the
// cap it costs two loads.
func (l *spawnList[A]) trim() {
	if !l.overCap() {
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

// overCap reports whether trim would drop nodes. Owner only.
func (l *spawnList[A]) overCap() bool {
	return l.nfree+int(l.nreturned.Load()) > spawnListCap
}

// execute runs the newest task of the node, w having taken the node off a
// deque: it takes the task and the scope out, pushes the node with the
// remaining tasks back on w's deque or, if none remain, releases it, and
// then runs the task (on a FIFO pool, the scope's oldest task) in the
// scope.
func (t *spawnNode[A]) execute(w *Worker) {
	s := t.scope
	if s.fifo != nil {
		t.n = 0
		t.release(w)
		runSpawned(s, w, funcAction(s.fifo.pop()))
		return
	}
	var zero A
	t.n--
	a := t.tasks[t.n]
	t.tasks[t.n] = zero // let the GC have it once it has run
	if t.n > 0 {
		// The rest go back below whatever a spawns, still in s's
		// computation.
		if !w.pushSpawned(&t.node, s, s.groupOn(w)) {
			w.pushPublishing(&t.node)
		}
		w.own.forks-- // a push back, not a fork
	} else {
		t.release(w)
	}
	runSpawned(s, w, a)
}

// release puts t, holding no task, back on its owner's free list, cleared;
// w is the worker that emptied it. t must not be touched afterwards (see
// the invariant).
func (t *spawnNode[A]) release(w *Worker) {
	t.scope = nil // let the GC have it
	t.spawn = false
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
	if w.retired.scope != s {
		w.flushRetired() // another scope's: before a task that may wait for it (scope.go)
	}
	outer := w.enterScope(s)
	finished := false
	defer func() {
		// The node's own latch stays unset: nobody waits for one spawned task.
		if !finished {
			s.recordPanic(CapturePanic(recover()))
			// At once, and the batch too: on a Goexit the goroutine
			// unwinds on through user code (deferred calls of the tasks
			// below, the worker's exit and start hooks) that may wait
			// until s's RunScope returns. A batch held meanwhile kept
			// the count above zero for good
			// (TestRev36GoexitInSpawnedTaskFlushesBatch hung on 55b483e).
			// A batch is held only while w runs tasks of its scope back
			// to back, so a Goexit with a batch held starts in a task
			// that runSpawned runs: this flush is the only one needed.
			w.flushRetired()
			s.finish(w.leaveScope(outer))
			return
		}
		w.retireTask(s, w.leaveScope(outer))
	}()
	w.checkCanceled()
	a.Compute(w)
	finished = true
}
