// Package task brings Java's RecursiveTask and RecursiveAction to magpie's
// fork-join runtime: any type with a Compute(w *forkjoin.Worker) method is
// a task, and Fork, Join, Invoke and InvokeAll work on it with type
// inference, storing the task value unboxed in the forked node.
//
// This is the one public home of typed tasks: RecursiveTask and
// RecursiveAction are their only named interfaces, and every typed
// operation of the runtime (fork, join, submit, execute, spawn) has its
// function here. Package forkjoin exports the typed layer these are built
// on (ForkTask, JoinTasks, SubmitTaskPriority, ExecuteTaskPriority,
// SpawnTask) only because Go has no friend packages; write this package's
// names.
//
// # The common use
//
// A task is a small struct: the problem's bounds and a cutoff. Compute
// solves small problems sequentially and splits big ones, forking one half
// and computing the other itself:
//
//	type Sum struct {
//		xs  []float64
//		cut task.Cutoff
//	}
//
//	func (s Sum) Compute(w *forkjoin.Worker) float64 {
//		if !s.cut.Split(w, len(s.xs)) {
//			total := 0.0
//			for _, x := range s.xs {
//				total += x
//			}
//			return total
//		}
//		mid := len(s.xs) / 2
//		right := task.Fork(w, Sum{s.xs[mid:], s.cut}) // may run on another worker
//		left := Sum{s.xs[:mid], s.cut}.Compute(w)     // runs here
//		return left + right.Join(w)                   // inline if nobody stole it
//	}
//
//	pool := forkjoin.New()
//	defer pool.Close()
//	total := task.Invoke(pool, Sum{xs, task.Adaptive()})
//
// The last three lines of Compute can also read
//
//	left, right := task.InvokeBoth(w, Sum{s.xs[:mid], s.cut}, Sum{s.xs[mid:], s.cut})
//
// which says the same in one call. Neither allocates when warm (see
// forkjoin.Future; TestTypedPathAllocatesNothing); InvokeBoth, which has no handle to settle, is the
// cheaper of the two (docs/design.md, "Measured costs"). Use Fork when a
// task forks a varying number of subtasks or joins them out of order;
// InvokeBoth, InvokeSlice and InvokeAll when it forks a known set and
// waits for all of them.
//
// # Which function
//
//   - Invoke, InvokeAction: from outside the pool; run a root task and wait.
//   - Submit, SubmitPriority, SubmitAction: from outside the pool; queue a
//     root task and get its Future at once, without waiting.
//   - Execute, ExecutePriority: from outside the pool; queue an action and
//     forget it (no Future; a panic goes to the pool's panic handler:
//     TestExecutePanicGoesToHandler); allocates nothing once warm
//     (TestExecuteSteadyStateAllocatesNothing).
//   - Fork, ForkAction: from inside a task; fork one subtask, Join it later.
//   - InvokeBoth, InvokeBothActions: two subtasks, zero allocations
//     (TestTypedPathAllocatesNothing).
//   - InvokeSlice: n subtasks of one type, results in order; allocates only
//     the result slice (TestInvokeAllOrderAndSizes, TestTypedPathAllocatesNothing).
//   - InvokeAll, InvokeAllActions: n subtasks of any types, as Java's
//     invokeAll; the caller boxes each task into the interface.
//   - Spawn: from inside a task of a forkjoin.Scope; start an action that
//     nobody joins, for work whose number of tasks is found as it runs
//     (tree walks, work lists); forkjoin.RunScope waits for all of them
//     (TestSpawnRunsEveryAction).
//
// A panic in a task never kills a worker: it is captured with its stack and
// re-raised, as a *forkjoin.PanicError whose Value is the original value,
// in whoever joins it (Join, InvokeBoth, InvokeAll, Invoke, RunScope for
// Spawn), or returned as the error by a submitted task's Future.Get
// (TestForkJoinPanicPropagates, TestSubmitPanicAndClosedPool). The InvokeX
// functions re-panic only after every sibling has finished or been removed
// unrun, so no task of theirs still runs when the panic reaches the caller
// (TestInvokeAllPanicPropagates, TestInvokeAllStolenHalfRunsOn).
//
// # Choosing a cutoff
//
// Each fork costs tens of nanoseconds on the un-stolen path and far more
// when stolen; a sequential leaf should cost microseconds to amortize it.
//
// Fixed(grain) splits while the size is above grain (TestFixed). Use it when the cost
// per element is known and uniform and you can afford to measure: a grain
// whose leaf takes 10 to 100 microseconds is usually near the optimum, and
// the result is reproducible (the same split tree on every run, which
// matters for floating-point sums).
//
// Adaptive() needs no tuning: it splits while the worker has no surplus of
// queued work that idle workers could steal (forkjoin.Worker.Surplus, the
// heuristic of Java's getSurplusQueuedTaskCount; lazy binary splitting),
// never below AdaptiveFloor (TestAdaptive). When every worker is busy, tasks stop
// splitting and run at sequential speed; when one goes idle, splitting
// resumes where it can steal. Use it when the cost per element is unknown,
// irregular (N-Queens, tree walks) or depends on the input, when the code
// runs inside other parallel work, or when the pool size varies. Its split
// tree depends on timing, so a floating-point reduction may differ from run
// to run in the last bits.
//
// # Nil arguments
//
// Invoke, InvokeAction, Submit, SubmitPriority, SubmitAction, Execute and
// ExecutePriority read a nil *forkjoin.Pool as forkjoin.Default()
// (TestNilPoolMeansDefault, TestExecuteNilMessages). The
// functions that take a *forkjoin.Worker panic on a nil one with "task:
// <function> called with a nil *Worker", the wording of package forkjoin;
// Fork and ForkAction leave the check to forkjoin.ForkTask and give its
// message, "forkjoin: ForkTask called with a nil *Worker", because one
// argument more would push them over the inlining budget that keeps their
// Future on the caller's stack; InvokeBoth and Spawn leave it to
// forkjoin.JoinTasks and forkjoin.SpawnTask ("forkjoin: JoinTasks called
// with a nil *Worker"), so that they inline and cost no call of their own
// (TestNilWorkerOneMessage). A nil task or action (a nil interface value)
// panics with a message naming the function called, before anything runs
// or is queued (TestNilArguments, TestNilTaskMessages,
// TestNilTaskNamesTheFunction: Invoke, InvokeAction, InvokeSlice and
// InvokeBothActions failed on a nil dereference before, on the caller or
// in the pool). The inlined wrappers give the message of the forkjoin
// function they are, for the same reason: Fork and InvokeBoth
// ForkTask's and JoinTasks's ("forkjoin: ForkTask called with a nil
// task"), Spawn, or a nil *forkjoin.Scope, SpawnTask's; ForkAction,
// whose action ForkTask sees wrapped, forks it, and its Join re-panics
// with the nil dereference as a *forkjoin.PanicError.
package task
