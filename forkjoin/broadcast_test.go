package forkjoin_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// perWorker counts calls by worker index.
type perWorker []atomic.Int64

func (c perWorker) each(t *testing.T, want int64, n int) {
	t.Helper()
	for i := range c {
		if i < n {
			require.Equal(t, want, c[i].Load(), "worker %d", i)
		} else {
			require.Zero(t, c[i].Load(), "compensating worker %d", i)
		}
	}
}

// TestBroadcastRunsOncePerWorker: from outside and from a task, on pools
// of 1 to 8 workers in both modes, fn runs exactly once on each of the
// Parallelism() workers, given that worker, and never on a compensating
// one; WorkerStats counts one Broadcast call per worker.
func TestBroadcastRunsOncePerWorker(t *testing.T) {
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		n := p.Parallelism()
		calls := make(perWorker, p.MaxWorkers())
		fn := func(w *forkjoin.Worker) {
			if w.Pool() != p {
				panic("wrong pool")
			}
			calls[w.Index()].Add(1)
		}
		within(t, "Broadcast from outside", func() { forkjoin.Broadcast(p, fn) })
		calls.each(t, 1, n)
		var inline bool
		within(t, "Broadcast from a task", func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				before := calls[w.Index()].Load()
				forkjoin.Broadcast(w, func(v *forkjoin.Worker) {
					if v == w {
						inline = calls[w.Index()].Load() == before
					}
					fn(v)
				})
				return 0
			})
		})
		calls.each(t, 2, n)
		require.True(t, inline, "the calling worker ran its own call")
		within(t, "Broadcast on the pool from its task", func() {
			forkjoin.Invoke(p, func(*forkjoin.Worker) int { forkjoin.Broadcast(p, fn); return 0 })
		})
		calls.each(t, 3, n)
		waitUntil(t, "counters published", func() bool {
			for _, s := range p.WorkerStats()[:n] {
				if s.Broadcasts != 3 {
					return false
				}
			}
			return true
		})
	})
}

// TestBroadcastFromTasks: Broadcasts called at once from tasks on every
// worker complete: each caller runs its own call and, while it waits, the
// calls the others posted to it. 16 tasks each broadcast once.
func TestBroadcastFromTasks(t *testing.T) {
	for _, par := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(par), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(par))
			defer closePool(t, p)
			calls := make(perWorker, p.MaxWorkers())
			const tasks = 16
			within(t, "concurrent Broadcasts", func() {
				forkjoin.ScopeOn(p, func(s *forkjoin.Scope, w *forkjoin.Worker) {
					for range tasks {
						s.Spawn(w, func(w *forkjoin.Worker) {
							forkjoin.Broadcast(w, func(w *forkjoin.Worker) { calls[w.Index()].Add(1) })
						})
					}
				})
			})
			calls.each(t, tasks, par)
		})
	}
}

// TestBroadcastRunsOnWorkerWaitingInJoin: a worker waiting in a join runs
// its call between the tasks it helps with. Worker X forks child and
// joins it after the other worker stole it; the child broadcasts and so
// needs X, which is waiting for the child: without the calls run while
// waiting, this deadlocks.
func TestBroadcastRunsOnWorkerWaitingInJoin(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxBlocked(-1))
	defer closePool(t, p)
	calls := make(perWorker, p.MaxWorkers())
	within(t, "join of a child that broadcasts", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			started := make(chan struct{})
			f := forkjoin.Fork(w, func(v *forkjoin.Worker) int {
				close(started)
				forkjoin.Broadcast(v, func(u *forkjoin.Worker) { calls[u.Index()].Add(1) })
				return v.Index()
			})
			// Block publishes the fork; the other worker steals it.
			forkjoin.Block(w, func() { <-started })
			if f.Join(w) == w.Index() {
				panic("the child was not stolen")
			}
			return 0
		})
	})
	calls.each(t, 1, 2)
}

