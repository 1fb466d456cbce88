package forkjoin

import "sync/atomic"

// computer is the shape of a typed task: a value whose Compute method runs
// on the worker it is given. It is unexported on purpose: package task's
// RecursiveTask is the one public name for it (typed.go). Forking a
// computer (forkCell, JoinTasks) stores it unboxed in the forked node,
// which is cheaper than forking a closure.
type computer[T any] interface {
	Compute(w *Worker) T
}

// funcTask adapts a closure to computer.
type funcTask[T any] func(*Worker) T

func (f funcTask[T]) Compute(w *Worker) T { return f(w) }

// node is what the deques carry: the header shared by every kind of forked
// or submitted task. It is embedded in its task object (a cell, an exec node, a scope),
// and job points back to that object.
type node struct {
	job   job
	latch latch                  // set when the task has completed and recorded its outcome
	thief atomic.Pointer[Worker] // the worker that stole the node, if any
	comp  *computation           // cancellation scope inherited from the forking task; nil if none
	group uint64                 // the computation the node belongs to (see handoff); written before the node is pushed

	// Submitted (root) tasks only: root marks them, and claimed decides
	// who runs one, since a root may be run by a worker that joins its
	// Future while it still sits in a queue.
	root    bool
	solo    bool // a root that only the worker taking it can run (an Execute): claimed is not used
	spawn   bool // a block of spawned tasks that its deque's owner may append to while it is private (spawn.go)
	claimed atomic.Bool
}

// job is implemented by every object that embeds a node.
type job interface {
	// execute runs the task on w, records its result or panic and sets
	// the node's latch, waking whoever waits. It does not panic. After the
	// latch is set, the executing worker must not touch the node again:
	// the joiner may recycle it at once.
	execute(w *Worker)
}

func (n *node) isDone() bool { return n.latch.probe() }
