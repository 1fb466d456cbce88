package forkjoin_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// boom is a distinct panic value per test, so that a test can tell its own
// panic from any other.
type boom struct{ where string }

// requirePanicError checks that v is a *forkjoin.PanicError carrying want
// as its Value and a stack that shows the panicking function.
func requirePanicError(t *testing.T, v any, want any, stackHas string) *forkjoin.PanicError {
	t.Helper()
	pe, ok := v.(*forkjoin.PanicError)
	require.True(t, ok, "got %T (%v), want *forkjoin.PanicError", v, v)
	require.Equal(t, want, pe.Value)
	require.NotEmpty(t, pe.Stack)
	if stackHas != "" {
		require.Contains(t, string(pe.Stack), stackHas, "the stack should show where the task panicked")
	}
	require.Contains(t, pe.Error(), "panicked")
	return pe
}

// requireHealthy checks that the pool still computes correctly and still has
// all its workers, and no more once the compensating workers of Blocks
// that have ended have retired: a compensating worker leaves when it next
// finds no work after its Block's fn returned (endSpare, exitIdle), so a
// test that used Block may see it still counted for a moment (TestRev23SpawnExactlyOnceBeforeReturn
// read 5 workers on a pool of 4 in a CI run on a loaded machine).
func requireHealthy(t *testing.T, p *forkjoin.Pool) {
	t.Helper()
	var got int
	within(t, "fib after panic", func() {
		got = forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibJoin(w, 15) })
	})
	require.Equal(t, fibSeq(15), got)
	waitUntil(t, "the pool's workers, the compensating ones retired", func() bool {
		return p.Stats().Workers == p.Parallelism()
	})
}

// panicsInA panics in a of a Join.
func panicsInA(w *forkjoin.Worker) int {
	a, b := forkjoin.Join(w,
		func(*forkjoin.Worker) int { panic(boom{"a"}) },
		func(*forkjoin.Worker) int { return 1 })
	return a + b
}

// panicsInB panics in b of a Join.
func panicsInB(w *forkjoin.Worker) int {
	a, b := forkjoin.Join(w,
		func(*forkjoin.Worker) int { return 1 },
		func(*forkjoin.Worker) int { panic(boom{"b"}) })
	return a + b
}

type panicTask struct{ v any }

func (p panicTask) Compute(*forkjoin.Worker) int { panic(p.v) }

type oneTask struct{}

func (oneTask) Compute(*forkjoin.Worker) int { return 1 }

func TestPanicInJoin(t *testing.T) {
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		v := recoverPanic(func() { forkjoin.Invoke(p, panicsInA) })
		requirePanicError(t, v, boom{"a"}, "panicsInA")

		v = recoverPanic(func() { forkjoin.Invoke(p, panicsInB) })
		requirePanicError(t, v, boom{"b"}, "panicsInB")

		// Typed: JoinTasks with a panicking a, then b.
		v = recoverPanic(func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				a, b := forkjoin.JoinTasks[int, int](w, panicTask{boom{"ta"}}, oneTask{})
				return a + b
			})
		})
		requirePanicError(t, v, boom{"ta"}, "panicTask")
		v = recoverPanic(func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				a, b := forkjoin.JoinTasks[int, int](w, oneTask{}, panicTask{boom{"tb"}})
				return a + b
			})
		})
		requirePanicError(t, v, boom{"tb"}, "panicTask")

		// Both panic: a's panic wins.
		v = recoverPanic(func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				a, b := forkjoin.JoinTasks[int, int](w, panicTask{boom{"first"}}, panicTask{boom{"second"}})
				return a + b
			})
		})
		requirePanicError(t, v, boom{"first"}, "")

		requireHealthy(t, p)
	})
}