// TestBroadcastWaitsForBusyWorker: a worker blocked in a long task runs its
// call only after the task; Broadcast waits for it, and returns then.
func TestBroadcastWaitsForBusyWorker(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	release, busy := make(chan struct{}), make(chan int, 1)
	require.NoError(t, p.Execute(func(w *forkjoin.Worker) { busy <- w.Index(); <-release }))
	busyIndex := <-busy
	calls := make(perWorker, p.MaxWorkers())
	done := make(chan struct{})
	go func() {
		defer close(done)
		forkjoin.Broadcast(p, func(w *forkjoin.Worker) { calls[w.Index()].Add(1) })
	}()
	waitUntil(t, "the idle worker's call", func() bool { return calls[1-busyIndex].Load() == 1 })
	time.Sleep(10 * time.Millisecond) // give a wrong implementation time to return
	select {
	case <-done:
		t.Fatal("Broadcast returned while a worker had not run its call")
	default:
	}
	require.Zero(t, calls[busyIndex].Load())
	close(release)
	within(t, "Broadcast after the long task", func() { <-done })
	calls.each(t, 1, 2)
}

// TestBroadcastPanics: a panic of fn on one worker reaches the caller as a
// *PanicError after every other call has run, from outside and from a
// task; a Goexit in fn likewise, as ErrGoexit, and the pool carries on.
func TestBroadcastPanics(t *testing.T) {
	boom := errors.New("boom")
	for _, kind := range []string{"panic", "goexit"} {
		for _, from := range []string{"outside", "task"} {
			t.Run(kind+"/"+from, func(t *testing.T) {
				p := forkjoin.New(forkjoin.WithParallelism(4))
				defer closePool(t, p)
				calls := make(perWorker, p.MaxWorkers())
				fn := func(w *forkjoin.Worker) {
					calls[w.Index()].Add(1)
					if w.Index() == 2 {
						if kind == "panic" {
							panic(boom)
						}
						runtime.Goexit()
					}
				}
				var got any
				within(t, "Broadcast", func() {
					got = recoverPanic(func() {
						if from == "outside" {
							forkjoin.Broadcast(p, fn)
						} else {
							forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
								if w.Index() == 2 {
									return -1 // its own call would unwind this task: not this test
								}
								forkjoin.Broadcast(w, fn)
								return 0
							})
						}
					})
				})
				if got == nil {
					return // the task landed on worker 2
				}
				pe, ok := got.(*forkjoin.PanicError)
				require.True(t, ok, "%T %v", got, got)
				if kind == "panic" {
					require.ErrorIs(t, pe, boom)
				} else {
					require.ErrorIs(t, pe, forkjoin.ErrGoexit)
				}
				calls.each(t, 1, 4)
				require.Equal(t, 3, forkjoin.Invoke(p, func(*forkjoin.Worker) int { return 3 }), "the pool carries on")
			})
		}
	}
}

// TestBroadcastClosedPool: a closed pool refuses a Broadcast with
// ErrClosed from outside, and from a task still running on it.
func TestBroadcastClosedPool(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	calls := make(perWorker, p.MaxWorkers())
	fn := func(w *forkjoin.Worker) { calls[w.Index()].Add(1) }
	fromTask := make(chan any, 1)
	require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
		p.Close() // from a task: returns at once
		fromTask <- recoverPanic(func() { forkjoin.Broadcast(w, fn) })
	}))
	within(t, "Broadcast from a task of a closing pool", func() {
		require.Equal(t, forkjoin.ErrClosed, <-fromTask)
	})
	within(t, "Close", p.Close)
	calls.each(t, 0, 2)
	require.Equal(t, forkjoin.ErrClosed, recoverPanic(func() { forkjoin.Broadcast(p, fn) }))
	calls.each(t, 0, 2)
	require.PanicsWithValue(t, "forkjoin: Broadcast called with a nil function", func() { forkjoin.Broadcast(p, nil) })
}

