package forkjoin_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// ignoreFor is how long a task that ignores its context runs on after the
// cancellation: long enough that a call returning at the cancellation
// returns well before the task's write.
const ignoreFor = 100 * time.Millisecond

// writeChecker counts the tasks of a computation that started and the
// writes they made to the caller's memory, and catches any write made
// after the call under test returned.
type writeChecker struct {
	started  atomic.Int64
	writes   atomic.Int64
	returned atomic.Bool
	late     atomic.Int64 // writes made after returned was set
}

func (c *writeChecker) write() {
	if c.returned.Load() {
		c.late.Add(1)
	}
	c.writes.Add(1)
}

// ctxBehaviour is how a task of a canceled computation behaves: it counts
// itself started, runs until it stops, and then writes once (and panics,
// for the panicking kind). Each kind blocks through forkjoin.Block, which
// makes its siblings stealable while it waits, so that the tasks of a
// Join run at the same time.
type ctxBehaviour struct {
	name   string
	panics bool
	run    func(w *forkjoin.Worker, c *writeChecker)
}

var ctxBehaviours = []ctxBehaviour{
	{name: "cooperates", run: func(w *forkjoin.Worker, c *writeChecker) {
		c.started.Add(1)
		forkjoin.Block(w, func() { <-w.Context().Done() })
		c.write()
	}},
	{name: "ignores", run: func(w *forkjoin.Worker, c *writeChecker) {
		c.started.Add(1)
		forkjoin.Block(w, func() { time.Sleep(ignoreFor) })
		c.write()
	}},
	{name: "cooperates-then-panics", panics: true, run: func(w *forkjoin.Worker, c *writeChecker) {
		c.started.Add(1)
		for w.Err() == nil {
			forkjoin.Block(w, func() { time.Sleep(100 * time.Microsecond) })
		}
		c.write()
		panic("boom")
	}},
}

// ctxShape is the computation built around the behaviour: the behaviour as
// the root function, or two of them joined.
type ctxShape struct {
	name  string
	tasks int64
	fn    func(b ctxBehaviour, c *writeChecker) func(*forkjoin.Worker) int
}

var ctxShapes = []ctxShape{
	{name: "root", tasks: 1, fn: func(b ctxBehaviour, c *writeChecker) func(*forkjoin.Worker) int {
		return func(w *forkjoin.Worker) int { b.run(w, c); return 1 }
	}},
	{name: "joined", tasks: 2, fn: func(b ctxBehaviour, c *writeChecker) func(*forkjoin.Worker) int {
		return func(w *forkjoin.Worker) int {
			x, y := forkjoin.Join(w,
				func(w *forkjoin.Worker) int { b.run(w, c); return 1 },
				func(w *forkjoin.Worker) int { b.run(w, c); return 1 })
			return x + y
		}
	}},
}

// ctxCall is a context-taking call whose rule is the package's one rule:
// canceled before its computation completes, it returns ctx.Err() (joined
// with the *PanicError if a task panicked), and only once the
// computation's tasks have stopped. other is a second pool, for calls made
// from a task of another pool.
type ctxCall struct {
	name string
	call func(ctx context.Context, p, other *forkjoin.Pool, fn func(*forkjoin.Worker) int) (int, error)
}

