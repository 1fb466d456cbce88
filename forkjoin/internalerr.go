package forkjoin

import (
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
)

// A bug in magpie is never reported as a task's panic.
//
// The runtime's own code (this package's non-test files, internal/deque and
// internal/park) runs inside tasks: a Join's bookkeeping, a steal while a
// worker waits, a latch. A runtime error raised there (a nil dereference, an
// index out of range: magpie's deliberate panics are never runtime errors)
// would reach the recover at the task's boundary and be handed to whoever
// joins it as the task's own *PanicError, sending its author looking for a
// bug in their code. Instead, CapturePanic looks at the frame that raised a
// runtime error and, when it belongs to the runtime, ends the program with
// the error and its stack, as the Go runtime does when its own invariants
// fail ("fatal error"): the pool's state can no longer be trusted, so no
// task, Join or Close should go on. The check costs nothing until a task
// panics (TestInternalErrorEndsTheProgram, TestRuntimeErrorInTaskIsTheTasks).

// runtimePackages are the import paths whose code is the runtime's, found
// from this package's own path so that a fork of the module under another
// path classifies the same.
var runtimePackages = func() []string {
	pkg := reflect.TypeFor[internalError]().PkgPath() // .../forkjoin
	module := pkg[:strings.LastIndexByte(pkg, '/')]
	return []string{pkg + ".", module + "/internal/deque.", module + "/internal/park."}
}()

// raisedInRuntime reports whether the panic being recovered by the caller's
// deferred function was raised by the runtime's own code: the first frame
// below the innermost runtime.gopanic that is not the Go runtime raising it
// (runtime.panicmem, runtime.closechan, ...), nor sync or sync/atomic code
// inlined into that frame (an atomic load or a Mutex's fast path through a
// nil pointer raises in sync/atomic's or sync's inlined frame).
//
// sync code that was called rather than inlined is the task's: the
// runtime's code would have inlined it, but a function value cannot be,
// and a function value is the user's (Block(w, wg.Wait) with a nil wg
// raises in sync.(*WaitGroup).Wait, called from Block through fn).
func raisedInRuntime() bool {
	var pcs [64]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	panicking := false
	var inlinedInto uintptr // entry of the function the sync frames so far were inlined into
	for {
		f, more := frames.Next()
		switch {
		case !panicking:
			panicking = f.Function == "runtime.gopanic"
		case inlinedInto != 0 && f.Entry != inlinedInto:
			return false // the sync code was called, not inlined: see above
		case inGoRuntime(f.Function):
		case inSync(f.Function):
			if f.Func != nil {
				return false // called, not inlined
			}
			inlinedInto = f.Entry
		default:
			if strings.HasSuffix(f.File, "_test.go") {
				return false // a test of the runtime's packages is user code
			}
			for _, p := range runtimePackages {
				if strings.HasPrefix(f.Function, p) {
					return true
				}
			}
			return false
		}
		if !more {
			return false
		}
	}
}

// inGoRuntime reports whether fn, a frame's function, is the Go runtime's.
// No user package has these import paths, and no user function value
// leads into them with a runtime error.
func inGoRuntime(fn string) bool {
	return strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "internal/")
}

// inSync reports whether fn is of sync or sync/atomic, which the runtime's
// code calls with its own pointers, and a user's function value may be (a
// method value of a *sync.WaitGroup).
func inSync(fn string) bool {
	return strings.HasPrefix(fn, "sync.") || strings.HasPrefix(fn, "sync/atomic.")
}

// internalError is a runtime error raised by the runtime's own code, with
// the stack where it was raised.
type internalError struct {
	value any
	stack []byte
}

func (e *internalError) Error() string {
	return fmt.Sprintf("forkjoin: internal error (a bug in magpie, not in the task: please report it): %v\n\n%s",
		e.value, e.stack)
}

// fatalInternal ends the program with v, a runtime error raised by the
// runtime's own code, and the stack of the panic (the caller runs in the
// deferred function that recovered it). No recover can stop it: the panic
// is raised on a goroutine of its own, and the calling one never returns.
func fatalInternal(v any) {
	err := &internalError{value: v, stack: debug.Stack()}
	go func() { panic(err) }()
	select {}
}
