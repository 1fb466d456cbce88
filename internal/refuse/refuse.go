// Package refuse submits the first task of a magpie computation and tells
// a pool's refusal from a panic of the task, so that the computation can
// run on its caller instead. It is shared by package magpie's helpers and
// by internal/sorts, which cannot import magpie.
//
// A closed pool refuses new work: forkjoin.Invoke (and Run with a *Pool)
// panics with forkjoin.ErrClosed itself, raw, having run nothing. A panic
// of the task reaches the caller as a *forkjoin.PanicError, also one
// holding ErrClosed (a task that called Invoke on a closed pool itself):
// part of the task ran then, and it must not be taken for a refusal and
// run again (magpie's TestShortLoopHandedPanicErrClosed, where errors.Is
// took it for the refusal; TestRunRefusedOnlyByThePool).
package refuse

import "github.com/magpie-go/magpie/forkjoin"

// Run is forkjoin.Run(r, fn), except that if the pool refuses fn it
// returns refused = true instead of panicking with ErrClosed: fn has not
// run, and the caller may run the computation itself. Any other panic goes
// on unchanged, a runtime.Goexit too.
func Run[T any](r forkjoin.Runner, fn func(*forkjoin.Worker) T) (res T, refused bool) {
	finished := false
	defer func() {
		if finished {
			return
		}
		v := recover()
		if err, ok := v.(error); ok && err == forkjoin.ErrClosed {
			refused = true
			return
		}
		if v != nil {
			panic(v)
		}
	}()
	res = forkjoin.Run(r, fn)
	finished = true
	return res, false
}