var ctxCalls = []ctxCall{
	{"InvokeContext", func(ctx context.Context, p, _ *forkjoin.Pool, fn func(*forkjoin.Worker) int) (int, error) {
		return forkjoin.InvokeContext(ctx, p, fn)
	}},
	{"InvokeContext/inside-the-pool", func(ctx context.Context, p, _ *forkjoin.Pool, fn func(*forkjoin.Worker) int) (v int, err error) {
		forkjoin.Invoke(p, func(*forkjoin.Worker) int {
			v, err = forkjoin.InvokeContext(ctx, p, fn)
			return 0
		})
		return v, err
	}},
	{"InvokeContext/from-another-pool", func(ctx context.Context, p, other *forkjoin.Pool, fn func(*forkjoin.Worker) int) (v int, err error) {
		forkjoin.Invoke(other, func(*forkjoin.Worker) int {
			v, err = forkjoin.InvokeContext(ctx, p, fn)
			return 0
		})
		return v, err
	}},
	{"SubmitContext+Get", func(ctx context.Context, p, _ *forkjoin.Pool, fn func(*forkjoin.Worker) int) (int, error) {
		return forkjoin.SubmitContext(ctx, p, fn).Get(context.Background())
	}},
	{"SubmitContext+Join/inside-the-pool", func(ctx context.Context, p, _ *forkjoin.Pool, fn func(*forkjoin.Worker) int) (int, error) {
		return joinAsError(p, forkjoin.SubmitContext(ctx, p, fn))
	}},
	{"SubmitContext+Join/from-another-pool", func(ctx context.Context, p, other *forkjoin.Pool, fn func(*forkjoin.Worker) int) (int, error) {
		return joinAsError(other, forkjoin.SubmitContext(ctx, p, fn))
	}},
}

// joinAsError joins f from a task of pool on, and returns what Join
// panicked with as the error.
func joinAsError(on *forkjoin.Pool, f *forkjoin.Future[int]) (v int, err error) {
	forkjoin.Invoke(on, func(w *forkjoin.Worker) int {
		defer func() {
			if r := recover(); r != nil {
				e, ok := r.(error)
				if !ok {
					e = fmt.Errorf("Join panicked with a %T: %v", r, r)
				}
				err = e
			}
		}()
		v = f.Join(w)
		return 0
	})
	return v, err
}

// TestContextContract walks every context-taking call whose context cancels
// its computation (InvokeContext from outside, from a task of the same pool
// and from a task of another pool; SubmitContext's Future through Get and
// through Join) with a task that cooperates (it waits on w.Context()), one
// that ignores the context (it runs on for ignoreFor), and one that
// cooperates and then panics, as the root or as both sides of a Join. The
// context is canceled once every task has started. The call must return
// ctx.Err() (errors.Is; joined with the *PanicError when a task panicked),
// and only once every started task has made its write: no task writes after
// the call returned (the checker counts late writes until the pool is
// closed).
func TestContextContract(t *testing.T) {
	for _, call := range ctxCalls {
		for _, shape := range ctxShapes {
			for _, b := range ctxBehaviours {
				t.Run(call.name+"/"+shape.name+"/"+b.name, func(t *testing.T) {
					p := forkjoin.New(forkjoin.WithParallelism(2))
					other := forkjoin.New(forkjoin.WithParallelism(1))
					var c writeChecker
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					go func() {
						deadline := time.Now().Add(hangTimeout)
						for c.started.Load() < shape.tasks && time.Now().Before(deadline) {
							time.Sleep(50 * time.Microsecond)
						}
						cancel()
					}()
					var v int
					var err error
					within(t, call.name, func() { v, err = call.call(ctx, p, other, shape.fn(b, &c)) })
					atReturn := c.writes.Load()
					c.returned.Store(true)
					closePool(t, p)
					closePool(t, other)

					assert.Zero(t, v)
					assert.ErrorIs(t, err, context.Canceled)
					var pe *forkjoin.PanicError
					if b.panics {
						if assert.ErrorAs(t, err, &pe) {
							assert.Equal(t, "boom", pe.Value)
						}
					} else {
						assert.False(t, errors.As(err, &pe), "no panic, so no *PanicError: %v", err)
					}
					assert.Equal(t, shape.tasks, c.started.Load(), "every task started before the cancel")
					assert.Equal(t, shape.tasks, atReturn, "every task made its write before the call returned")
					assert.Zero(t, c.late.Load(), "writes after the call returned")
				})
			}
		}
	}
}

