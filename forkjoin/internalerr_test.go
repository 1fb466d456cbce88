package forkjoin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/magpie-go/magpie/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// internalErrorChild names, in the environment of a child test process,
// the fault TestInternalErrorEndsTheProgram makes it raise.
const internalErrorChild = "MAGPIE_INTERNAL_ERROR_CHILD"

// TestInternalErrorEndsTheProgram: a runtime error raised by the runtime's
// own code inside a task (here a nil *latch set from the task, standing for
// a bug in a Join's bookkeeping) is not reported as the task's panic: it
// ends the program with "forkjoin: internal error" and the stack. Each
// fault runs in a child process (this test binary), since nothing can
// recover from it.
func TestInternalErrorEndsTheProgram(t *testing.T) {
	if fault := os.Getenv(internalErrorChild); fault != "" {
		internalErrorChildMain(fault)
		return
	}
	for _, fault := range []string{"invoke", "submit", "join"} {
		t.Run(fault, func(t *testing.T) {
			out, err := runChild(t, "TestInternalErrorEndsTheProgram", fault)
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the child went on after the fault:\n%s", out)
			assert.Contains(t, string(out), "forkjoin: internal error (a bug in magpie, not in the task")
			assert.Contains(t, string(out), "nil pointer dereference")
			assert.Contains(t, string(out), "forkjoin.(*latch).set", "the stack of the fault")
			assert.NotContains(t, string(out), "reported as the task's panic")
		})
	}
}

// runChild runs test in a child process (this test binary) with
// internalErrorChild set to fault, and returns its output and how it
// exited. A child that hangs fails t.
func runChild(t *testing.T, test, fault string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.HangTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), internalErrorChild+"="+fault)
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the child hung:\n%s", out)
	return string(out), err
}

// internalErrorChildMain raises a runtime error in the runtime's own code
// from inside a task, in the way fault names, and prints how it came back
// if it does.
func internalErrorChildMain(fault string) {
	p := New(WithParallelism(2))
	bug := func(*Worker) int {
		var l *latch
		l.set() // a nil dereference in latch.go, not in this file
		return 0
	}
	report := func(v any) {
		fmt.Printf("reported as the task's panic: %v\n", v)
		os.Exit(0)
	}
	switch fault {
	case "invoke":
		defer func() { report(recover()) }()
		Invoke(p, bug)
	case "submit":
		_, err := Submit(p, bug).Get(context.Background())
		report(err)
	case "join":
		defer func() { report(recover()) }()
		Invoke(p, func(w *Worker) int {
			a, b := Join(w, func(*Worker) int { return 1 }, bug)
			return a + b
		})
	}
	report("nothing")
}

// TestRuntimeErrorInTaskIsTheTasks: a runtime error raised by the task's
// own code, even when the task was called by the runtime's, is the task's
// *PanicError, as any other panic of it.
func TestRuntimeErrorInTaskIsTheTasks(t *testing.T) {
	p := New(WithParallelism(2))
	defer p.Close()
	var m map[int]int
	_, err := Submit(p, func(w *Worker) int {
		a, _ := Join(w, func(*Worker) int { return 1 }, func(*Worker) int { m[1] = 1; return 0 })
		return a
	}).Get(context.Background())
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	var re runtime.Error
	assert.True(t, errors.As(err, &re), "the runtime error: %v", pe.Value)
}

