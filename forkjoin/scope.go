package forkjoin

import (
	"sync"
	"sync/atomic"
)

// Scope is a set of tasks spawned dynamically, any number of times and from
// any of them, that completes when all of them have. It is the shape for
// irregular work whose task count is not known in advance (tree and graph
// traversals, work lists), where pairwise Join does not fit.
//
// On a LIFO pool a worker runs the newest spawned task first, as it does
// its forks; on a FIFO pool the spawned tasks of one scope start oldest
// first (rayon's scope_fifo): each spawn pushes a ticket on the worker's
// deque, and whichever ticket runs takes the scope's oldest task. Nested
// scopes finish before the tasks of their parent scope that wait (the
// waiting worker takes its newest ticket, which belongs to the innermost
// scope).
type Scope struct {
	done    latch                      // set when pending reaches zero
	pending atomic.Int64               // see "Counting" below
	panic   atomic.Pointer[PanicError] // the first panic, re-raised by RunScope
	fifo    *scopeQueue                // the spawned tasks in order, on a FIFO pool; nil on a LIFO one; set before the body runs

	// The computation RunScope was called in, which every spawned task
	// of the scope belongs to, whichever task spawns it (see "Whose
	// computation"). Written before the body runs, read-only after.
	comp  *computation
	group uint64
	pool  *Pool // the pool whose numbering group is in
	// foreign is the computation number of the scope's tasks spawned on
	// another pool's deques, given on the first such spawn (foreignGroup).
	foreign atomic.Uint64
}

// Whose computation. A task spawned into s runs in s's computation: with
// the cancellation scope (w.comp) and computation number (w.group) that
// RunScope's caller had, not the spawner's. They differ when a task of the
// scope enters a nested computation (InvokeContext inline) and spawns into
// the outer scope from there: the spawned task is still the outer scope's,
// waited for by its RunScope and not by the nested InvokeContext, so the
// nested computation's cancellation must not skip it (the skip would be
// recorded as a panic of the outer scope and fail a computation that was
// never canceled) and must not be what w.Err and w.Context report to it
// (TestSpawnIntoOuterScopeOutlivesInnerCancel). It also keeps every node
// of a scope in one computation, which a FIFO scope needs: whichever
// ticket runs takes the scope's oldest task.
//
// A computation number means something only on the pool that gave it out
// (handoff.go): the first submissions of two pools get the same one. A
// task of another pool that spawns into s (a body that calls
// InvokeContext(ctx, other, …) and spawns from there) pushes the node on
// that pool's deque, where s.group would name whatever computation of
// that pool has the same number, and a worker waiting in it would run the
// task nested in its wait (TestForeignSpawnNotRunByUnrelatedWaiter). There
// the node carries s.foreign instead, a number no pool gives out
// (newGlobalGroup), the same for every task of s on every other pool: no
// unrelated waiter runs them, idle workers do, and tasks of s waiting there
// help each other. On each deque, then, every node of s still carries one
// number.

// scopeQueue holds a FIFO scope's spawned tasks not yet started, oldest
// first. Every spawned task pushes one ticket (its own node) and takes one
// task when its ticket runs, so the queue is never empty when a ticket
// runs.
type scopeQueue struct {
	mu    sync.Mutex
	tasks []func(*Worker) // guarded by mu; tasks[head:] are waiting
	head  int             // guarded by mu
}

func (q *scopeQueue) push(fn func(*Worker)) {
	q.mu.Lock()
	if q.head > 0 && q.head == len(q.tasks) {
		q.tasks, q.head = q.tasks[:0], 0 // drained: reuse the array
	}
	q.tasks = append(q.tasks, fn)
	q.mu.Unlock()
}

func (q *scopeQueue) pop() func(*Worker) {
	q.mu.Lock()
	fn := q.tasks[q.head]
	q.tasks[q.head] = nil
	q.head++
	q.mu.Unlock()
	return fn
}