// TestFutureGetContextBoundsOnlyTheWait: Get's own context bounds the wait
// and nothing else. Canceled, Get returns ctx.Err() at once, whether the
// task ignores its context (it holds on a gate) or cooperates (it sees its
// computation's context done, then holds on the gate while it cleans up):
// the task has not stopped yet (no write, Done is false). Once the task
// has stopped, Get with a live context returns the Future's outcome: the
// result for Submit, ctx.Err() for SubmitContext with the same ctx (it was
// canceled before the computation completed). Get's context does not
// cancel the task: a task of Submit sees w.Err() nil throughout.
func TestFutureGetContextBoundsOnlyTheWait(t *testing.T) {
	cases := []struct {
		name       string
		submit     func(ctx context.Context, p *forkjoin.Pool, fn func(*forkjoin.Worker) int) *forkjoin.Future[int]
		cooperates bool
		wantErr    bool // the Future's outcome after the cancel
	}{
		{"Submit/ignores", func(_ context.Context, p *forkjoin.Pool, fn func(*forkjoin.Worker) int) *forkjoin.Future[int] {
			return forkjoin.Submit(p, fn)
		}, false, false},
		{"SubmitContext/ignores", forkjoin.SubmitContext[int], false, true},
		{"SubmitContext/cooperates", forkjoin.SubmitContext[int], true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(1))
			defer closePool(t, p)
			var c writeChecker
			var sawErr atomic.Bool
			gate := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			f := tc.submit(ctx, p, func(w *forkjoin.Worker) int {
				c.started.Add(1)
				if tc.cooperates {
					<-w.Context().Done()
				}
				<-gate
				sawErr.Store(w.Context().Err() != nil)
				c.write()
				return 1
			})
			waitUntil(t, "the task to start", func() bool { return c.started.Load() == 1 })
			cancel()
			var v int
			var err error
			within(t, "Get(canceled ctx)", func() { v, err = f.Get(ctx) })
			require.ErrorIs(t, err, context.Canceled)
			require.Zero(t, v)
			require.Zero(t, c.writes.Load(), "Get(ctx) returned without waiting for the task")
			require.False(t, f.Done())

			close(gate)
			within(t, "Get(live ctx)", func() { v, err = f.Get(context.Background()) })
			require.Equal(t, int64(1), c.writes.Load(), "Get(live ctx) returned after the task stopped")
			require.True(t, f.Done())
			if tc.wantErr {
				require.ErrorIs(t, err, context.Canceled)
				require.Zero(t, v)
				require.True(t, sawErr.Load())
			} else {
				require.NoError(t, err)
				require.Equal(t, 1, v)
				require.False(t, sawErr.Load(), "Get's context does not cancel the task")
			}
		})
	}
}