// TestPanicRecoveredInsideTask checks that a task can recover the
// *PanicError of a Join it made and carry on, and that the worker's join
// machinery is intact afterwards (the next Joins on the same worker work).
func TestPanicRecoveredInsideTask(t *testing.T) {
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		var got int
		var caught []any
		within(t, "recover inside", func() {
			got = forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				for _, fn := range []func(*forkjoin.Worker) int{panicsInA, panicsInB} {
					caught = append(caught, recoverPanic(func() { fn(w) }))
				}
				return fibJoin(w, 15) + fibTask(15).Compute(w)
			})
		})
		require.Equal(t, 2*fibSeq(15), got)
		requirePanicError(t, caught[0], boom{"a"}, "panicsInA")
		requirePanicError(t, caught[1], boom{"b"}, "panicsInB")
		requireHealthy(t, p)
	})
}

// stolenJoin runs a Join whose b is stolen by another worker: a spins until
// b has started elsewhere. It records in stolen whether b ran on another
// worker (false only if nobody stole b within the timeout).
func stolenJoin(w *forkjoin.Worker, stolen *atomic.Bool, a func(started *atomic.Bool) int, b func() int) int {
	var started atomic.Bool
	me := w.Index()
	ra, rb := forkjoin.Join(w,
		func(*forkjoin.Worker) int {
			deadline := time.Now().Add(hangTimeout)
			for !started.Load() && time.Now().Before(deadline) {
				runtime.Gosched()
			}
			return a(&started)
		},
		func(w *forkjoin.Worker) int {
			stolen.Store(w.Index() != me)
			started.Store(true)
			return b()
		})
	return ra + rb
}

// TestPanicInStolenTask checks that a panic in b on the thief reaches the
// joiner, and that a panic in a while b runs on a thief is raised only after
// b has finished (Join never returns or unwinds while its fork still runs).
func TestPanicInStolenTask(t *testing.T) {
	for _, par := range []int{2, 4} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var stolen atomic.Bool
		v := recoverPanic(func() {
			within(t, "stolen b panics", func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
					return stolenJoin(w, &stolen,
						func(*atomic.Bool) int { return 1 },
						func() int { panic(boom{"stolen b"}) })
				})
			})
		})
		require.True(t, stolen.Load(), "b was not stolen")
		requirePanicError(t, v, boom{"stolen b"}, "TestPanicInStolenTask")

		// a panics while the stolen b is still running.
		var bFinished, finishedAtPanic atomic.Bool
		var release atomic.Bool
		v = recoverPanic(func() {
			within(t, "a panics while b is stolen", func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
					defer func() {
						finishedAtPanic.Store(bFinished.Load())
					}()
					stolen.Store(false)
					return stolenJoin(w, &stolen,
						func(*atomic.Bool) int {
							release.Store(true)
							panic(boom{"a while b stolen"})
						},
						func() int {
							deadline := time.Now().Add(hangTimeout)
							for !release.Load() && time.Now().Before(deadline) {
								runtime.Gosched()
							}
							time.Sleep(time.Millisecond) // still running when a panics
							bFinished.Store(true)
							return 1
						})
				})
			})
		})
		requirePanicError(t, v, boom{"a while b stolen"}, "")
		require.True(t, stolen.Load(), "b was not stolen")
		require.True(t, finishedAtPanic.Load(), "Join unwound while its stolen b was still running")
		requireHealthy(t, p)
		within(t, "Close", p.Close)
	}
}

