package forkjoin

import (
	"sync"
	"sync/atomic"
)

// Typed fire-and-forget submissions: the node that ExecuteTaskPriority
// (package task's Execute and ExecutePriority) queues, and its recycling.
//
// Execute's closure goes into its submission slot as it is (injector.go);
// a typed action cannot, since a slot is untyped and boxing the action in
// an interface would allocate for any action that is not a pointer. So the
// action is stored unboxed in an execTask node, which the slot carries as
// it carries a Submit's cell. The submitter is any goroutine and the node
// is finished by whichever worker takes it, so a per-worker free list (as
// spawn nodes and cells have) cannot serve: the nodes go back to a free
// list per pool and action type, a sync.Pool, which keeps its items per P
// and so costs no shared write when the submitter and the runner share a
// P. With that, a stream of typed Executes allocates nothing once warm
// (task's TestExecuteSteadyStateAllocatesNothing, for a pointer action and
// a two-word value).
//
// # Invariant
//
// An execTask node is reused only when no goroutine can read it but the
// one that took it from the free list. The argument, step by step:
//
//   - From the free list's Get to its submitAt, only the submitter holds
//     the node. If submitAt rejects it (closed pool, full bounded queue)
//     the node was never published, and the submitter puts it back.
//   - Accepted, the node is published by the store of its slot's node
//     pointer (injector.push) and read by one worker: the one whose take
//     popped that slot, under the injector's lock. pop replaces the slot's
//     pointer with takenMark before the lock is released, so the queue no
//     longer holds the node; a worker that loaded the slot without the
//     lock (mayBeReady) only compares the pointer with nil and never
//     dereferences it. Root nodes are never on a deque or the handoff
//     list, and an execTask is solo (nobody joins it: no Future, no
//     claim), so no other goroutine ever learns its address.
//   - The worker that took the node reads its fields in Worker.run before
//     execute, and nothing after it. execute copies the action out and
//     puts the node back on the free list before the action starts, so a
//     panic, a runtime.Goexit or a nested Execute of the same type cannot
//     leave it half released; from the Put on, the runner never touches the
//     node again.
//   - sync.Pool orders a Put before the Get that returns the same item
//     (documented in package sync), so every write of the runner and of
//     the previous submitter happens before the next submitter's writes.
//
// A node's other fields need no reset: its latch, thief, comp and claimed
// are never used for a solo root (nobody waits on it, it is never stolen,
// it runs in no cancellation scope, nobody claims it), group is written by
// every push and root by every submitAt.
//
// The free lists of a pool are found by the action's type in a small
// array on the Pool (execLists), filled once per type with a CAS and read
// with one atomic load per entry scanned; beyond cacheSlots types, nodes
// are allocated and left to the GC, as cacheOf does for forks.

// execTask is a typed action submitted by ExecuteTaskPriority, unboxed.
type execTask[A spawnAction] struct {
	node
	task A
	list *execTaskList[A] // the free list the node goes back to; nil: none (too many types)
}

// execTaskList is a pool's free list of execTask nodes of one action type.
type execTaskList[A spawnAction] struct {
	free sync.Pool
}

// execListEntry is one filled entry of Pool.execLists: a *execTaskList[A]
// for some A. An entry never changes once filled.
type execListEntry struct{ list any }

// execListOf returns p's free list for action type A, creating it on first
// use, or nil if every entry holds another type.
func execListOf[A spawnAction](p *Pool) *execTaskList[A] {
	for i := range p.execLists {
		e := p.execLists[i].Load()
		if e == nil {
			l := &execTaskList[A]{}
			if p.execLists[i].CompareAndSwap(nil, &execListEntry{l}) {
				return l
			}
			e = p.execLists[i].Load() // another type's, or A's, filled meanwhile
		}
		if l, ok := e.list.(*execTaskList[A]); ok {
			return l
		}
	}
	return nil
}

// execLists is the array of free lists execListOf searches; see the top
// of this file.
type execLists [cacheSlots]atomic.Pointer[execListEntry]

// takeExecTask returns a node of p's free list for A, or a new one.
func takeExecTask[A spawnAction](p *Pool) *execTask[A] {
	l := execListOf[A](p)
	if l != nil {
		if e, _ := l.free.Get().(*execTask[A]); e != nil {
			return e
		}
	}
	e := &execTask[A]{list: l}
	e.job = e
	e.solo = true
	return e
}

// release clears e's action and puts e back on its free list; after it,
// the caller must not touch e.
func (e *execTask[A]) release() {
	var zero A
	e.task = zero
	if e.list != nil {
		e.list.free.Put(e)
	}
}

// executeTask queues a on p at priority prio, in a recycled node; the body
// of ExecuteTaskPriority (typed.go). a is not a nil interface and p is not
// nil.
func executeTask[A spawnAction](p *Pool, prio Priority, a A) error {
	prio.level() // panics on a bad priority before a node is taken
	e := takeExecTask[A](p)
	e.task = a
	if err := p.submitAt(nil, &e.node, nil, prio, false); err != nil {
		e.release() // never published: still the submitter's alone
		return err
	}
	return nil
}

// execute runs e's action on w, which took it from the submission queue.
// The node goes back to its free list first (see the top of this file);
// a panic goes to the pool's panic handler, as an Execute's does, and the
// task counts as finished for Close (execDone) either way.
func (e *execTask[A]) execute(w *Worker) {
	a := e.task
	e.release()
	p := w.pool // the pool whose queue e came from: only its workers take from it
	finished := false
	defer func() {
		if !finished {
			p.reportPanic(CapturePanic(recover()))
			p.execDone(w)
		}
	}()
	a.Compute(w)
	finished = true
	p.execDone(w)
}