// TestExecuteContextBoundsOnlyTheWaitForRoom: ExecuteContext's context
// bounds the wait for room in a full submission queue (WithMaxQueued) and
// nothing else. Canceled while it waits, ExecuteContext returns ctx.Err()
// and fn never runs (so do SubmitContext's Future and InvokeContext). Once fn is accepted, the context has no hold on it:
// fn's w.Context() is context.Background(), so a task that cooperates
// (waits on w.Context() or a gate) and one that ignores its context both
// run to their end after the cancel. With room, fn is accepted even if ctx
// is already done, as semaphore.Weighted.Acquire may succeed then.
func TestExecuteContextBoundsOnlyTheWaitForRoom(t *testing.T) {
	// The calls that cancel their computation also give up the wait for
	// room with ctx.Err(), and their function never runs either.
	waiters := map[string]func(ctx context.Context, p *forkjoin.Pool, ran *atomic.Int64) error{
		"ExecuteContext": func(ctx context.Context, p *forkjoin.Pool, ran *atomic.Int64) error {
			return p.ExecuteContext(ctx, func(*forkjoin.Worker) { ran.Add(1) })
		},
		"SubmitContext": func(ctx context.Context, p *forkjoin.Pool, ran *atomic.Int64) error {
			_, err := forkjoin.SubmitContext(ctx, p, func(*forkjoin.Worker) int { ran.Add(1); return 1 }).Get(context.Background())
			return err
		},
		"InvokeContext": func(ctx context.Context, p *forkjoin.Pool, ran *atomic.Int64) error {
			_, err := forkjoin.InvokeContext(ctx, p, func(*forkjoin.Worker) int { ran.Add(1); return 1 })
			return err
		},
	}
	for name, wait := range waiters {
		t.Run("canceled-while-waiting-for-room/"+name, func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxQueued(1))
			gate := make(chan struct{})
			var running, ran atomic.Int64
			require.NoError(t, p.Execute(func(*forkjoin.Worker) { running.Add(1); <-gate }))
			waitUntil(t, "the worker to be held", func() bool { return running.Load() == 1 })
			require.NoError(t, p.Execute(func(*forkjoin.Worker) {}), "fills the queue")
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() { errc <- wait(ctx, p, &ran) }()
			cancel()
			var err error
			within(t, name, func() { err = <-errc })
			require.ErrorIs(t, err, context.Canceled)
			close(gate)
			closePool(t, p)
			require.Zero(t, ran.Load(), "a task refused for lack of room never runs")
		})
	}
	for _, cooperates := range []bool{false, true} {
		t.Run(fmt.Sprintf("accepted/cooperates=%v", cooperates), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(1))
			var c writeChecker
			var ctxDone atomic.Bool
			gate := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			require.NoError(t, p.ExecuteContext(ctx, func(w *forkjoin.Worker) {
				c.started.Add(1)
				if cooperates {
					select {
					case <-w.Context().Done():
						ctxDone.Store(true)
					case <-gate:
					}
				} else {
					<-gate
				}
				// The test canceled ctx before it opened the gate.
				if w.Context().Err() != nil || w.Err() != nil {
					ctxDone.Store(true)
				}
				c.write()
			}))
			waitUntil(t, "the task to start", func() bool { return c.started.Load() == 1 })
			cancel()
			close(gate)
			closePool(t, p)
			require.Equal(t, int64(1), c.writes.Load())
			require.False(t, ctxDone.Load(), "ExecuteContext's ctx does not reach the task")
		})
	}
	t.Run("done-ctx-with-room", func(t *testing.T) {
		p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxQueued(1))
		var ran atomic.Int64
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.NoError(t, p.ExecuteContext(ctx, func(*forkjoin.Worker) { ran.Add(1) }))
		closePool(t, p)
		require.Equal(t, int64(1), ran.Load())
	})
}

// TestShutdownContextBoundsOnlyTheDrain: Shutdown's context bounds its
// wait for the accepted tasks to finish, and cancels none of them. Done
// before they finish, Shutdown returns an error wrapping ctx.Err() while
// they still run: one that ignores its context (it holds on a gate) and
// one that cooperates with its own computation's context (SubmitContext
// with another context, which Shutdown leaves alone: w.Err() stays nil).
// The tasks run to their end afterwards, and Close waits for them.
func TestShutdownContextBoundsOnlyTheDrain(t *testing.T) {
	for _, cooperates := range []bool{false, true} {
		t.Run(fmt.Sprintf("cooperates=%v", cooperates), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(1))
			var c writeChecker
			var sawErr, probed atomic.Bool
			gate := make(chan struct{})
			taskCtx, stopTask := context.WithCancel(context.Background())
			defer stopTask()
			probe := make(chan struct{})
			f := forkjoin.SubmitContext(taskCtx, p, func(w *forkjoin.Worker) int {
				c.started.Add(1)
				<-probe // opened once Shutdown has returned
				sawErr.Store(w.Context().Err() != nil)
				probed.Store(true)
				if cooperates {
					<-w.Context().Done()
				} else {
					<-gate
				}
				c.write()
				return 0
			})
			waitUntil(t, "the task to start", func() bool { return c.started.Load() == 1 })
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var err error
			within(t, "Shutdown", func() { err = p.Shutdown(ctx) })
			require.ErrorIs(t, err, context.Canceled)
			require.Zero(t, c.writes.Load(), "Shutdown gave up while the task ran")
			require.False(t, f.Done())
			close(probe)
			waitUntil(t, "the task to look at its context", probed.Load)
			if cooperates {
				stopTask()
			} else {
				close(gate)
			}
			closePool(t, p)
			require.Equal(t, int64(1), c.writes.Load())
			require.True(t, f.Done())
			require.False(t, sawErr.Load(), "Shutdown's ctx cancels no task")
		})
	}
}
