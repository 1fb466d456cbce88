package forkjoin_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestForeignSpawnNotRunByUnrelatedWaiter: a task of pool B that spawns
// into a scope of pool A (here from InvokeContext(ctx, B, …) inside the
// scope's body) pushes the task on B's deque, where it must not look like
// a task of any computation of B: computation numbers (node.group) are
// given out per pool, and the first submission of A and of B get the same
// one. A worker of B waiting in a join of that computation of B ran the
// spawned task nested in its wait (handoff.go forbids it), so the task's
// runtime.Goexit unwound the unrelated computation of B: RB's Invoke failed
// with ErrGoexit. The waiter must hand the task off instead; an idle worker
// of B runs it, and only A's scope sees the Goexit.
//
// Pool B has three workers and no compensating worker: bx runs RB and waits
// in its scope, by holds RB's blocked task, bz runs fn, the only one free.
func TestForeignSpawnNotRunByUnrelatedWaiter(t *testing.T) {
	a := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, a)
	b := forkjoin.New(forkjoin.WithParallelism(3), forkjoin.WithMaxBlocked(0))
	defer closePool(t, b)

	held, release := make(chan struct{}), make(chan struct{})
	rbDone := make(chan any, 1)
	go func() { // RB: B's first submission, so its number is A's first's
		rbDone <- recoverPanic(func() {
			forkjoin.Invoke(b, func(w *forkjoin.Worker) int {
				forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
					s.Spawn(w, func(*forkjoin.Worker) {
						close(held)
						<-release // holds one worker of B until the end
					})
					forkjoin.Block(w, func() { <-held }) // publishes the task for a thief
				})
				return 0
			})
		})
	}()
	defer close(release)
	within(t, "RB's task starts on another worker", func() { <-held })

	var started atomic.Bool
	var raVal any
	within(t, "A's scope with a task spawned on B", func() {
		raVal = recoverPanic(func() {
			forkjoin.Invoke(a, func(w *forkjoin.Worker) int { // A's first submission
				forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
					_, err := forkjoin.InvokeContext(context.Background(), b, func(w *forkjoin.Worker) int {
						s.Spawn(w, func(*forkjoin.Worker) {
							started.Store(true)
							runtime.Goexit()
						})
						// Publish the task and keep this worker busy until
						// RB's waiter has either run it or handed it off.
						forkjoin.Block(w, func() {
							for !started.Load() && forkjoin.HandoffLen(b) == 0 {
								runtime.Gosched()
							}
						})
						return 0
					})
					if err != nil {
						panic(err)
					}
				})
				return 0
			})
		})
	})
	require.True(t, started.Load())
	pe, ok := raVal.(*forkjoin.PanicError)
	require.True(t, ok, "A's scope reports its own task's Goexit; got %v", raVal)
	require.ErrorIs(t, pe, forkjoin.ErrGoexit)

	release <- struct{}{} // RB's held task finishes (the deferred close then finds nobody)
	var rbVal any
	within(t, "RB returns", func() { rbVal = <-rbDone })
	if rbVal != nil {
		t.Fatalf("RB, a computation of B unrelated to A's scope, failed with the spawned task's Goexit: %v", rbVal)
	}
}