// RunScope runs body on w with a new Scope and returns once body and every
// task spawned in the scope, directly or from other spawned tasks, has
// finished. While it waits, w helps run them (and any other work of the
// pool). If any of them panicked, RunScope re-panics with the first
// *PanicError after all have finished. If body, or a task that RunScope
// runs while it waits, calls runtime.Goexit, RunScope likewise waits for
// every spawned task before the goroutine unwinds further
// (TestGoexitWaitsForStolenWork, TestRev23GoexitInScopeWaitWaitsForSpawned).
//
// Every spawned task runs in the computation RunScope was called in (see
// InvokeContext): w.Err and w.Context report that one's context, and only
// its cancellation skips the tasks, even when the spawning task runs in a
// nested InvokeContext (TestSpawnIntoOuterScopeOutlivesInnerCancel).
func RunScope(w *Worker, body func(s *Scope, w *Worker)) {
	if w == nil {
		panicNilWorker("RunScope")
	}
	if body == nil {
		panic("forkjoin: RunScope called with a nil body")
	}
	s := &Scope{comp: w.comp, group: w.group, pool: w.pool}
	if w.fifo {
		s.fifo = &scopeQueue{}
	}
	s.pending.Store(1) // the body: the count cannot reach zero while it runs
	func() {
		outer := w.enterScope(s)
		finished := false
		defer func() {
			exiting := false // body called runtime.Goexit
			if !finished {
				v := recover()
				exiting = v == nil
				s.recordPanic(CapturePanic(v))
			}
			s.finish(w.leaveScope(outer))
			if exiting {
				// The wait below would be skipped by the unwinding: wait
				// here, so that no spawned task runs on after the scope
				// (TestGoexitWaitsForStolenWork).
				s.wait(w)
			}
		}()
		body(s, w)
		finished = true
	}()
	s.wait(w)
	if pe := s.panic.Load(); pe != nil {
		panic(pe)
	}
}

// wait waits on w until every task of s has finished, helping s's
// computation (the scope's caller's, which untilSettled sets again: after
// the body's runtime.Goexit w's may be stale). A task the wait runs (one
// of s's, or any of the computation's) may call runtime.Goexit, which
// unwinds RunScope too: untilSettled then waits again, so that no spawned
// task runs on after the scope (TestGoexitWaitsForStolenWork,
// TestRev23GoexitInScopeWaitWaitsForSpawned; before, RunScope unwound at
// once while another worker still ran a spawned task).
func (s *Scope) wait(w *Worker) {
	w.untilSettled(s.comp, s.group, func() { w.waitUntil(&s.done, nil) })
}

// groupOn returns the computation number of s's tasks pushed on w's deque
// (see "Whose computation").
func (s *Scope) groupOn(w *Worker) uint64 {
	if w.pool == s.pool {
		return s.group
	}
	return s.foreignGroup()
}

// foreignGroup returns the computation number of s's tasks on pools other
// than s's, giving it on the first call. Any worker may call it.
//
//go:noinline
func (s *Scope) foreignGroup() uint64 {
	if g := s.foreign.Load(); g != 0 {
		return g
	}
	s.foreign.CompareAndSwap(0, newGlobalGroup()) // a loser's number is dropped unused
	return s.foreign.Load()
}

// Spawn forks fn into the scope from a task running on w (the scope body
// or a task spawned in the scope). It returns at once; fn runs on some worker
// of w's pool before RunScope returns. The node that carries fn is recycled
// by w (see SpawnTask), so a spawn allocates only what fn itself captures.
func (s *Scope) Spawn(w *Worker, fn func(w *Worker)) {
	if s == nil {
		panic("forkjoin: Scope.Spawn called with a nil *Scope")
	}
	if w == nil {
		panicNilWorker("Scope.Spawn")
	}
	if fn == nil {
		panic("forkjoin: Scope.Spawn called with a nil function")
	}
	spawn(s, w, funcAction(fn), "Scope.Spawn")
}

func (s *Scope) recordPanic(pe *PanicError) { s.panic.CompareAndSwap(nil, pe) }

// Counting. pending is the number of the scope's tasks not yet finished
// (the body counts as one) plus the credits that running tasks of the
// scope hold. A spawn needs the count raised before its node is pushed; to
// spare a locked instruction (and, with two workers, a cache miss on a
// line the finishing tasks write) per spawn, a task of the scope takes
// spawnCredits at once and spends one per spawn (Worker.frame). A
// task returns its unspent credits with its own count when it finishes,
// in one atomic add. Every credit belongs to a task of the scope that has
// not finished, so pending reaches zero exactly when the body and every
// spawned task have finished: credits delay nothing.
const spawnCredits = 64

// scopeFrame is the credit slot of the innermost task of a scope running
// on a worker (see Counting): the scope, and the credits it holds.
type scopeFrame struct {
	scope   *Scope
	credits int64
}

