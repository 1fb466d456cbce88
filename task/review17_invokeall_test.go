package task_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// stepTask is a task of TestInvokeAllStolenHalfRunsOn: it closes started,
// waits for wait (in Block, which publishes its worker's forks), closes then (each if any), and panics if boom.
type stepTask struct {
	started, wait, then chan struct{}
	boom                bool
	ran                 *atomic.Bool
}

func (s stepTask) Compute(w *forkjoin.Worker) int {
	if s.ran != nil {
		s.ran.Store(true)
	}
	if s.started != nil {
		close(s.started)
	}
	if s.wait != nil {
		forkjoin.Block(w, func() { <-s.wait }) // publishes the forks a thief waits for
	}
	if s.then != nil {
		close(s.then)
	}
	if s.boom {
		panic("boom")
	}
	return 0
}

// TestInvokeAllStolenHalfRunsOn: InvokeAll splits its tasks by halving and
// forks the upper half; a task of a half another worker has stolen that
// had not started when a sibling panicked still runs (its thief goes on
// with the half), so only the tasks still on the panicking worker's own
// deque are dropped unrun. The doc said no task that had not started when
// a sibling panicked ever runs (review rev17).
func TestInvokeAllStolenHalfRunsOn(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	t2started, t0panicking := make(chan struct{}), make(chan struct{})
	var t3ran atomic.Bool
	var got any
	within(t, func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			got = recoverValue(func() {
				task.InvokeSlice(w, []stepTask{
					{wait: t2started, then: t0panicking, boom: true}, // t0: panics once t2 runs on the thief
					{},                                      // t1: forked by t0's JoinTasks, removed unrun
					{started: t2started, wait: t0panicking}, // t2: the stolen half's first
					{ran: &t3ran},                           // t3: not started when t0 panics
				})
			})
			return 0
		})
	})
	var pe *forkjoin.PanicError
	assert.ErrorAs(t, got.(error), &pe)
	assert.True(t, t3ran.Load(), "t3, not started when t0 panicked, ran on the thief")
}
