package forkjoin_test

// Review rev35: cross-pool waits, shutdown, contexts and Block with
// submitted tasks taken in batches into the workers' rings
// (takebatch.go).

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// lateCtx is a context whose AfterFunc (which context.AfterFunc uses when
// the context has one) runs its functions only when release is called:
// the delay the runtime may put between a cancel and the goroutine
// context.AfterFunc starts, made deterministic. It has a Done channel of
// its own and derives from no cancelCtx: review22's lateAfterFuncCtx
// embedded one, which context.AfterFunc found (through Value) and
// registered with directly, so that its own AfterFunc was never called
// and it delayed nothing.
type lateCtx struct {
	context.Context // Background: no values, no cancelCtx
	done            chan struct{}
	once            sync.Once
	mu              sync.Mutex
	canceled        bool
	pending         []func()
}

func newLateCtx() *lateCtx {
	return &lateCtx{Context: context.Background(), done: make(chan struct{})}
}

func (c *lateCtx) Done() <-chan struct{} { return c.done }

func (c *lateCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.canceled {
		return context.Canceled
	}
	return nil
}

func (c *lateCtx) cancel() {
	c.once.Do(func() {
		c.mu.Lock()
		c.canceled = true
		c.mu.Unlock()
		close(c.done)
	})
}

func (c *lateCtx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, f)
	return func() bool { return false }
}

func (c *lateCtx) release() {
	c.mu.Lock()
	fs := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, f := range fs {
		go f()
	}
}

// TestRev35CanceledRootInRingIsSkipped: a SubmitContext task whose
// context is canceled while it waits, in the queue or in a worker's ring
// (a batch), is skipped when a worker takes it, however late the
// context's AfterFunc runs (lateCtx): its function never runs,
// its Future reports context.Canceled, and it counts as completed. On
// main the start of a submitted root looked only at computation.canceled,
// which the AfterFunc sets on a goroutine of its own: the function ran,
// with w.Err() nil, after the cancel had returned.
func TestRev35CanceledRootInRingIsSkipped(t *testing.T) {
	for _, n := range []int{1, 12} { // alone in the queue; the last of a batch
		t.Run(fmt.Sprintf("queued=%d", n), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(1))
			defer closePool(t, p)
			lctx := newLateCtx()
			defer lctx.release()
			cancel := lctx.cancel
			release := holdWorkers(t, p)
			firstRuns, gate := make(chan struct{}), make(chan struct{})
			var others sync.WaitGroup
			others.Add(n - 1)
			for i := range n - 1 {
				require.NoError(t, p.Execute(func(*forkjoin.Worker) {
					if i == 0 {
						close(firstRuns)
						<-gate
					}
					others.Done()
				}))
			}
			var ran, sawErr atomic.Bool
			f := forkjoin.SubmitContext(lctx, p, func(w *forkjoin.Worker) int {
				ran.Store(true)
				sawErr.Store(w.Err() != nil)
				return 1
			})
			release()
			if n > 1 {
				within(t, "the batch's first task", func() { <-firstRuns })
				require.Equal(t, n-1, p.Stats().QueuedNormal, "the rest of the batch is in the ring")
			}
			cancel()
			close(gate)
			var err error
			within(t, "Get", func() { _, err = f.Get(context.Background()) })
			require.ErrorIs(t, err, context.Canceled)
			assert.False(t, ran.Load(), "the task ran after its context was canceled (w.Err() non-nil: %v)", sawErr.Load())
			within(t, "the other tasks", others.Wait)
			waitUntil(t, "Completed", func() bool { s := p.Stats(); return s.Completed == s.Submitted })
		})
	}
}

// TestRev35ForeignWaiterServesItsRingByPriority: the only worker of A
// takes a batch; its first task X0 invokes pool B and waits there
// (waitForeign), so the worker runs its pool's tasks meanwhile, its own
// ring's first: X1, nested, holds it until B's task, which waits for X1
// to start, has queued an Urgent task U on A; U then starts before X2, and the rest of the batch
// in submission order, all on the waiting worker, before B's task (which
// waits for the whole batch) returns. Holds on main (6461e8b).
func TestRev35ForeignWaiterServesItsRingByPriority(t *testing.T) {
	a := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithName("A"))
	defer closePool(t, a)
	b := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithName("B"))
	defer closePool(t, b)
	const n = 12
	var mu sync.Mutex
	var order []string
	record := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	x1Runs, urgentQueued := make(chan struct{}), make(chan struct{})
	var batch sync.WaitGroup
	batch.Add(n - 1)
	var aWorker atomic.Pointer[forkjoin.Worker]
	onA := func(w *forkjoin.Worker) {
		if old := aWorker.Swap(w); old != nil && old != w {
			t.Errorf("a task of A ran on another worker")
		}
	}
	release := holdWorkers(t, a)
	for i := range n {
		require.NoError(t, a.Execute(func(w *forkjoin.Worker) {
			onA(w)
			record(fmt.Sprint("X", i))
			switch i {
			case 0:
				forkjoin.Invoke(b, func(*forkjoin.Worker) int {
					<-x1Runs
					require.NoError(t, a.ExecutePriority(forkjoin.Urgent, func(w *forkjoin.Worker) { onA(w); record("U") }))
					close(urgentQueued)
					batch.Wait()
					return 0
				})
				record("X0 back")
				return
			case 1:
				close(x1Runs)
				<-urgentQueued
			}
			batch.Done()
		}))
	}
	release()
	within(t, "the batch", func() {
		waitUntil(t, "X0 back", func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == n+2 })
	})
	want := []string{"X0", "X1", "U"}
	for i := 2; i < n; i++ {
		want = append(want, fmt.Sprint("X", i))
	}
	want = append(want, "X0 back")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, want, order)
}
