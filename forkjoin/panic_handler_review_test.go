// Review tests (rev10) of 43c3e73 and 44e1e68, the reporter that ran its
// pool's tasks while the panic handler ran. Each failed on 1e98e7c; those
// two commits were reverted, and all but TestHookForeignWaitRunsNoSubmission
// passed on 43c3e73^ already. That one found an older defect (a hook's wait
// for another pool ran submitted tasks), fixed in waitForeign.

package forkjoin

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestHookForeignWaitRunsNoSubmission: WithWorkerHooks says a worker in
// start runs no task. A start hook that waits for another pool (Invoke on
// q) waits in waitForeign, which ignored inHook and ran p's queued Execute
// inside the hook (failed on 1e98e7c and on 43c3e73^).
func TestHookForeignWaitRunsNoSubmission(t *testing.T) {
	q := New(WithParallelism(1))
	defer q.Close()
	var inHook atomic.Bool
	var ranInHook atomic.Bool
	gate := make(chan struct{})
	hookDone := make(chan struct{})
	var once atomic.Bool
	p := New(WithParallelism(1), WithWorkerHooks(func(int) {
		if !once.CompareAndSwap(false, true) {
			return
		}
		inHook.Store(true)
		Invoke(q, func(*Worker) int { <-gate; return 1 })
		inHook.Store(false)
		close(hookDone)
	}, nil))
	defer p.Close()
	ran := make(chan struct{})
	require.NoError(t, p.Execute(func(*Worker) { ranInHook.Store(inHook.Load()); close(ran) }))
	select {
	case <-ran:
	case <-time.After(100 * time.Millisecond):
	}
	close(gate)
	testenv.Within(t, "hook", func() { <-hookDone; <-ran })
	require.False(t, ranInHook.Load(), "a submitted task ran inside the start hook")
}

// execDepth counts the Execute'd tasks nested on the calling goroutine's
// stack (frames of execNode.execute), the calling one included.
func execDepth() int {
	pcs := make([]uintptr, 1<<20)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	d := 0
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, "forkjoin.(*execNode).execute") {
			d++
		}
		if !more {
			return d
		}
	}
}

// TestPanicBurstDoesNotNestOnReporter: a burst of panicking Execute'd tasks
// queued on a pool of one worker, with a handler that returns at once.
// With 43c3e73, a reporter that ran tasks while it waited for the handler
// took the next queued task before the handler's goroutine had even run,
// that one panicked and waited in turn, and so on: every task of the
// burst nested on the worker's stack (and each PanicError's debug.Stack
// walked all of it: quadratic). Without it each runs at depth 1.
func TestPanicBurstDoesNotNestOnReporter(t *testing.T) {
	const N = 300
	var maxDepth atomic.Int64
	p := New(WithParallelism(1), WithPanicHandler(func(*PanicError) {}))
	hold := make(chan struct{})
	require.NoError(t, p.Execute(func(*Worker) { <-hold }))
	for range N {
		require.NoError(t, p.Execute(func(*Worker) {
			raiseMax(&maxDepth, int64(execDepth()))
			panic("boom")
		}))
	}
	testenv.Within(t, "the burst", func() {
		close(hold)
		p.Close()
	})
	require.LessOrEqual(t, maxDepth.Load(), int64(8), "Execute'd tasks nested on one worker's stack")
}

// TestRetiredSpareReporterRunsNoTask: with 43c3e73, a compensating worker
// (Block) that reported an Execute'd task's panic kept running the pool's
// tasks while the handler ran, also after the Block it stood in for had
// returned and it was told to retire: a pool of parallelism 1 then ran two
// tasks at once for as long as the handler ran.
func TestRetiredSpareReporterRunsNoTask(t *testing.T) {
	release := make(chan struct{})
	var handled atomic.Bool
	p := New(WithParallelism(1), WithPanicHandler(func(*PanicError) { <-release; handled.Store(true) }))
	defer p.Close()
	blockGate := make(chan struct{})
	inBlock := make(chan struct{})
	tDone := make(chan struct{})
	require.NoError(t, p.Execute(func(w *Worker) {
		Block(w, func() { close(inBlock); <-blockGate })
		close(tDone)
	}))
	<-inBlock
	onSpare := make(chan int, 1)
	require.NoError(t, p.Execute(func(w *Worker) { onSpare <- w.Index(); panic("boom") }))
	require.Equal(t, 1, <-onSpare, "the panicking task runs on the compensating worker")
	close(blockGate) // the Block returns: the spare is told to retire
	<-tDone
	var running, maxRunning atomic.Int64
	done := make(chan struct{}, 64)
	testenv.Within(t, "the tasks", func() {
		for range 64 {
			require.NoError(t, p.Execute(func(*Worker) {
				raiseMax(&maxRunning, running.Add(1))
				time.Sleep(200 * time.Microsecond)
				running.Add(-1)
				done <- struct{}{}
			}))
		}
		for range 64 {
			<-done
		}
	})
	close(release)
	require.Equal(t, int64(1), maxRunning.Load(), "tasks running at once on a pool of parallelism 1 after the Block returned")
}

// TestCloseWaitsForHandlerAcrossGoexit: with 44e1e68, a task run while the
// reporter waited for the handler called runtime.Goexit, which unwound the
// report: the panicking task completed (deferred) while its handler still
// ran, and Close returned with the handler running on, after the pool was
// gone. A reporter that waits for the handler plainly keeps Close waiting
// until the handler returns.
func TestCloseWaitsForHandlerAcrossGoexit(t *testing.T) {
	var calls atomic.Int64
	var returned atomic.Bool
	executed := make(chan struct{})
	var p *Pool
	p = New(WithParallelism(1), WithPanicHandler(func(*PanicError) {
		if calls.Add(1) != 1 {
			return // the Goexit's report
		}
		err := p.Execute(func(*Worker) { runtime.Goexit() })
		close(executed)
		if err != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
		returned.Store(true)
	}))
	var handlerRan bool
	testenv.Within(t, "Close", func() {
		require.NoError(t, p.Execute(func(*Worker) { panic("boom") }))
		<-executed
		p.Close()
		handlerRan = returned.Load()
	})
	for !returned.Load() { // let the handler end before goleak looks
		time.Sleep(time.Millisecond)
	}
	require.True(t, handlerRan, "Close returned while the panic handler still ran")
}
