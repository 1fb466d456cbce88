package forkjoin

import (
	"reflect"
	"sync"
	"sync/atomic"
)

// Typed fire-and-forget submissions: how ExecuteTaskPriority (package
// task's Execute and ExecutePriority) carries a typed action through the
// submission queue without allocating.
//
// A submission slot holds an Execute's action as a spawnAction interface
// value (injector.go): Pool.Execute's closure as a funcAction, and a typed
// action as itself when its type is pointer-shaped (a pointer, or a struct
// or array of one pointer-shaped element, which Go stores in an interface
// without boxing). Any other action type would be boxed on the heap by the
// conversion, so it goes into the slot inside an execBox instead: a
// pointer to a box is pointer-shaped, and boxes are recycled through a
// free list per pool and action type, a sync.Pool (which keeps its items
// per P). Either way a stream of typed Executes allocates nothing once
// warm (task's TestExecuteSteadyStateAllocatesNothing, for a pointer, a
// one-pointer struct and a two-word struct). The worker that takes the
// slot puts the action in one of its exec nodes, as it does an Execute's
// function, and the worker that runs the node (the taker, or a thief of
// its batch) runs it (submit.go): panic guard, panic handler, execDone.
//
// # Invariant
//
// A box is reused only when no goroutine can read it but the one that took
// it from the free list. The argument, step by step:
//
//   - From the free list's Get to its submitAt, only the submitter holds
//     the box. If submitAt rejects the action (closed pool, full bounded
//     queue) the box was never published, and the submitter puts it back.
//   - Accepted, the box is published by the atomic store of its slot's
//     seq (injector.push), which follows the plain write of the slot's
//     act, and read by one worker: the one whose take popped that slot,
//     under the injector's lock, after loading seq. pop leaves act in the
//     taken slot until the head leaves the block or a worker going to
//     sleep clears it (clearSlots, under the same lock: a write of the
//     slot, not of the box). A taken slot's act is never read again, so
//     that stale pointer is never dereferenced, and nobody else reads act
//     (mayBeReady and find read only seq and the block's links). The
//     taker copies act into one of its exec nodes (execNode), which one
//     worker runs: the taker, or, for a task of a batch, whichever worker
//     pops or steals the node from a ring (takebatch.go). The ring's
//     atomic slot stores and loads, and the take lock a steal holds, order
//     the taker's writes of the node before the runner's reads
//     (TestBatchExecNodesRunAcrossWorkers).
//   - The box's Compute, run by that worker, copies the action out and puts
//     the box back on the free list before the action starts, so a panic,
//     a runtime.Goexit or a nested Execute of the same type cannot leave it
//     half released; from the Put on, the worker never dereferences the
//     box again (its exec node keeps the pointer, unread, until the node
//     completes and clears it).
//   - sync.Pool orders a Put before the Get that returns the same item
//     (documented in package sync), so every write of the worker and of the
//     previous submitter happens before the next submitter's writes.
//
// The free lists of a pool are found by the action's type in a small array
// on the Pool (execLists), each entry filled once with a CAS and read with
// one atomic load; the entry also caches whether the type is
// pointer-shaped (decided once, with package reflect). Beyond cacheSlots
// action types, boxes are allocated and left to the GC, as cacheOf does for
// forks.

// execBox carries a typed action that is not pointer-shaped through a
// submission slot.
type execBox[A spawnAction] struct {
	task A
	list *execTaskList[A] // the free list the box goes back to; nil: none (too many types)
}

// Compute runs the boxed action on w, after putting the box back on its
// free list (see the top of this file).
func (b *execBox[A]) Compute(w *Worker) {
	a := b.task
	var zero A
	b.task = zero
	if b.list != nil {
		b.list.free.Put(b)
	}
	a.Compute(w)
}

// execTaskList is a pool's free list of boxes for one action type.
type execTaskList[A spawnAction] struct {
	direct bool // A is pointer-shaped: it goes into the slot unboxed; set before the entry's CAS publishes the list, read-only after
	free   sync.Pool
}

// execListEntry is one filled entry of Pool.execLists: a *execTaskList[A]
// for some A. An entry never changes once filled.
type execListEntry struct{ list any }

// execLists is the array of free lists execListOf searches; see the top
// of this file.
type execLists [cacheSlots]atomic.Pointer[execListEntry]

// execListOf returns p's free list for action type A, creating it on first
// use, or nil if every entry holds another type.
func execListOf[A spawnAction](p *Pool) *execTaskList[A] {
	for i := range p.execLists {
		e := p.execLists[i].Load()
		if e == nil {
			l := &execTaskList[A]{direct: pointerShaped(reflect.TypeFor[A]())}
			if p.execLists[i].CompareAndSwap(nil, &execListEntry{l}) {
				return l
			}
			e = p.execLists[i].Load() // filled meanwhile, for A or another type
		}
		if l, ok := e.list.(*execTaskList[A]); ok {
			return l
		}
	}
	return nil
}

// pointerShaped reports whether a value of type t is stored in an
// interface without being boxed: Go's rule (a pointer, map, channel,
// function or unsafe.Pointer, or a struct of one such field or an array
// of one such element). Getting it wrong would cost an allocation, not
// correctness; TestExecuteSteadyStateAllocatesNothing measures it.
func pointerShaped(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Struct:
		return t.NumField() == 1 && pointerShaped(t.Field(0).Type)
	case reflect.Array:
		return t.Len() == 1 && pointerShaped(t.Elem())
	}
	return false
}

// executeTask queues a on p at priority prio, unboxed or in a recycled box;
// the body of ExecuteTaskPriority (typed.go). a is not a nil interface and
// p is not nil.
func executeTask[A spawnAction](p *Pool, prio Priority, a A) error {
	l := execListOf[A](p)
	if l != nil && l.direct {
		return p.submitAt(nil, nil, a, prio, false)
	}
	b, _ := l.get().(*execBox[A])
	if b == nil {
		b = &execBox[A]{list: l}
	}
	b.task = a
	err := p.submitAt(nil, nil, b, prio, false)
	if err != nil {
		var zero A
		b.task = zero
		l.put(b) // never published: still the submitter's alone
	}
	return err
}

// get takes a box from l, nil if l is nil or empty.
func (l *execTaskList[A]) get() any {
	if l == nil {
		return nil
	}
	return l.free.Get()
}

// put returns b to l, if l is not nil.
func (l *execTaskList[A]) put(b *execBox[A]) {
	if l != nil {
		l.free.Put(b)
	}
}
