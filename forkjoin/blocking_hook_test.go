package forkjoin_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestBlockingInHookRunsPlain: Blocking called from a worker hook calls fn
// on the hook's goroutine, with no compensating worker and no task run
// meanwhile. A hook runs no task, so there is no task's place to take; and
// a compensating worker calls the hooks too, so each one's hook started
// the next: with hooks that log through Blocking, one Invoke and Close on
// a pool of one worker started and retired compensating workers by the
// tens of thousands (36,944 once) before a start found none free. With no
// compensating worker free, Blocking waited for fn as for another pool's
// task, running the pool's tasks inside the start hook, which
// WithWorkerHooks says runs none.
func TestBlockingInHookRunsPlain(t *testing.T) {
	t.Run("no compensating worker", func(t *testing.T) {
		var starts, exits atomic.Int64
		hook := func(c *atomic.Int64) func(int) {
			return func(int) { forkjoin.Blocking(func() { time.Sleep(100 * time.Microsecond) }); c.Add(1) }
		}
		p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(4),
			forkjoin.WithWorkerHooks(hook(&starts), hook(&exits)))
		within(t, "fib", func() {
			require.Equal(t, fibSeq(15), forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibJoin(w, 15) }))
		})
		within(t, "Close", p.Close)
		require.EqualValues(t, 1, starts.Load(), "goroutines that called the start hook: worker 0 and the compensating workers its hooks started")
		require.EqualValues(t, 1, exits.Load())
	})
	t.Run("no task in the start hook", func(t *testing.T) {
		inHook, gate := make(chan struct{}), make(chan struct{})
		var hookDone, ranInHook atomic.Bool
		start := func(int) {
			forkjoin.Blocking(func() { close(inHook); <-gate })
			hookDone.Store(true)
		}
		p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(0), forkjoin.WithWorkerHooks(start, nil))
		defer closePool(t, p)
		within(t, "the start hook", func() { <-inHook })
		ran := make(chan struct{})
		require.NoError(t, p.Execute(func(*forkjoin.Worker) {
			ranInHook.Store(!hookDone.Load())
			close(ran)
		}))
		select { // the task may not run now; give a wrong runtime the time to run it
		case <-ran:
		case <-time.After(50 * time.Millisecond):
		}
		close(gate)
		within(t, "the task", func() { <-ran })
		require.False(t, ranInHook.Load(), "the task ran inside the start hook")
	})
	t.Run("forks published", func(t *testing.T) {
		// A start hook that runs a computation inline (Invoke) and blocks
		// until its fork has run: the fork must be stealable meanwhile, as
		// Block makes it in a task. Worker 1 is busy until the hook blocks;
		// the first fork goes public (a deque keeps private elements only
		// above public ones), the second stays private, so that only
		// Blocking can publish it.
		var pool atomic.Pointer[forkjoin.Pool]
		ready, hookDone := make(chan struct{}), make(chan struct{})
		tRuns, inBlocking := make(chan struct{}), make(chan struct{})
		p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithWorkerHooks(func(i int) {
			if i != 0 {
				return
			}
			<-ready
			forkjoin.Invoke(pool.Load(), func(w *forkjoin.Worker) int {
				d := forkjoin.Fork(w, func(*forkjoin.Worker) int { return 0 }) // public: the deque was empty
				ran := make(chan struct{})
				f := forkjoin.Fork(w, func(*forkjoin.Worker) int { close(ran); return 1 }) // private, above d
				forkjoin.Blocking(func() { close(inBlocking); <-ran })                     // worker 1 takes both forks
				return f.Join(w) + d.Join(w)
			})
			close(hookDone)
		}, nil))
		defer closePool(t, p)
		pool.Store(p)
		require.NoError(t, p.Execute(func(*forkjoin.Worker) { close(tRuns); <-inBlocking })) // on worker 1
		within(t, "worker 1 busy", func() { <-tRuns })
		close(ready)
		within(t, "the start hook's fork", func() { <-hookDone })
	})
}

// TestHookJoinRunsNoSubmission: a join waiting inside a worker hook (an
// Invoke inline there, whose fork another worker stole) helps only with
// the hook's own computation, as a join in a task does, and never runs a
// submitted task: WithWorkerHooks says a worker in start runs no task.
// The hook ran with computation number 0, which a waiting worker reads as
// "any task" (waitForeign's), so the join polled the submission queue and
// ran the queued Execute inside the start hook.
func TestHookJoinRunsNoSubmission(t *testing.T) {
	var pool atomic.Pointer[forkjoin.Pool]
	var inHook, ranInHook atomic.Bool
	ready, hookDone := make(chan struct{}), make(chan struct{})
	tRuns, tGo := make(chan struct{}), make(chan struct{})
	fStarted, fGo := make(chan struct{}), make(chan struct{})
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithWorkerHooks(func(i int) {
		if i != 0 {
			return
		}
		<-ready
		inHook.Store(true)
		forkjoin.Invoke(pool.Load(), func(w *forkjoin.Worker) int {
			f := forkjoin.Fork(w, func(*forkjoin.Worker) int { close(fStarted); <-fGo; return 1 }) // public: the deque was empty
			close(tGo)                                                                             // worker 1 is free to steal f
			<-fStarted
			return f.Join(w) // waits: worker 1 runs f
		})
		inHook.Store(false)
		close(hookDone)
	}, nil))
	defer closePool(t, p)
	pool.Store(p)
	require.NoError(t, p.Execute(func(*forkjoin.Worker) { close(tRuns); <-tGo })) // worker 1, until the fork exists
	within(t, "worker 1 busy", func() { <-tRuns })
	ran := make(chan struct{})
	require.NoError(t, p.Execute(func(w *forkjoin.Worker) { ranInHook.Store(w.Index() == 0 && inHook.Load()); close(ran) }))
	close(ready)
	within(t, "f starts", func() { <-fStarted })
	select { // the Execute may not run now; give a wrong runtime the time to run it
	case <-ran:
	case <-time.After(50 * time.Millisecond):
	}
	close(fGo)
	within(t, "the hook", func() { <-hookDone })
	within(t, "the Execute", func() { <-ran })
	require.False(t, ranInHook.Load(), "the join in the start hook ran a submitted task")
}