// userMistakes are mistakes of a task's author that raise, or raised before
// their argument was checked, a runtime error in the runtime's own frames:
// each names the value of the panic it must come back with, as the task's
// *PanicError (TestUserMistakeInsideTaskIsTheTasks).
var userMistakes = map[string]struct {
	want string
	make func(p *Pool, w *Worker)
}{
	// A function value is the user's even when it is sync's code: the
	// nil *WaitGroup is dereferenced in sync's frame, called from Block.
	"Block with a nil WaitGroup's Wait": {nilDereference, func(_ *Pool, w *Worker) {
		var wg *sync.WaitGroup
		Block(w, wg.Wait)
	}},
	"Block with a nil Mutex's Lock": {nilDereference, func(_ *Pool, w *Worker) {
		var mu *sync.Mutex
		Block(w, mu.Lock)
	}},
	"Run with a nil function": {"forkjoin: Run called with a nil function", func(_ *Pool, w *Worker) {
		Run[int](w, nil)
	}},
	"New with a nil Option": {"forkjoin: New called with a nil Option", func(*Pool, *Worker) {
		New(WithParallelism(1), nil).Close()
	}},
	"InvokeContext with a nil context": {"forkjoin: InvokeContext called with a nil context", func(p *Pool, _ *Worker) {
		InvokeContext(nil, p, func(*Worker) int { return 0 })
	}},
	"SubmitContext with a nil context": {"forkjoin: SubmitContext called with a nil context", func(p *Pool, _ *Worker) {
		SubmitContext(nil, p, func(*Worker) int { return 0 })
	}},
	"Pool.Execute on a zero Pool": {"forkjoin: Pool.Execute called with a Pool not made by New", func(*Pool, *Worker) {
		_ = new(Pool).Execute(func(*Worker) {})
	}},
	"Invoke on a zero Pool": {"forkjoin: Invoke called with a Pool not made by New", func(*Pool, *Worker) {
		Invoke(new(Pool), func(*Worker) int { return 0 })
	}},
	"Pool.Stats on a zero Pool": {"forkjoin: Pool.Stats called with a Pool not made by New", func(*Pool, *Worker) {
		new(Pool).Stats()
	}},
	"Pool.Close on a zero Pool": {"forkjoin: Pool.Close called with a Pool not made by New", func(*Pool, *Worker) {
		new(Pool).Close()
	}},
	"Broadcast on a zero Pool": {"forkjoin: Broadcast called with a Pool not made by New", func(*Pool, *Worker) {
		Broadcast(new(Pool), func(*Worker) {})
	}},
}

// nilDereference is the text of the runtime error of a nil dereference.
const nilDereference = "runtime error: invalid memory address or nil pointer dereference"

// TestUserMistakeInsideTaskIsTheTasks: a user's mistake made inside a task
// (userMistakes) comes back as the task's *PanicError with its message,
// never as the internal error that ends the program. On the code before
// the checks, each ended the child process as "a bug in magpie".
func TestUserMistakeInsideTaskIsTheTasks(t *testing.T) {
	if name, ok := strings.CutPrefix(os.Getenv(internalErrorChild), "mistake:"); ok {
		userMistakeChildMain(name)
		return
	}
	for name, m := range userMistakes {
		t.Run(name, func(t *testing.T) {
			if testenv.Race && strings.Contains(name, "WaitGroup") {
				// Under -race, WaitGroup.Wait turns the race detector's
				// view of synchronisation off until it returns: the panic
				// leaves it off, and the child's later locked accesses
				// read as races.
				t.Skip("sync.WaitGroup.Wait panicking under -race")
			}
			out, err := runChild(t, "TestUserMistakeInsideTaskIsTheTasks", "mistake:"+name)
			require.NoError(t, err, "the child ended:\n%s", out)
			assert.Contains(t, out, "reported as the task's panic: "+m.want+"\n")
			assert.NotContains(t, out, "internal error")
		})
	}
}

// userMistakeChildMain makes the mistake name inside a task and prints the
// Value of the *PanicError it comes back with.
func userMistakeChildMain(name string) {
	p := New(WithParallelism(2))
	defer p.Close()
	v := recoverValue(func() {
		Invoke(p, func(w *Worker) int { userMistakes[name].make(p, w); return 0 })
	})
	var pe *PanicError
	if err, ok := v.(error); ok && errors.As(err, &pe) {
		v = pe.Value
	}
	fmt.Printf("reported as the task's panic: %v\n", v)
}
