package task_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// TestNilTaskNamesTheFunction: the package documents that a nil task or
// action (a nil interface value) panics with a message naming the function
// called (doc.go, "Nil arguments"). Invoke raised a raw nil dereference on
// the caller; InvokeAction queued the action on the pool, whose worker
// then reported a nil dereference as the task's *PanicError; InvokeSlice
// gave JoinTasks's message (or, for one task, a nil dereference as a
// *PanicError); InvokeBothActions forked the nil action and failed inside
// it (review rev17).
func TestNilTaskNamesTheFunction(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	var nilTask task.RecursiveTask[int]
	var nilAction task.RecursiveAction
	var ran bool
	outside := map[string]func(){
		"task: Invoke called with a nil task":         func() { task.Invoke[int](p, nilTask) },
		"task: InvokeAction called with a nil action": func() { task.InvokeAction(p, nilAction) },
	}
	inside := map[string]func(w *forkjoin.Worker){
		"task: InvokeSlice called with a nil task": func(w *forkjoin.Worker) {
			task.InvokeSlice(w, []task.RecursiveTask[int]{Fib{1}, nilTask})
		},
		"task: InvokeSlice called with a nil task ": func(w *forkjoin.Worker) { // one task: no join
			task.InvokeSlice(w, []task.RecursiveTask[int]{nilTask})
		},
		"task: InvokeBothActions called with a nil action": func(w *forkjoin.Worker) {
			task.InvokeBothActions(w, nilAction, flagAction{&ran})
		},
		"task: InvokeBothActions called with a nil action ": func(w *forkjoin.Worker) {
			task.InvokeBothActions(w, flagAction{&ran}, nilAction)
		},
	}
	for want, call := range outside {
		t.Run(want, func(t *testing.T) {
			var got any
			within(t, func() { got = recoverValue(call) })
			assert.Equal(t, want, got)
		})
	}
	for want, call := range inside {
		t.Run(want, func(t *testing.T) {
			var got any
			within(t, func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
					got = recoverValue(func() { call(w) })
					return 0
				})
			})
			assert.Equal(t, want[:len(want)-len(trailingSpace(want))], got)
		})
	}
	assert.False(t, ran, "nothing ran alongside a nil task")
	assert.Zero(t, p.Stats().Panics, "nothing reached the pool's panic handler")
}

// flagAction sets its flag when it runs.
type flagAction struct{ ran *bool }

func (a flagAction) Compute(*forkjoin.Worker) { *a.ran = true }

// trailingSpace returns the spaces at the end of s (map keys told apart).
func trailingSpace(s string) string {
	i := len(s)
	for i > 0 && s[i-1] == ' ' {
		i--
	}
	return s[i:]
}
