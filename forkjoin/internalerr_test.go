package forkjoin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
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
			ctx, cancel := context.WithTimeout(context.Background(), testenv.HangTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestInternalErrorEndsTheProgram$")
			cmd.Env = append(os.Environ(), internalErrorChild+"="+fault)
			out, err := cmd.CombinedOutput()
			require.NoError(t, ctx.Err(), "the child hung:\n%s", out)
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the child went on after the fault:\n%s", out)
			assert.Contains(t, string(out), "forkjoin: internal error (a bug in magpie, not in the task")
			assert.Contains(t, string(out), "nil pointer dereference")
			assert.Contains(t, string(out), "forkjoin.(*latch).set", "the stack of the fault")
			assert.NotContains(t, string(out), "reported as the task's panic")
		})
	}
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
