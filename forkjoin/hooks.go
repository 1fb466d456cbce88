package forkjoin

// WithWorkerHooks sets functions that each worker goroutine calls with its
// index: start when it begins, before it looks for work, and exit as it
// ends, after its last task. They run on the worker's own goroutine, so
// start may set up what belongs to it (pprof labels are already set;
// runtime.LockOSThread, per-worker state indexed by Index()); either may be
// nil.
//
//   - Every goroutine that calls start calls exit as its last act, and
//     Close returns only after every exit call has returned
//     (TestWorkerHooksStartAndExit). The Default pool never closes, so its
//     Parallelism() workers call exit only across a Goexit (below); its
//     compensating workers call it as they retire, as on any pool
//     (TestDefaultPoolCompensatingWorkersCallExit).
//   - Compensating workers started by Block call them too, with their own
//     indices (Parallelism() and up): start each time Block starts one,
//     exit each time it retires (TestWorkerHooksCompensatingWorkers). One
//     that a Block takes over while it retires calls neither, and goes on
//     (TestBlockRightAfterBlockIsCompensated); a slot that an exiting one
//     hands to a waiting Block runs a fresh goroutine, which calls start
//     after the old one's exit (TestBlockQueuedForExitingSpare).
//   - A task that calls runtime.Goexit ends its worker's goroutine; the
//     worker carries on in a fresh one. The old goroutine calls exit and
//     only then starts the new one, which calls start: an index's calls
//     alternate start, exit, start, ... and never overlap
//     (TestWorkerHooksAcrossGoexit).
//   - A panic in a hook is captured as a *PanicError and handed to the
//     pool's panic handler (WithPanicHandler; it counts in Stats.Panics),
//     as a panic of an Execute task is, and the worker carries on: a
//     server is not brought down by a hook, and the default handler prints
//     the panic and its stack. A hook that calls runtime.Goexit is reported
//     the same way (ErrGoexit); its goroutine ends, and the worker carries
//     on in a fresh one that does not call start again, so a start hook
//     that always exits cannot spin (TestWorkerHooksPanic).
//
// Hooks should be short: a worker in start runs no task (a join waiting
// in a hook, of an Invoke run inline there, helps with that computation
// alone: TestHookJoinRunsNoSubmission), and the pool looks busy
// meanwhile. They should not wait for work on their own pool: an exit
// hook runs on a pool that is closing. Blocking called from a hook
// calls its function plainly, with no compensating worker and no task run
// meanwhile: a hook holds no task's place, and a compensating worker's
// hooks would start the next one (TestBlockingInHookRunsPlain).
func WithWorkerHooks(start, exit func(index int)) Option {
	return func(c *config) { c.onStart, c.onExit = start, exit }
}

// callHook runs a worker hook on w's goroutine, reporting a panic in it to
// the panic handler instead of letting it end the goroutine (a Goexit goes
// on, after being reported).
func (w *Worker) callHook(h func(index int)) {
	if h == nil {
		return
	}
	finished := false
	// The hook runs in a computation of its own, as a submission does: a
	// join waiting in it (an Invoke inline there) then helps only with the
	// hook's tasks. With number 0, which a waiting worker reads as "any
	// task" (waitForeign), it ran submitted tasks inside the hook
	// (TestHookJoinRunsNoSubmission). inHook: see blockOn.
	w.inHook, w.group = true, newGlobalGroup()
	defer func() {
		w.inHook, w.group = false, 0
		if !finished {
			w.pool.reportPanic(CapturePanic(recover()))
		}
	}()
	h(w.index)
	finished = true
}

// callExitHook runs the exit hook of a worker that leaves its loop idle.
// The worker counts as running meanwhile, as it does while it runs a task
// (caller.go): the hook runs user code on a registered worker goroutine, so a
// call from it into its own pool (Close, Broadcast, Invoke) must find its
// worker whatever other pools are doing. Counted idle, callingWorker's fast
// path saw no worker when no other pool was busy, and Close from the hook
// waited for this very goroutine to exit (TestExitHookCallsIntoItsPool).
func (w *Worker) callExitHook() {
	runningWorkers.Add(1)
	defer runningWorkers.Add(-1)
	w.callHook(w.pool.onExit)
}
