package forkjoin_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// A join or a scope that unwinds from runtime.Goexit (t.FailNow in a test's
// task) still waits for the work it forked that another worker took, as it
// does when it unwinds from a panic: no task of a computation runs after
// the computation has returned, Goexit or not. Before, Join and JoinTasks
// left a stolen b running, and RunScope left its spawned tasks running,
// so Invoke returned ErrGoexit while a task of its computation still ran
// and wrote into what the caller then saw.

// goexitWhileStolenRuns runs one round of the shape every test below
// checks, on p (two workers or more): fork(w, other) makes other available
// to a thief (a Join's b, a JoinTasks' b, a scope's spawned task); the
// forking task then waits until other has started on another worker and
// calls runtime.Goexit, while other is still running (it sleeps
// otherTakes, then records that it finished). It reports whether the
// round happened as arranged (other was stolen within a second), and
// whether other had finished when Invoke returned with its *PanicError.
func goexitWhileStolenRuns(t *testing.T, p *forkjoin.Pool, fork func(w *forkjoin.Worker, a, other func(*forkjoin.Worker))) (arranged, finishedFirst bool) {
	t.Helper()
	const otherTakes = 100 * time.Millisecond
	var started, finished, exited atomic.Bool
	other := func(*forkjoin.Worker) {
		started.Store(true)
		time.Sleep(otherTakes) // long enough that the old Invoke returned first
		finished.Store(true)
	}
	a := func(*forkjoin.Worker) {
		deadline := time.Now().Add(time.Second)
		for !started.Load() {
			if time.Now().After(deadline) {
				return // not stolen: this round does not count
			}
			runtime.Gosched()
		}
		exited.Store(true)
		runtime.Goexit()
	}
	var v any
	within(t, "Invoke whose task calls Goexit", func() {
		v = recoverPanic(func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
				fork(w, a, other)
				return struct{}{}
			})
		})
		finishedFirst = finished.Load() // read before anything else waits
	})
	if !exited.Load() {
		return false, false
	}
	pe, ok := v.(*forkjoin.PanicError)
	require.True(t, ok, "got %T (%v), want *forkjoin.PanicError", v, v)
	require.ErrorIs(t, pe, forkjoin.ErrGoexit)
	return true, finishedFirst
}

// sleeperTask is a typed task for JoinTasks and SpawnTask running fn.
type sleeperTask struct{ fn func(*forkjoin.Worker) }

func (s sleeperTask) Compute(w *forkjoin.Worker) struct{} { s.fn(w); return struct{}{} }

type sleeperAction struct{ fn func(*forkjoin.Worker) }

func (s sleeperAction) Compute(w *forkjoin.Worker) { s.fn(w) }

// TestGoexitWaitsForStolenWork: after a Goexit in a Join's a (or a
// JoinTasks' a, or a scope's body), Invoke reports ErrGoexit only once the
// task another worker took from it has finished. Each case runs until
// three rounds happened as arranged (the other task stolen while a waits).
func TestGoexitWaitsForStolenWork(t *testing.T) {
	cases := map[string]func(w *forkjoin.Worker, a, other func(*forkjoin.Worker)){
		"Join": func(w *forkjoin.Worker, a, other func(*forkjoin.Worker)) {
			forkjoin.Join(w,
				func(w *forkjoin.Worker) struct{} { a(w); return struct{}{} },
				func(w *forkjoin.Worker) struct{} { other(w); return struct{}{} })
		},
		"JoinTasks": func(w *forkjoin.Worker, a, other func(*forkjoin.Worker)) {
			forkjoin.JoinTasks[struct{}, struct{}](w, sleeperTask{a}, sleeperTask{other})
		},
		"RunScope": func(w *forkjoin.Worker, a, other func(*forkjoin.Worker)) {
			forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
				s.Spawn(w, other)
				a(w)
			})
		},
		"SpawnTask": func(w *forkjoin.Worker, a, other func(*forkjoin.Worker)) {
			forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
				forkjoin.SpawnTask(s, w, sleeperAction{other})
				a(w)
			})
		},
	}
	for name, fork := range cases {
		t.Run(name, func(t *testing.T) {
			for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
				p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMode(mode))
				rounds := 0
				for attempt := 0; rounds < 3 && attempt < 30; attempt++ {
					arranged, finishedFirst := goexitWhileStolenRuns(t, p, fork)
					if !arranged {
						continue
					}
					rounds++
					require.True(t, finishedFirst, "%v: Invoke returned ErrGoexit while the stolen task still ran", mode)
				}
				require.Positive(t, rounds, "%v: the other task was never stolen in 30 attempts", mode)
				requireHealthy(t, p)
				closePool(t, p)
			}
		})
	}
}

// TestNestedGoexitStillWaits: a Join unwinding from a Goexit waits for its
// stolen b helping, and the task it helps with may call runtime.Goexit in
// turn, which unwinds that wait; the wait starts again (untilSettled), so
// Invoke still reports ErrGoexit only once b has finished. Arranged with
// two workers: a Goexits on W1 once b runs on W2; b waits until W1, in
// its wait, has asked W2 for work, then forks bB (published, since W1
// asked) and runs bA for a while; W1 steals bB, which calls Goexit.
func TestNestedGoexitStillWaits(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	rounds := 0
	for attempt := 0; rounds < 3 && attempt < 30; attempt++ {
		var bStarted, aExited, bBRan, bAFinished atomic.Bool
		wait := func(cond func() bool) bool {
			for deadline := time.Now().Add(time.Second); !cond(); runtime.Gosched() {
				if time.Now().After(deadline) {
					return false
				}
			}
			return true
		}
		var v any
		var finishedFirst bool
		within(t, "Invoke whose Join unwinds twice", func() {
			v = recoverPanic(func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
					forkjoin.Join(w,
						func(*forkjoin.Worker) struct{} {
							if wait(bStarted.Load) {
								aExited.Store(true)
								runtime.Goexit()
							}
							return struct{}{}
						},
						func(w2 *forkjoin.Worker) struct{} {
							bStarted.Store(true)
							if !wait(aExited.Load) || !wait(func() bool { return forkjoin.Asked(w2) }) {
								return struct{}{}
							}
							forkjoin.Join(w2,
								func(*forkjoin.Worker) struct{} {
									wait(bBRan.Load)
									time.Sleep(100 * time.Millisecond) // the old wait ended at bB's Goexit
									bAFinished.Store(true)
									return struct{}{}
								},
								func(*forkjoin.Worker) struct{} {
									bBRan.Store(true)
									runtime.Goexit()
									return struct{}{}
								})
							return struct{}{}
						})
					return struct{}{}
				})
			})
			finishedFirst = bAFinished.Load()
		})
		if !bBRan.Load() || !aExited.Load() {
			continue // not arranged: bB ran on W2, or b was not stolen
		}
		rounds++
		pe, ok := v.(*forkjoin.PanicError)
		require.True(t, ok, "got %T (%v), want *forkjoin.PanicError", v, v)
		require.ErrorIs(t, pe, forkjoin.ErrGoexit)
		require.True(t, finishedFirst, "Invoke returned while b still ran")
	}
	require.Positive(t, rounds, "never arranged in 30 attempts")
	t.Logf("%d rounds arranged", rounds)
	requireHealthy(t, p)
}
