package forkjoin

// The typed layer: the exported entry points that package task is built on.
//
// Users write package task (task.Fork, task.InvokeBoth, task.Submit,
// task.Execute, task.Spawn, with task.RecursiveTask and
// task.RecursiveAction as the named task interfaces). These functions are
// exported only because Go has no friend packages: a typed task's node
// (taskCell, spawnNode, execTask) lives with the worker's or the pool's
// unexported state, and package task can reach it through nothing but an
// exported function of this one. They name no task interface of their own:
// the constraint is spelled out ("any type with a Compute(w *Worker)
// method"), and package task's RecursiveTask and RecursiveAction satisfy
// it. docs/design.md, "Why forkjoin still exports the typed layer", gives
// the alternatives and why they were rejected.
//
// Invariant: calling these through package task costs what calling them
// directly does. ForkTask, SubmitTaskPriority and ExecuteTaskPriority are
// calls into the mechanism's own file (forkCell in future.go, submitTask in
// submit.go, executeTask in exectask.go); JoinTasks and SpawnTask are the
// fast paths themselves, written out here rather than behind a wrapper
// because a generic wrapper around a non-inlinable generic body costs a
// call of its own (the wrapper's instantiation goes over the inlining
// budget: go build -gcflags=-m=2). Their cells, nodes and slow paths are
// those of join.go (taskCell, awaitStolen, abandonJoin: Join's invariants)
// and spawn.go (spawnNode and its recycling). task.InvokeBoth and
// task.Spawn are these functions and nothing more, so that they inline to
// them; scripts/check-escape checks that JoinTasks, task.InvokeBoth and
// task.Spawn inline, and task's BenchmarkFib30 measures the fork paths.

// ForkTask is Fork for a typed task, stored unboxed in a cell that w
// recycles. Users call task.Fork (task.ForkAction for an action), which is
// this function.
//
// It must stay within the inlining budget, so that the Future it returns
// can live on the caller's stack (TestForkAllocatesNothing).
func ForkTask[T any, C interface{ Compute(w *Worker) T }](w *Worker, c C) *Future[T] {
	return &Future[T]{c: forkCell[T](w, c)}
}

// JoinTasks is Join for two typed tasks, b stored unboxed in a recycled
// node: the runtime's cheapest fork, with no allocation when b is not
// stolen. Users call task.InvokeBoth (task.InvokeBothActions for actions),
// which is this function and inlines to it.
//
// The fork and the join are written out so that their fast paths (a
// private push, a private pop) inline, and an un-stolen JoinTasks makes no
// call beyond a.Compute, b.Compute and its deferred function. A panic or
// runtime.Goexit in a or b is handled as in Join.
func JoinTasks[A, B any, CA interface{ Compute(w *Worker) A }, CB interface{ Compute(w *Worker) B }](w *Worker, a CA, b CB) (ra A, rb B) {
	if any(a) == nil || any(b) == nil {
		panicNilTask("JoinTasks")
	}
	n := takeCell[B, CB](w, "JoinTasks")
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
		phase = 0
		n.releaseUnstolen()
		return ra, rb
	}
	if rb, phase = n.awaitStolen(w); phase != 0 {
		phase = 0
		panic(n.err)
	}
	phase = 0
	n.release()
	return ra, rb
}

// SubmitTaskPriority is SubmitPriority for a typed task: it queues c at
// priority prio and returns its Future; a nil p means Default(). Users call
// task.Submit and task.SubmitPriority (task.SubmitAction for an action).
func SubmitTaskPriority[T any, C interface{ Compute(w *Worker) T }](p *Pool, prio Priority, c C) *Future[T] {
	if any(c) == nil {
		panicNilTask("SubmitTaskPriority")
	}
	return submitTask[T](p, prio, c)
}

// ExecuteTaskPriority is ExecutePriority for a typed action: it queues a
// at priority prio and returns without waiting, stored unboxed in a node
// that the pool recycles, so that a stream of them allocates nothing once
// warm (exectask.go). It returns ErrClosed once Close has been called and
// ErrQueueFull when a bounded queue (WithMaxQueued) is full; a panic in a
// goes to the pool's panic handler, as an Execute's does. A nil p means
// Default(). Users call task.Execute and task.ExecutePriority.
func ExecuteTaskPriority[A interface{ Compute(w *Worker) }](p *Pool, prio Priority, a A) error {
	if any(a) == nil {
		panicNilTask("ExecuteTaskPriority")
	}
	return executeTask(orDefault(p, "ExecuteTaskPriority"), prio, a)
}

// SpawnTask is Scope.Spawn for a typed task, stored unboxed in a node that
// w recycles: a runs on some worker of w's pool before s's RunScope
// returns, and a panic, a cancellation of w's computation and
// runtime.Goexit are handled as in Spawn. Users call task.Spawn.
func SpawnTask[A interface{ Compute(w *Worker) }](s *Scope, w *Worker, a A) {
	if s == nil {
		panic("forkjoin: SpawnTask called with a nil *Scope")
	}
	if w == nil {
		panicNilWorker("SpawnTask")
	}
	if any(a) == nil {
		panicNilTask("SpawnTask")
	}
	spawn(s, w, a, "SpawnTask")
}
