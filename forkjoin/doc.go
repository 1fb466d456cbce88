// Package forkjoin is magpie's fork-join runtime: a pool of workers, each
// with its own work-stealing deque, that runs divide-and-conquer
// computations whose forks cost a push and a pop on the worker's own deque
// when nobody steals them (docs/benchmarks.md has the figures, against a
// goroutine and a WaitGroup per fork).
//
// A computation starts from outside with Invoke (or Submit, Execute, Run)
// and receives the *Worker it runs on. Inside, it splits its work with Join
// (two closures) or Fork and Future.Join, and passes the worker down. (Typed
// tasks, which fork with no allocation at all through task.InvokeBoth, or
// none while the Future stays in the forking function through task.Fork,
// are package task's: TestForkAllocatesNothing,
// TestTypedPathAllocatesNothing.) With closures:
//
//	pool := forkjoin.New()
//	defer pool.Close()
//
//	var sum func(w *forkjoin.Worker, xs []float64) float64
//	sum = func(w *forkjoin.Worker, xs []float64) float64 {
//		if len(xs) < 4096 {
//			s := 0.0
//			for _, x := range xs {
//				s += x
//			}
//			return s
//		}
//		mid := len(xs) / 2
//		a, b := forkjoin.Join(w,
//			func(w *forkjoin.Worker) float64 { return sum(w, xs[:mid]) },
//			func(w *forkjoin.Worker) float64 { return sum(w, xs[mid:]) })
//		return a + b
//	}
//	total := forkjoin.Invoke(pool, func(w *forkjoin.Worker) float64 { return sum(w, data) })
//
// For work whose task count is not known in advance (traversals, work
// lists), RunScope opens a Scope, and any task of it starts more with
// Scope.Spawn (a closure) or task.Spawn (a typed action, stored unboxed);
// RunScope returns once all of them have finished (TestScopeTreeCount,
// TestSpawnTaskRunsEveryTask). Spawned tasks run in
// nodes their spawning worker recycles, so a spawn allocates nothing in
// the steady state beyond what its closure captures
// (TestSpawnAllocatesNothing).
//
// # How it runs
//
// A fork pushes the task on the bottom of the worker's deque; the join pops
// it back and runs it inline unless another worker stole it from the top
// meanwhile. A worker whose joined task was stolen does not block: it runs
// other tasks of the same computation (its own, then the thief's, then
// anyone's) until the task completes, and sleeps only when there is none
// to run (TestJoinerRunsTasksOfItsComputation); it never runs a task of
// another computation, whose panic or runtime.Goexit could then unwind
// through the frames it waits in
// (TestGoexitInOtherComputationDoesNotFailJoiner). Idle
// workers steal from random victims, then run tasks handed off by waiting
// workers, then take submissions from outside (oldest first within a
// priority: see ExecutePriority; under a backlog a batch at a time, which
// idle workers share: see WithTakeBatch), then spin briefly and sleep; new
// work wakes a sleeper only if one sleeps.
// docs/design.md in the repository describes the algorithms, the
// memory-ordering arguments and the measured costs.
//
// # Contract
//
//   - A task's *Worker belongs to the goroutine running the task: pass it
//     down, never to another goroutine, and do not keep it. A nil *Worker
//     (a typed nil in a Runner too) panics with one message everywhere,
//     "<package>: <function> called with a nil *Worker", in packages
//     forkjoin, task and magpie alike (TestNilWorkerOneMessage in each).
//   - A nil *Pool means Default() wherever a pool is taken, as a nil
//     Runner does, and as the receiver of a method (Close and Shutdown then
//     do nothing, as on Default()) (TestNilPoolMeansDefault in each
//     package, TestNilPoolMethodsMeanDefault). A nil *Worker, *Scope or
//     *Future receiver, or a typed task that is a nil interface value,
//     panics with a message naming the call (TestMisuseInsideTaskIsAUsageError),
//     as do a Pool not made by New, a nil Option and a nil context
//     (TestUserMistakeInsideTaskIsTheTasks).
//   - A panic in a task never kills a worker: it is captured with its stack
//     as a *PanicError (see Panics below; TestPanicInJoin,
//     TestPanicInStolenTask and TestPanicInExecute check that the pool keeps
//     all its workers).
//   - Close runs everything accepted, then stops the workers; work submitted
//     afterwards fails with ErrClosed (TestCloseRunsEverythingOnce,
//     TestAfterClose).
//   - Tasks should not block: a blocked worker holds up a core's worth of
//     the pool. Wrap unavoidable blocking in Block, which runs a
//     compensating worker meanwhile. A task that blocks outside Block
//     also holds up the forks it has not yet published: a worker keeps
//     its newest forks private until a thief asks and publishes them at
//     its next fork, join or Block, so a task that waits (on a channel,
//     say) for one of its own forks must wait through Join or Block
//     (TestBlockPublishesForkedWork). Unlike Java's ForkJoinPool, where
//     every fork is stealable at once, the pool's idle workers cannot
//     take them meanwhile.
//   - InvokeContext and SubmitContext make a computation cancelable;
//     long tasks can poll Worker.Err (see Contexts below).
//
// # Contexts
//
// A context given to InvokeContext or SubmitContext cancels a computation;
// the other calls that take one bound a wait and nothing else, as in any
// Go call that waits:
//
//	call                    ctx bounds               done before the end: returns        returns when
//	InvokeContext           the computation          ctx.Err() (joined with a panic)     its tasks have stopped
//	SubmitContext, then     the computation          the Future's outcome is ctx.Err()   its tasks have stopped
//	  Get(live ctx), Join                              (joined with a panic)
//	Future.Get(ctx)         Get's wait only          ctx.Err()                           at once; the task runs on
//	ExecuteContext          the wait for room        ctx.Err(); fn never runs            at once; an accepted fn
//	                        (WithMaxQueued)                                              runs on, without ctx
//	Pool.Shutdown(ctx)      the wait for the drain   an error wrapping ctx.Err()         at once; accepted tasks
//	                                                                                     run on
//
// InvokeContext and SubmitContext also wait for room with ctx, as
// ExecuteContext does. Cancellation is cooperative. Once the context is
// done, the computation's tasks that have not started are skipped, a fork
// unwinds the task that forks, and a running task sees it through w.Err()
// or w.Context().Done(); nothing stops a task that looks at neither. Such
// a task holds the return of InvokeContext (and the outcome of the Future
// of SubmitContext) up until it finishes, however long that takes: the
// rule is that the call never returns while a task of its computation can
// still write to the caller's memory. (A task forked and never joined is
// not waited for, as with Invoke, unless the context is done: then every
// task of the computation already running on another worker is, since a
// fork that unwinds its task skips the Joins after it:
// TestRev21SubmitContextCanceledAtForkWaitsForEarlierFork.) TestContextContract walks the first two
// rows from inside and outside the pool with tasks that cooperate, ignore
// the context or panic; TestFutureGetContextBoundsOnlyTheWait,
// TestExecuteContextBoundsOnlyTheWaitForRoom and
// TestShutdownContextBoundsOnlyTheDrain the others.
//
// # Panics
//
// Every call delivers a task's panic the same way, whether it runs the task
// inline or on another worker, and whether it is called from inside a pool
// or from outside: as a *PanicError holding the panic value (errors.Is and
// errors.As see through it) and the stack where it was raised. A panic
// re-raised by a nested join keeps its first *PanicError, so the stack is
// the original one (TestPanicContractInlineAndSubmitted, TestPanicInJoin,
// TestCapturePanic).
//
//	call                                          a panic in the task
//	Invoke, Run, Join, Future.Join                 re-panics with the *PanicError
//	task.Invoke, task.InvokeAll, InvokeBoth, ...   re-panics with the *PanicError
//	magpie.For, Map, Reduce, Sort, ...             re-panics with the *PanicError
//	Future.Get, InvokeContext                      returns it as the error
//	Execute, task.Execute                          goes to the pool's panic handler
//
// A runtime error (a nil dereference, an index out of range) raised by the
// runtime's own code rather than the task's is a bug in magpie, not the
// task's panic: it ends the program with "forkjoin: internal error" and its
// stack, as the Go runtime does with its own (TestInternalErrorEndsTheProgram).
// A user's mistake is never taken for one: a runtime error raised in a
// function the task passed (Block(w, wg.Wait) with a nil wg) is the task's
// (TestUserMistakeInsideTaskIsTheTasks). (Breaking the contract above, a
// *Worker used by another goroutine, or one not handed out by a pool, can
// still end there: the runtime's state is then corrupt.)
//
// A task that calls runtime.Goexit (t.FailNow in a test) is reported the
// same way, with a Value saying so, and its worker carries on
// (TestGoexitInTask).
//
// Packages task (RecursiveTask and RecursiveAction, cutoffs) and magpie
// (parallel For, Map, Reduce, Sort) are built on this one. Package task is
// the one public home of typed tasks: the typed layer it is built on
// (ForkTask, JoinTasks, SubmitTaskPriority, ExecuteTaskPriority, SpawnTask,
// in typed.go) is exported only because Go has no friend packages, and
// each of its doc comments names the task function to call instead.
package forkjoin