func TestPanicInForkedFuture(t *testing.T) {
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		var f *forkjoin.Future[int]
		v := recoverPanic(func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				f = forkjoin.Fork(w, func(*forkjoin.Worker) int { panic(boom{"fork"}) })
				return f.Join(w)
			})
		})
		pe := requirePanicError(t, v, boom{"fork"}, "TestPanicInForkedFuture")
		require.True(t, f.Done())
		// The future keeps its outcome: Get returns the same *PanicError.
		_, err := f.Get(context.Background())
		require.Same(t, pe, err)

		// A future joined twice panics twice, with the same error.
		var caught [2]any
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			g := forkjoin.ForkTask[int](w, panicTask{boom{"twice"}})
			caught[0] = recoverPanic(func() { g.Join(w) })
			caught[1] = recoverPanic(func() { g.Join(w) })
			return 0
		})
		requirePanicError(t, caught[0], boom{"twice"}, "panicTask")
		require.Same(t, caught[0], caught[1])

		// Submit: Get returns the panic as an error; errors.As finds it and
		// Unwrap exposes an error value.
		sentinel := errors.New("sentinel")
		g := forkjoin.Submit(p, func(*forkjoin.Worker) int { panic(sentinel) })
		var err2 error
		within(t, "Get", func() { _, err2 = g.Get(context.Background()) })
		var pe2 *forkjoin.PanicError
		require.ErrorAs(t, err2, &pe2)
		require.ErrorIs(t, err2, sentinel)
		require.Equal(t, sentinel, pe2.Value)
		requireHealthy(t, p)
	})
}

func TestPanicInExecute(t *testing.T) {
	got := make(chan *forkjoin.PanicError, 10)
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithPanicHandler(func(pe *forkjoin.PanicError) {
		got <- pe
	}))
	defer closePool(t, p)
	require.NoError(t, p.Execute(func(*forkjoin.Worker) { panic(boom{"execute"}) }))
	select {
	case pe := <-got:
		requirePanicError(t, pe, boom{"execute"}, "TestPanicInExecute")
	case <-time.After(hangTimeout):
		t.Fatal("panic handler not called")
	}
	// A panicking handler is contained too.
	p2 := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPanicHandler(func(pe *forkjoin.PanicError) {
		panic("handler panics")
	}))
	require.NoError(t, p2.Execute(func(*forkjoin.Worker) { panic(boom{"x"}) }))
	requireHealthy(t, p2)
	within(t, "Close", p2.Close)
	require.EqualValues(t, 1, p2.Stats().Panics)

	requireHealthy(t, p)
	require.EqualValues(t, 1, p.Stats().Panics)
}

// TestGoexitInTask checks runtime.Goexit (what t.FailNow calls) inside
// tasks: the joiner gets a *PanicError saying so, and the pool replaces the
// worker goroutine, so it keeps all its workers and keeps working.
func TestGoexitInTask(t *testing.T) {
	isGoexit := func(t *testing.T, v any) {
		t.Helper()
		pe, ok := v.(*forkjoin.PanicError)
		require.True(t, ok, "got %T (%v), want *forkjoin.PanicError", v, v)
		require.ErrorIs(t, pe, forkjoin.ErrGoexit, "errors.Is sees the exported sentinel through the *PanicError")
	}
	for _, par := range []int{1, 2, 4} {
		handled := make(chan *forkjoin.PanicError, 1)
		p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithPanicHandler(func(pe *forkjoin.PanicError) {
			handled <- pe
		}))

		// In the invoked task itself.
		var v any
		within(t, "Goexit in Invoke", func() {
			v = recoverPanic(func() { forkjoin.Invoke(p, func(*forkjoin.Worker) int { runtime.Goexit(); return 0 }) })
		})
		isGoexit(t, v)
		requireHealthy(t, p)

		// In a of a Join (b is removed unrun or awaited).
		within(t, "Goexit in Join's a", func() {
			v = recoverPanic(func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
					a, b := forkjoin.Join(w,
						func(*forkjoin.Worker) int { runtime.Goexit(); return 0 },
						func(w *forkjoin.Worker) int { return fibJoin(w, 10) })
					return a + b
				})
			})
		})
		isGoexit(t, v)
		requireHealthy(t, p)

		// In a forked future.
		within(t, "Goexit in Fork", func() {
			v = recoverPanic(func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
					f := forkjoin.Fork(w, func(*forkjoin.Worker) int { runtime.Goexit(); return 0 })
					return fibJoin(w, 10) + f.Join(w)
				})
			})
		})
		isGoexit(t, v)
		requireHealthy(t, p)

		// In a forked future that stays private (forked after another one,
		// which is published), so that its Join runs it on the fast path.
		within(t, "Goexit in a private Fork", func() {
			v = recoverPanic(func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
					g := forkjoin.Fork(w, func(w *forkjoin.Worker) int { return fibJoin(w, 10) })
					f := forkjoin.Fork(w, func(*forkjoin.Worker) int { runtime.Goexit(); return 0 })
					return f.Join(w) + g.Join(w)
				})
			})
		})
		isGoexit(t, v)
		requireHealthy(t, p)

		// In an Execute task: the panic handler hears of it.
		require.NoError(t, p.Execute(func(*forkjoin.Worker) { runtime.Goexit() }))
		select {
		case pe := <-handled:
			isGoexit(t, pe)
		case <-time.After(hangTimeout):
			t.Fatal("panic handler not called for Goexit")
		}
		requireHealthy(t, p)
		within(t, "Close", p.Close)
		require.Zero(t, p.Stats().Workers)
	}
}