// TestBroadcastFromOtherPool: a task of another pool (one worker each)
// broadcasts on p and keeps its own pool going while it waits.
func TestBroadcastFromOtherPool(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	other := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, other)
	var ranOn *forkjoin.Pool
	within(t, "Broadcast from another pool", func() {
		forkjoin.Invoke(other, func(*forkjoin.Worker) int {
			forkjoin.Broadcast(p, func(w *forkjoin.Worker) {
				ranOn = w.Pool()
				forkjoin.Invoke(other, func(*forkjoin.Worker) int { return 0 }) // needs other's worker
			})
			return 0
		})
	})
	require.Same(t, p, ranOn)
}

// TestBroadcastNil: a nil Runner or *Pool means Default(), from outside
// and from a task of Default() (where the calling worker runs its own
// call inline); a nil *Worker panics with the package's one message (see
// also TestNilWorkerOneMessage).
func TestBroadcastNil(t *testing.T) {
	def := forkjoin.Default()
	var nilPool *forkjoin.Pool
	for name, r := range map[string]forkjoin.Runner{"nil": nil, "nil *Pool": nilPool} {
		t.Run(name, func(t *testing.T) {
			calls := make(perWorker, def.MaxWorkers())
			fn := func(w *forkjoin.Worker) {
				if w.Pool() != def {
					panic("not Default()")
				}
				calls[w.Index()].Add(1)
			}
			within(t, "Broadcast", func() { forkjoin.Broadcast(r, fn) })
			calls.each(t, 1, def.Parallelism())
			within(t, "Broadcast inside Default()", func() {
				forkjoin.Invoke(def, func(*forkjoin.Worker) int { forkjoin.Broadcast(r, fn); return 0 })
			})
			calls.each(t, 2, def.Parallelism())
		})
	}
	var nilWorker *forkjoin.Worker
	require.PanicsWithValue(t, "forkjoin: Broadcast called with a nil *Worker",
		func() { forkjoin.Broadcast(nilWorker, func(*forkjoin.Worker) {}) })
}

// exitCounter is a WithWorkerHooks exit hook that counts exits.
type exitCounter struct{ n atomic.Int32 }

func (c *exitCounter) exit(int) { c.n.Add(1) }

// TestBroadcastOnClosedPoolFromInside: code of a closed pool that holds no
// work in flight (a fork never joined, which outlives its root; a start
// hook) calls Broadcast once the pool is closed. It gets ErrClosed, and
// Close returns. Before the fix Broadcast skipped the closed check from
// inside, posted a share to a worker that had exited meanwhile, and
// waited for it forever, holding Close up with it. Since review rev27 a
// regular worker no longer leaves while another runs user code
// (Pool.quiesced), so the other worker is still there; the refusal stays,
// as an exit hook may still Broadcast once the others have gone
// (TestExitHookCallsIntoItsPool).
func TestBroadcastOnClosedPoolFromInside(t *testing.T) {
	t.Run("unjoined fork", func(t *testing.T) {
		var exits exitCounter
		p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithWorkerHooks(nil, exits.exit))
		running, gate := make(chan struct{}), make(chan struct{})
		got := make(chan any, 1)
		require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
			forkjoin.Fork(w, func(w *forkjoin.Worker) int { // never joined
				close(running)
				<-gate
				got <- recoverPanic(func() { forkjoin.Broadcast(w, func(*forkjoin.Worker) {}) })
				return 0
			})
		}))
		<-running
		closed := make(chan struct{})
		go func() { p.Close(); close(closed) }()
		waitUntil(t, "the pool closed", p.Closed)
		require.Zero(t, exits.n.Load(), "a worker left while the fork ran")
		close(gate)
		within(t, "Close after a fork's Broadcast", func() { <-closed })
		require.Equal(t, forkjoin.ErrClosed, <-got)
	})
	t.Run("start hook", func(t *testing.T) {
		var exits exitCounter
		gate := make(chan struct{})
		got := make(chan any, 1)
		var p *forkjoin.Pool
		p = forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithWorkerHooks(func(i int) {
			if i == 0 {
				<-gate
				got <- recoverPanic(func() { forkjoin.Broadcast(p, func(*forkjoin.Worker) {}) })
			}
		}, exits.exit))
		closed := make(chan struct{})
		go func() { p.Close(); close(closed) }()
		waitUntil(t, "the pool closed", p.Closed) // worker 0 is in its start hook
		require.Zero(t, exits.n.Load(), "a worker left while worker 0 ran its start hook")
		close(gate)
		within(t, "Close after a start hook's Broadcast", func() { <-closed })
		require.Equal(t, forkjoin.ErrClosed, <-got)
	})
}

