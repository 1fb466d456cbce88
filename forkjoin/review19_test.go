package forkjoin_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// Review rev19 of settleForeign (5c45ab2): a worker of p whose task waits
// for a task U of pool q (waitForeign) runs p's tasks meanwhile; one of
// them calls runtime.Goexit, and the worker then waits on in
// settleForeign, blocked behind a compensating worker when one is free.
// What U needs from that worker must still come while it waits there.

// goexitThenForeign runs, on a fresh pool p made with opts and a pool q
// of one worker: a task of p waits for U on q; U submits to p a task that
// calls Goexit (run by the waiting worker, p's only idle one), waits until
// it has, and then calls then. Invoke(p) must report ErrGoexit; probe,
// if not nil, is called as soon as it has returned, and its answer
// returned.
func goexitThenForeign(t *testing.T, p *forkjoin.Pool, then func(), probe func() bool) (probed bool) {
	t.Helper()
	q := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, q)
	var exited atomic.Bool
	var v any
	within(t, "Invoke whose foreign wait unwinds", func() {
		v = recoverPanic(func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
				goexitMarkerA(func() {
					forkjoin.Invoke(q, func(*forkjoin.Worker) struct{} {
						require.NoError(t, p.Execute(func(*forkjoin.Worker) {
							if onStack("goexitMarkerA") { // on the waiting worker
								exited.Store(true)
								runtime.Goexit()
							}
						}))
						if waitBriefly(exited.Load) {
							time.Sleep(20 * time.Millisecond) // into settleForeign
							then()
						}
						return struct{}{}
					})
				})
				return struct{}{}
			})
		})
		if probe != nil {
			probed = probe()
		}
	})
	require.True(t, exited.Load(), "not arranged: the Goexit task ran elsewhere")
	pe, ok := v.(*forkjoin.PanicError)
	require.True(t, ok, "got %T (%v), want *forkjoin.PanicError", v, v)
	require.ErrorIs(t, pe, forkjoin.ErrGoexit)
	return probed
}

// TestSettleForeignRunsBroadcastShares: U broadcasts to p. The share of
// the waiting worker must run while it waits in settleForeign, as it
// does in waitForeign and in every other wait of a worker; blocked on the
// latch, the worker never ran it, and U waited for the Broadcast, the
// worker for U: a deadlock (on 3fce050 the Broadcast had not returned
// after two seconds; on b33c5b7 the wait ended with the Goexit and the
// share ran).
func TestSettleForeignRunsBroadcastShares(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}))
	defer closePool(t, p)
	var ran atomic.Int32
	broadcastReturned := false
	goexitThenForeign(t, p, func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			forkjoin.Broadcast(p, func(*forkjoin.Worker) { ran.Add(1) })
		}()
		select {
		case <-done:
			broadcastReturned = true
		case <-time.After(2 * time.Second): // give up, so that the test ends: the unwinding then runs the share
		}
	}, nil)
	require.True(t, broadcastReturned, "Broadcast to p did not return while p's worker waited in settleForeign")
	require.EqualValues(t, 1, ran.Load())
	requireHealthyAfterSpare(t, p)
}

// TestSettleForeignShareGoexitStillWaits: as above, and the share itself
// calls Goexit: the settling wait that ran it must go on (as untilSettled
// makes every settling wait do), so that Invoke still reports ErrGoexit
// only after U has finished.
func TestSettleForeignShareGoexitStillWaits(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}))
	defer closePool(t, p)
	var finished atomic.Bool
	finishedFirst := goexitThenForeign(t, p, func() {
		go func() {
			_ = recoverPanic(func() {
				forkjoin.Broadcast(p, func(*forkjoin.Worker) { runtime.Goexit() })
			})
		}()
		time.Sleep(100 * time.Millisecond) // the share ran meanwhile, and unwound the wait
		finished.Store(true)
	}, finished.Load)
	require.True(t, finishedFirst, "Invoke returned while the task it waited for on another pool still ran")
	requireHealthyAfterSpare(t, p)
}