// TestPanicErrorFormat checks Error and Unwrap of PanicError.
func TestPanicErrorFormat(t *testing.T) {
	pe := &forkjoin.PanicError{Value: "oops", Stack: []byte("goroutine 1 [running]:\nmain.f()")}
	require.True(t, strings.Contains(pe.Error(), "oops"))
	require.Contains(t, pe.Error(), "main.f()")
	require.Nil(t, pe.Unwrap(), "a non-error value unwraps to nil")
	err := errors.New("inner")
	require.ErrorIs(t, &forkjoin.PanicError{Value: err}, err)
}

// TestPanicInJoinWithUnjoinedFork: when a panics after forking a task it
// does not join, Join still removes b unrun (as documented), after running
// a's leftover fork, which is a's own work. One worker, so nothing is
// stolen. (Before the fix, b sat below a's fork in the deque, and the
// helping wait for b popped and ran both.)
func TestPanicInJoinWithUnjoinedFork(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	var leftoverRan, bRan atomic.Bool
	within(t, "Join with a panicking a", func() {
		v := recoverPanic(func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				a, _ := forkjoin.Join(w,
					func(w *forkjoin.Worker) int {
						forkjoin.Fork(w, func(*forkjoin.Worker) int { leftoverRan.Store(true); return 0 })
						panic(boom{"a"})
					},
					func(*forkjoin.Worker) int { bRan.Store(true); return 0 })
				return a
			})
		})
		pe, ok := v.(*forkjoin.PanicError)
		require.True(t, ok, "got %T %v", v, v)
		require.Equal(t, boom{"a"}, pe.Value)
	})
	require.False(t, bRan.Load(), "b must be removed unrun when a panics")
	require.True(t, leftoverRan.Load(), "a's unjoined fork runs: it is a's work")
}

// TestCapturePanic: the one capture every package uses. A value becomes a
// *PanicError whose stack shows the panicking function; a *PanicError
// passes unchanged (the original stack is kept); nil, which is what a
// deferred recover sees during runtime.Goexit, reports a Goexit.
func TestCapturePanic(t *testing.T) {
	capture := func(f func()) (pe *forkjoin.PanicError) {
		defer func() { pe = forkjoin.CapturePanic(recover()) }()
		f()
		return nil
	}
	pe := capture(func() { panicHere("boom") })
	require.Equal(t, "boom", pe.Value)
	require.Contains(t, string(pe.Stack), "panicHere")
	require.Same(t, pe, capture(func() { panic(pe) }), "a *PanicError passes unchanged")
	require.Same(t, pe, forkjoin.CapturePanic(pe))
	require.ErrorIs(t, forkjoin.CapturePanic(nil), forkjoin.ErrGoexit)
}

//go:noinline
func panicHere(v any) { panic(v) }