// enterScope makes the task of s that w starts the owner of w's credit
// slot and returns the outer task's slot, for leaveScope.
func (w *Worker) enterScope(s *Scope) scopeFrame {
	outer := w.frame
	w.frame = scopeFrame{scope: s}
	return outer
}

// leaveScope gives w's credit slot back to the outer task and returns what
// the finishing task retires from its scope: itself and its unspent
// credits.
func (w *Worker) leaveScope(outer scopeFrame) int64 {
	n := 1 + w.frame.credits
	w.frame = outer
	return n
}

// count counts one spawn into s on w, from the credits of w's running task
// of s if it is one. It reports false if s had finished (the spawn is a
// misuse).
func (s *Scope) count(w *Worker) bool {
	if w.frame.scope == s {
		if w.frame.credits == 0 {
			s.pending.Add(spawnCredits) // s cannot have finished: its task is running
			w.frame.credits = spawnCredits
		}
		w.frame.credits--
		return true
	}
	// Not from s's running task: raise the count only if s has not
	// finished. An Add would turn a finished scope's 0 into 1 and leave it
	// there, so that the next misuse saw a live count, was accepted, and
	// its task ran with no RunScope to wait for it or raise its panic
	// (TestSpawnAfterScopeReturnedAlwaysPanics). The CAS keeps a finished
	// scope's count at 0; while s runs, a task of s is unfinished, so the
	// count cannot reach 0 under the loop.
	for {
		n := s.pending.Load()
		if n == 0 {
			return false
		}
		if s.pending.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Batched retirement. A spawned task that finishes normally does not
// subtract itself from its scope's count at once: its worker adds it to
// w.retired (retireTask) and subtracts the sum with one atomic add (flushRetired)
// when the next task of the same scope would make it retireBatchMax, when a
// task of another scope or any other node starts on w, and whenever w runs
// out of work: before it spins, sleeps or goes idle (helpOrSnooze,
// waitUntil, the scheduling loop), before a Broadcast share and when the
// worker exits. With two workers the count's line then moves between the
// cores once per batch instead of once per task.
//
// Why nothing waits for ever: a batch only holds tasks that have finished,
// so it delays the count, never makes it reach zero early. The one waiter
// of s.done is s's RunScope; a worker that holds a batch of s runs tasks of
// s back to back, and flushes before it does anything else that could
// wait (run something that is not a task of s, wait, sleep, go idle), and
// when a wait returns to its task, which need not belong to s: a join that
// helped with tasks of s, then a Block until s's RunScope returns
// (TestHelpedScopeRetiredBeforeJoinReturns); likewise when a Join's unpush
// ran tasks of s above b and then runs b inline
// (TestUnpushedScopeTaskRetiredBeforeJoinRunsB). So a batch stays unflushed
// only while its worker runs a task of s, which is unfinished itself and
// holds s open anyway. retire_flush_internal_test forces the flushes
// before a task of another scope and before a Broadcast's share. A task that panics or calls
// runtime.Goexit retires at once (runSpawned), and the count is exact
// either way; it flushes its worker's batch too, since a Goexit unwinds
// on through user code (defers below it, the worker's exit and start
// hooks) that may wait for the scope
// (TestRev36GoexitInSpawnedTaskFlushesBatch).
const retireBatchMax = 64

// retireBatch is what w.retired holds: a scope and the count its finished
// tasks on w have not yet subtracted.
type retireBatch struct {
	scope *Scope
	n     int64
}

// retireTask adds n, the retirement of a task of s that finished on w, to w's
// batch (flushing a batch of another scope first, or the batch once it
// reaches retireBatchMax).
func (w *Worker) retireTask(s *Scope, n int64) {
	r := &w.retired
	if r.scope != s {
		w.flushRetired()
		r.scope = s
	}
	r.n += n
	if r.n >= retireBatchMax {
		w.flushRetired()
	}
}

// flushRetired subtracts w's batch from its scope's count. It costs a load
// when the batch is empty.
func (w *Worker) flushRetired() {
	if w.retired.scope != nil {
		w.flushRetiredBatch()
	}
}

func (w *Worker) flushRetiredBatch() {
	r := &w.retired
	s, n := r.scope, r.n
	*r = retireBatch{}
	s.finish(n)
}

// finish retires n from the count; the last one sets the latch, which
// wakes RunScope if it sleeps (the latch registers and wakes its waiter;
// there is no separate waiter field to race with).
func (s *Scope) finish(n int64) {
	if s.pending.Add(-n) == 0 {
		s.done.set()
	}
}
