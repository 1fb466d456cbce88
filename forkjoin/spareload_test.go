package forkjoin

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestSpareRetiresUnderSteadyLoad: a compensating worker retires after
// the task it stood in for has returned from Block, even when it keeps
// finding work. On one worker, 200 tasks each submit themselves again as
// they end, so that the submission queue is never empty; a task blocks for
// a moment in Block, and once it has returned the pool must be back to one
// worker goroutine while the load goes on. On 1c45f08 the spare, told to
// retire, left only when it found no work, so under steady load the pool
// ran two workers on one worker's parallelism for as long as the load
// lasted (the hang limit failed the test).
func TestSpareRetiresUnderSteadyLoad(t *testing.T) {
	p := New(WithParallelism(1), WithMaxBlocked(1))
	defer p.Close()
	const loads = 200
	var stop atomic.Bool
	var ended sync.WaitGroup
	ended.Add(loads)
	var task func(*Worker)
	task = func(*Worker) {
		x := 0
		for k := range 10000 {
			x += k * k % 7
		}
		_ = x
		if stop.Load() || p.Execute(task) != nil {
			ended.Done()
		}
	}
	for range loads {
		if err := p.Execute(task); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { stop.Store(true); ended.Wait() }()
	blocked := make(chan struct{})
	release := make(chan struct{})
	returned := make(chan struct{})
	if err := p.Execute(func(w *Worker) {
		Block(w, func() {
			close(blocked)
			<-release
		})
		close(returned)
	}); err != nil {
		t.Fatal(err)
	}
	<-blocked
	testenv.WaitUntil(t, "the spare started", func() bool { return p.Stats().Workers == 2 })
	close(release)
	<-returned
	testenv.WaitUntil(t, "the spare retired under load", func() bool { return p.Stats().Workers == 1 })
}
