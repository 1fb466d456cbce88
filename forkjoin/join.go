package forkjoin

// Join runs a and b, potentially in parallel, and returns both results. It
// forks b, runs a on the calling worker, then joins b: if nobody stole b it
// runs inline, as a plain call; if b was stolen the worker helps (runs other
// tasks) until b completes. If a or b panics, Join waits until the other
// has finished or is known never to start, then re-panics with a
// *PanicError (a's if both panicked): when a panics, the tasks a forked and
// did not join run first (they are a's work, forked after b), then b is
// removed unrun if no other worker has taken it, and waited for (helping)
// if one has. If a calls runtime.Goexit instead, the same happens while
// the goroutine unwinds: b does not run on after the Join is gone
// (TestGoexitWaitsForStolenWork). So an un-started b never runs once a
// has panicked, as Java's invokeAll cancels (rayon's join runs b anyway).
//
// Join hands out no handle, so its node is recycled: after warm-up it
// allocates nothing beyond the closure b itself when b captures variables
// (it escapes because another worker may run it). JoinTasks (typed.go;
// task.InvokeBoth for users) avoids even that.
func Join[A, B any](w *Worker, a func(*Worker) A, b func(*Worker) B) (ra A, rb B) {
	if a == nil || b == nil {
		panic("forkjoin: Join called with a nil function")
	}
	n := takeCell[B, funcTask[B]](w, "Join")
	n.task = b
	w.push(&n.node)
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

// awaitStolen waits, helping, for a stolen cell of Join or JoinTasks
// (typed.go). It returns the result, or a non-zero phase if the task
// panicked (its *PanicError is in n.err).
func (n *taskCell[T, C]) awaitStolen(w *Worker) (T, int) {
	w.waitUntil(&n.latch, &n.node)
	if n.err != nil {
		return n.result, 1 // n is dropped, not recycled
	}
	return n.result, 0
}

// abandonJoin runs while a Join unwinds from a panic (or runtime.Goexit) in
// a (phase 1) or in b run inline (phase 2); see Join for what happens to b.
// b's node is not recycled.
func (w *Worker) abandonJoin(n *node, phase int, recovered any) {
	pe := CapturePanic(recovered)
	if phase == 1 {
		w.settleAbandoned(n)
	}
	if recovered != nil {
		panic(pe)
	} // else runtime.Goexit: it goes on unwinding, b settled
}

// settleAbandoned makes sure that n, the fork of a Join whose a did not
// return, will not run after the Join's frame has gone: it runs the tasks
// a forked after n and did not join (a's own work), then removes n unrun
// if it is still on w's deque, and otherwise (stolen) waits, helping,
// until the thief has finished it. It does so whether a panicked or called
// runtime.Goexit: before, a Goexit left a stolen n running, and Invoke
// returned ErrGoexit while a task of its computation still ran
// (TestGoexitWaitsForStolenWork). n may have completed meanwhile (a task
// run here joined it, before a nested Goexit: see untilSettled), hence the
// check first.
//
// The wait helps n's computation only, as every join does (untilSettled
// sets it: n's node holds the Join's own).
func (w *Worker) settleAbandoned(n *node) {
	w.untilSettled(n.comp, n.group, func() {
		if !n.isDone() && !w.unpushAfter(nil, n) {
			w.waitUntil(&n.latch, n) // stolen: wait for the thief
		}
	})
}

// untilSettled calls settle, a wait on w of a goroutine that may be
// unwinding from runtime.Goexit (a Join's, a scope's, a canceled root's,
// a Broadcast's or a foreign wait's), until a call returns. A task that
// the wait runs meanwhile may call runtime.Goexit in turn: Go lets a
// deferred call start a second Goexit, which takes over the unwinding,
// and that unwinds the wait too; the deferred call below then waits
// again, so that no depth of nested Goexits leaves the awaited work
// running after the frame that waits for it (TestNestedGoexitStillWaits).
// A panic cannot end the wait early: every task the wait runs recovers
// its own. Once the wait has returned, a Goexit that unwound it goes on
// unwinding past untilSettled's caller, so what must follow the wait
// belongs in a deferred call (TestCanceledSettleSurvivesGoexit).
//
// Before every call w's computation is set to comp and group, the
// waiter's. After a Goexit it is stale: Worker.run sets it for each task
// it runs and restores it when the task returns, which a Goexit skips, so
// w still had the computation of the task that called Goexit, possibly
// another one (a task run in waitForeign), and the wait ran that
// computation's tasks on the unwinding stack
// (TestGoexitSettleRunsOnlyItsComputation).
func (w *Worker) untilSettled(comp *computation, group uint64, settle func()) {
	settled := false
	defer func() {
		if !settled { // a task run by settle called runtime.Goexit
			w.untilSettled(comp, group, settle)
		}
	}()
	w.comp, w.group = comp, group
	settle()
	settled = true
}