// TestExitHookCallsIntoItsPool: an exit hook that calls Close or
// Broadcast on its own pool gets the same answer whether or not a worker of
// another pool is running (Close returns; Broadcast panics with
// ErrClosed). Before the fix the exiting worker counted as idle, so the
// hook was taken for a caller from outside when no other pool was busy
// (Close waited for the hook's own goroutine to exit: a deadlock) and for
// one of the pool's workers otherwise (Broadcast posted to exited workers:
// Close hung).
func TestExitHookCallsIntoItsPool(t *testing.T) {
	for _, otherBusy := range []bool{false, true} {
		t.Run(fmt.Sprintf("otherPoolBusy=%v", otherBusy), func(t *testing.T) {
			if otherBusy {
				q := forkjoin.New(forkjoin.WithParallelism(1))
				stop, started := make(chan struct{}), make(chan struct{})
				require.NoError(t, q.Execute(func(*forkjoin.Worker) { close(started); <-stop }))
				<-started
				defer func() { close(stop); closePool(t, q) }()
			}
			var p *forkjoin.Pool
			p = forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithWorkerHooks(nil, func(int) { p.Close() }))
			within(t, "Close with an exit hook that calls Close", p.Close)

			var exits atomic.Int32
			got := make(chan any, 2)
			p = forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithWorkerHooks(nil, func(int) {
				if exits.Add(1) == 2 { // the last worker to exit
					got <- recoverPanic(func() { forkjoin.Broadcast(p, func(*forkjoin.Worker) {}) })
				}
			}))
			within(t, "Close with an exit hook that calls Broadcast", p.Close)
			require.Equal(t, forkjoin.ErrClosed, <-got)
		})
	}
}

// TestBroadcastGoexitInWaitWaitsForShares: Broadcast from a task waits for
// every share, helping its computation meanwhile, and a task it runs may
// call runtime.Goexit, which unwinds the wait (review rev22's remark). It
// must not unwind Broadcast while a share still runs: the enclosing Invoke
// reports ErrGoexit only once the other worker's share has finished.
// Arranged on two workers: the task forks x, which calls Goexit, and
// broadcasts; the other worker's share sleeps, and the caller, its own
// share done, runs x in its wait. Likewise when the caller's own share
// calls Goexit (runOwnShare's wait) and a task run in that wait does too.
func TestBroadcastGoexitInWaitWaitsForShares(t *testing.T) {
	for _, ownShareExits := range []bool{false, true} {
		p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}))
		var otherFinished, xRan atomic.Bool
		var v any
		var finishedFirst bool
		within(t, "Invoke whose Broadcast wait unwinds", func() {
			v = recoverPanic(func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
					own := w.Index()
					x := forkjoin.Fork(w, func(*forkjoin.Worker) int { xRan.Store(true); runtime.Goexit(); return 0 })
					forkjoin.Broadcast(w, func(sw *forkjoin.Worker) {
						if sw.Index() != own {
							time.Sleep(100 * time.Millisecond) // the old wait ended at x's Goexit
							otherFinished.Store(true)
						} else if ownShareExits {
							runtime.Goexit()
						}
					})
					return x.Join(w)
				})
			})
			finishedFirst = otherFinished.Load()
		})
		closePool(t, p)
		pe, ok := v.(*forkjoin.PanicError)
		require.True(t, ok, "got %T (%v)", v, v)
		require.ErrorIs(t, pe, forkjoin.ErrGoexit)
		require.True(t, xRan.Load() || ownShareExits, "x never ran")
		require.True(t, finishedFirst, "Broadcast unwound while a share still ran (own share exits: %v)", ownShareExits)
	}
}
