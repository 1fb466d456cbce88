package task

import "github.com/magpie-go/magpie/forkjoin"

// Spawning into a scope: for work whose number of tasks is not known when
// it starts (a tree walk, a work list), a task of a forkjoin.Scope starts
// actions that nobody joins one by one; forkjoin.RunScope returns once all
// of them have finished. This is forkjoin.Scope.Spawn for a typed action.
//
// Invariant: Spawn is forkjoin.SpawnTask and nothing more, so that it
// inlines and a spawn through it costs what one through SpawnTask does: the
// action is stored unboxed in a node its worker recycles, and no spawned
// action still runs when RunScope returns.

// Spawn starts a in scope s from a task running on w (the scope's body or
// another task of s) and returns at once; a runs on some worker of w's
// pool before forkjoin.RunScope returns. a is stored unboxed in a node that
// w recycles, so on a LIFO pool spawning a small struct allocates nothing
// once warm (forkjoin's TestSpawnAllocatesNothing). A panic in a is
// re-raised by RunScope as a *forkjoin.PanicError once every task of the
// scope has finished; a cancellation of w's computation and
// runtime.Goexit are handled as in forkjoin.Scope.Spawn.
//
// A nil s, w or a panics with SpawnTask's message ("forkjoin: SpawnTask
// called with a nil *Scope", "... a nil *Worker", "... a nil task"): checks
// of its own would put Spawn over the inlining budget (shaped cost 95
// against 80, Go 1.26), a call more per spawn (TestNilTaskMessages).
func Spawn[A RecursiveAction](s *forkjoin.Scope, w *forkjoin.Worker, a A) {
	forkjoin.SpawnTask(s, w, a)
}
