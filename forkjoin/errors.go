package forkjoin

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
)

// ErrClosed is returned (or, by Invoke, panicked with) when work is
// submitted to a pool after Close.
var ErrClosed = errors.New("forkjoin: pool is closed")

// ErrQueueFull is returned by Execute when the pool was built with
// WithMaxQueued and its submission queue is full; never to a submission
// from one of the pool's own workers, which is not bounded (see
// WithMaxQueued).
var ErrQueueFull = errors.New("forkjoin: submission queue is full")

// ErrInsidePool is wrapped by the error Pool.Shutdown returns when it is
// called where it cannot wait for the pool's work: in one of the pool's
// tasks, in its panic handler, or in Blocking's function run for one of
// its workers, which a worker of the pool waits for. Shutdown then stops
// the pool accepting submissions and returns at once, as Close does;
// the workers exit once the work in flight has finished.
var ErrInsidePool = errors.New("forkjoin: Shutdown called from inside the pool cannot wait for its work")

// ErrGoexit is the Value of the *PanicError recorded for a task that called
// runtime.Goexit (for example t.FailNow in a test) instead of returning:
// errors.Is(err, ErrGoexit) reports it, through the *PanicError.
var ErrGoexit = errors.New("forkjoin: task called runtime.Goexit")

// PanicError is a panic raised by a task, captured with the stack of the
// goroutine at the point of the panic. Join and Invoke re-panic with the
// *PanicError; Get returns it.
type PanicError struct {
	Value any    // the value passed to panic
	Stack []byte // the panicking goroutine's stack, as by runtime/debug.Stack
}

// Error returns the panic value and the stack at which it was raised.
func (e *PanicError) Error() string {
	return fmt.Sprintf("forkjoin: task panicked: %v\n\n%s", e.Value, e.Stack)
}

// Unwrap returns the panic value if it is an error, so that errors.Is and
// errors.As see through a PanicError.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// CapturePanic turns a value recovered from a task's panic into the
// *PanicError that magpie reports everywhere: the value with the stack of
// the panic. Call it from the deferred function that recovered v, so that
// the stack still holds the panicking frames. A value that already is a
// *PanicError (a panic re-raised by a nested Join) is passed on unchanged,
// keeping the stack of the original panic. A nil v means runtime.Goexit
// (since Go 1.21 panic(nil) recovers as a *runtime.PanicNilError): the
// result then reports that the task called runtime.Goexit.
//
// It is the one place where magpie captures a panic; packages built on
// forkjoin (the helpers of package magpie, task, pipeline) use it too, so
// that a panic reads the same whichever path ran the function. A runtime
// error raised by magpie's runtime itself, rather than by the task, is not
// the task's: CapturePanic ends the program with it (internalerr.go).
func CapturePanic(v any) *PanicError {
	switch v := v.(type) {
	case *PanicError:
		return v
	case nil:
		return &PanicError{Value: ErrGoexit, Stack: debug.Stack()}
	case runtime.Error:
		if raisedInRuntime() {
			fatalInternal(v)
		}
	}
	return &PanicError{Value: v, Stack: debug.Stack()}
}

// callInline calls fn on w, on the caller's stack, and re-raises a panic
// in it as a *PanicError (one already is passes unchanged), so that a call
// that runs its function inline (Run with a *Worker, Invoke from inside
// its own pool) reports a panic exactly as one that submits it does. A
// runtime.Goexit goes on unwinding.
func callInline[T any](w *Worker, fn func(*Worker) T) T {
	finished := false
	defer func() {
		if !finished {
			if v := recover(); v != nil {
				panic(CapturePanic(v))
			}
		}
	}()
	r := fn(w)
	finished = true
	return r
}