// TestSettleForeignFlushesRetiredBatch: the waiting worker runs spawned
// tasks of a scope S of p (another computation, on p's other worker), the
// third of which calls Goexit: the first two sit in the worker's batch of
// retired tasks (scope.go, "Batched retirement"). U waits for S's RunScope
// to return. settleForeign blocked without flushing that batch, so S
// never finished while the worker waited, and the worker waited for U (on
// 3fce050 S had not finished after two seconds; on b33c5b7 the restarted
// loop flushed it).
func TestSettleForeignFlushesRetiredBatch(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}))
	defer closePool(t, p)
	q := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, q)
	rounds := 0
	for attempt := 0; rounds < 2 && attempt < 20; attempt++ {
		var sStarted, inForeign, exited atomic.Bool
		var onWaiter atomic.Int32
		sDone := make(chan struct{})
		go func() { // S, on p's other worker
			defer close(sDone)
			_ = recoverPanic(func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
					sStarted.Store(true)
					if !waitBriefly(inForeign.Load) {
						return struct{}{}
					}
					forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
						for range 8 {
							s.Spawn(w, func(*forkjoin.Worker) {
								if !onStack("goexitMarkerA") {
									time.Sleep(20 * time.Millisecond) // leave the rest to the waiting worker
									return
								}
								if onWaiter.Add(1) == 3 {
									exited.Store(true)
									runtime.Goexit()
								}
							})
						}
					})
					return struct{}{}
				})
			})
		}()
		waitBriefly(sStarted.Load) // S runs on one worker, the waiting task on the other
		sFinished := false
		within(t, "Invoke whose foreign wait unwinds", func() {
			_ = recoverPanic(func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
					goexitMarkerA(func() {
						forkjoin.Invoke(q, func(*forkjoin.Worker) struct{} {
							inForeign.Store(true)
							select {
							case <-sDone:
								sFinished = true
							case <-time.After(2 * time.Second):
							}
							return struct{}{}
						})
					})
					return struct{}{}
				})
			})
			<-sDone
		})
		if !exited.Load() {
			continue // not arranged
		}
		rounds++
		t.Logf("attempt %d: onWaiter %d sFinished %v", attempt, onWaiter.Load(), sFinished)
		require.True(t, sFinished, "scope S did not finish while p's worker waited in settleForeign")
	}
	require.Positive(t, rounds, "never arranged in 20 attempts")
	requireHealthyAfterSpare(t, p)
}

// TestSettleForeignSlowReportsOnce: the slow-task handler reports the
// waiting task once. The Goexit of the task run in the wait skipped its
// endRoot, so while settleForeign waited, the watchdog saw that task,
// finished, as still running, under a number not yet reported, and
// reported the waiting task a second time (on 3fce050 two reports; on
// b33c5b7 the wait ended with the Goexit, one).
func TestSettleForeignSlowReportsOnce(t *testing.T) {
	const threshold = 40 * time.Millisecond
	var reports atomic.Int32
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}),
		forkjoin.WithSlowTaskHandler(threshold, func(*forkjoin.Pool, int, time.Duration) { reports.Add(1) }))
	defer closePool(t, p)
	q := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, q)
	var exited atomic.Bool
	within(t, "Invoke whose foreign wait unwinds", func() {
		_ = recoverPanic(func() {
			forkjoin.Invoke(p, func(*forkjoin.Worker) struct{} {
				waitUntil(t, "the waiting task reported", func() bool { return reports.Load() == 1 })
				forkjoin.Invoke(q, func(*forkjoin.Worker) struct{} {
					require.NoError(t, p.Execute(func(*forkjoin.Worker) {
						exited.Store(true)
						runtime.Goexit()
					}))
					if waitBriefly(exited.Load) {
						time.Sleep(8 * threshold) // the watchdog looks every threshold/4
					}
					return struct{}{}
				})
				return struct{}{}
			})
		})
	})
	require.True(t, exited.Load())
	require.EqualValues(t, 1, reports.Load(), "the waiting task was reported more than once")
}

// TestMaxQueuedPanicHandlerSubmitDoesNotDeadlock: a panic handler that
// resubmits to its own full pool. The worker that reported the panic waits
// for the handler without running anything, so the handler waiting for
// room waited for a take that only that worker, p's only one, could make:
// the pool deadlocked (on 3fce050 the handler's ExecuteContext gave up
// after two seconds with context.DeadlineExceeded).
func TestMaxQueuedPanicHandlerSubmitDoesNotDeadlock(t *testing.T) {
	var p *forkjoin.Pool
	handlerErr := make(chan error, 1)
	var retried atomic.Bool
	p = forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxQueued(1),
		forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			handlerErr <- p.ExecuteContext(ctx, func(*forkjoin.Worker) { retried.Store(true) })
		}))
	defer closePool(t, p)
	var fillerRan atomic.Bool
	require.NoError(t, p.Execute(func(*forkjoin.Worker) {
		require.NoError(t, p.Execute(func(*forkjoin.Worker) { fillerRan.Store(true) })) // the queue is full
		panic("boom")
	}))
	var err error
	within(t, "the panic handler's submission", func() { err = <-handlerErr })
	require.NoError(t, err, "the panic handler waited for room that only the worker waiting for it could make")
	waitUntil(t, "both tasks ran", func() bool { return fillerRan.Load() && retried.Load() })
}

// TestSettleForeignNestedGoexitNoSpare: with no compensating worker, the
// settling wait helps with any task of p, and one of those may call Goexit
// in turn: the wait goes on (untilSettled), so Invoke still reports
// ErrGoexit only after the task it waited for on q has finished.
func TestSettleForeignNestedGoexitNoSpare(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(-1), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}))
	defer closePool(t, p)
	var finished, second atomic.Bool
	finishedFirst := goexitThenForeign(t, p, func() {
		require.NoError(t, p.Execute(func(*forkjoin.Worker) {
			second.Store(true)
			runtime.Goexit()
		}))
		if waitBriefly(second.Load) {
			time.Sleep(100 * time.Millisecond)
		}
		finished.Store(true)
	}, finished.Load)
	require.True(t, second.Load(), "the second Goexit task never ran")
	require.True(t, finishedFirst, "Invoke returned while the task it waited for on another pool still ran")
	requireHealthyAfterSpare(t, p)
}
