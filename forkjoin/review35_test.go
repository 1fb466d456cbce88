package forkjoin_test

// Review rev35: cross-pool waits, shutdown, contexts and Block with
// submitted tasks taken in batches into the workers' rings
// (takebatch.go).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// goroutinesBack waits until the process runs no more goroutines than
// base, the count at the test's start: the pools' workers, compensating
// workers and Blocking's goroutines have all exited (TestMain's goleak
// looks only once every test has run).
func goroutinesBack(t *testing.T, base int) {
	t.Helper()
	waitUntil(t, "the pools' goroutines to exit", func() bool { return runtime.NumGoroutine() <= base })
}

// TestRev35CloseAcrossPoolsWithRingsAndForeignWaits: pool A's tasks,
// taken in batches, block while A's rings still hold tasks: X0 waits in
// Invoke on pool B (waitForeign); X1, run by its worker inside that wait
// or by another worker, blocks in Block (a compensating worker then
// takes ring tasks one at a time), in Blocking with no compensating
// worker (its worker waits for fn as for another pool, nested in X0's
// wait, running ring tasks), or plainly; X2 blocks plainly wherever it
// runs. Where that holds every worker of A (one worker, or two with X1
// plain), some of the other 21 tasks wait in the rings and the queue
// (Stats counts them); else they run meanwhile. Then a task of B calls A.Shutdown with a short
// deadline, which gives up counting every accepted task of A not
// finished, ring tasks included, and another task of B (or an outside
// goroutine) calls A.Close, which must wait for them all: it returns only
// after every task of A has run exactly once, with Completed equal to
// Submitted and nothing queued, and every goroutine of both pools exits
// once B is closed too. Holds on main (6461e8b).
func TestRev35CloseAcrossPoolsWithRingsAndForeignWaits(t *testing.T) {
	for _, par := range []int{1, 2} {
		for _, block := range []string{"Block", "BlockingNoSpare", "plain"} {
			for _, from := range []string{"B's task", "outside"} {
				if par == 1 && block == "plain" {
					continue // X0's wait would run X1 or X2, which hold A's only worker for good
				}
				t.Run(fmt.Sprintf("p=%d/%s/close-from-%s", par, block, from), func(t *testing.T) {
					closeAcrossPools(t, par, block, from == "B's task")
				})
			}
		}
	}
}

func closeAcrossPools(t *testing.T, par int, block string, fromB bool) {
	base := runtime.NumGoroutine()
	opts := []forkjoin.Option{forkjoin.WithParallelism(par), forkjoin.WithName("A")}
	if block == "BlockingNoSpare" {
		opts = append(opts, forkjoin.WithMaxBlocked(-1))
	}
	a := forkjoin.New(opts...)
	b := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithName("B"))
	const n = 24
	allBlocked := par == 1 || block == "plain"
	var ran [n]atomic.Int32
	gateB, gateX1, gateX2 := make(chan struct{}), make(chan struct{}), make(chan struct{})
	x0Waits, x1Blocks, x2Blocks := make(chan struct{}), make(chan struct{}), make(chan struct{})
	release := holdWorkers(t, a)
	for i := range n {
		require.NoError(t, a.Execute(func(w *forkjoin.Worker) {
			defer ran[i].Add(1)
			switch i {
			case 0:
				forkjoin.Invoke(b, func(*forkjoin.Worker) int { close(x0Waits); <-gateB; return 0 })
			case 1:
				fn := func() { close(x1Blocks); <-gateX1 }
				switch block {
				case "Block":
					forkjoin.Block(w, fn)
				case "BlockingNoSpare":
					forkjoin.Blocking(fn)
				default:
					fn()
				}
			case 2:
				close(x2Blocks)
				<-gateX2
			}
		}))
	}
	release()
	within(t, "X0 in waitForeign, X1 and X2 blocked", func() { <-x0Waits; <-x1Blocks; <-x2Blocks })
	notRun := func() (k int) {
		for i := 3; i < n; i++ {
			if ran[i].Load() == 0 {
				k++
			}
		}
		return k
	}
	unfinished := 3
	if allBlocked {
		// A worker in a foreign wait may have run the younger tasks of
		// its own ring before X2, at the front of another's: the order
		// within a level is free within the bound K (takebatch.go).
		k := notRun()
		require.Positive(t, k, "the rings hold tasks")
		s := a.Stats()
		require.Equal(t, k, s.QueuedNormal, "the rest wait in the rings and the queue: %v", s)
		unfinished += k
	} else {
		// Run meanwhile: from the rings, on X0's worker inside its
		// foreign wait, on the free worker, on Block's compensating
		// worker, or on X1's worker inside Blocking's wait.
		waitUntil(t, "the rest of the batch", func() bool { return notRun() == 0 })
	}
	shutdownErr := make(chan error, 1)
	require.NoError(t, b.Execute(func(*forkjoin.Worker) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		shutdownErr <- a.Shutdown(ctx)
	}))
	var err error
	within(t, "Shutdown", func() { err = <-shutdownErr })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), fmt.Sprintf("with %d submitted tasks unfinished", unfinished))
	closed := make(chan struct{})
	closeA := func() { a.Close(); close(closed) }
	if fromB {
		require.NoError(t, b.Execute(func(*forkjoin.Worker) { closeA() }))
	} else {
		go closeA()
	}
	select {
	case <-closed:
		t.Fatal("A.Close returned while X0, X1 and X2 still ran")
	case <-time.After(5 * time.Millisecond):
	}
	close(gateX2)
	close(gateX1)
	close(gateB)
	within(t, "A.Close", func() { <-closed })
	for i := range n {
		require.Equal(t, int32(1), ran[i].Load(), "task %d", i)
	}
	s := a.Stats()
	require.Equal(t, s.Submitted, s.Completed, "%v", s)
	require.Zero(t, s.Queued, "%v", s)
	require.Zero(t, s.Workers, "%v", s)
	closePool(t, b)
	goroutinesBack(t, base)
}

// TestRev35CrossPoolRingsStress: two pools of two workers with small
// take batches drain bursts of submissions taken in batches, whose tasks
// invoke the other pool (which may invoke back: waitForeign on both
// sides), join Futures of Submits to their own pool (a claim, perhaps of
// a task in a ring) and to the other (a foreign wait), run
// SubmitContext tasks whose contexts are canceled at random (skipped if
// not started), and Block or call Blocking; then a task of B shuts A
// down with a deadline while bursts still arrive, and both are closed
// from outside. Not a Close from B's task: a worker of B may run it
// nested in a foreign wait, above a task of B that a task of A waits
// for, and the Close then waits for itself (Pool.Close's known limit,
// one level removed). Nor does a task whose Future tasks join wait for
// another task: run nested in its wait (directly, or through a chain
// of foreign waits across the two pools), its joiner would wait for it
// from above it on the same stack, as waitForeign's nesting allows
// (the first versions of this test hung so, with the joined tasks
// invoking the other pool). So every wait for a task is for one
// started later, or for one that waits for none: no cycle. Every accepted
// task runs exactly once, a canceled one at most once (once if its
// Future reports no error), Stats ends with Completed equal to
// Submitted and nothing queued, and every goroutine exits. Holds on main
// (6461e8b).
func TestRev35CrossPoolRingsStress(t *testing.T) {
	base := runtime.NumGoroutine()
	a := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithTakeBatch(4), forkjoin.WithPriorityAging(3), forkjoin.WithName("A"))
	b := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithTakeBatch(8), forkjoin.WithName("B"))
	var (
		mu       sync.Mutex
		ran      = map[int64]int{}
		accepted = map[int64]bool{}
		mayRun   = map[int64]bool{} // canceled SubmitContext tasks: run at most once
		nextID   atomic.Int64
		pending  sync.WaitGroup
	)
	body := func() (int64, func()) {
		id := nextID.Add(1)
		return id, func() { mu.Lock(); ran[id]++; mu.Unlock() }
	}
	decide := func(id int64, ok, maybe bool) {
		mu.Lock()
		accepted[id] = ok
		mayRun[id] = maybe
		mu.Unlock()
	}
	other := func(p *forkjoin.Pool) *forkjoin.Pool {
		if p == a {
			return b
		}
		return a
	}
	prios := []forkjoin.Priority{forkjoin.Urgent, forkjoin.Normal, forkjoin.Background}
	// leaf is a task that counts its run and may block; it may invoke
	// q (nil: not) with another leaf.
	var leaf func(q *forkjoin.Pool, r uint64, run func()) func(*forkjoin.Worker)
	leaf = func(q *forkjoin.Pool, r uint64, run func()) func(*forkjoin.Worker) {
		return func(w *forkjoin.Worker) {
			defer run()
			switch r % 6 {
			case 0:
				forkjoin.Block(w, func() { time.Sleep(50 * time.Microsecond) })
			case 1:
				forkjoin.Blocking(func() { time.Sleep(50 * time.Microsecond) })
			case 2, 3:
				if q != nil {
					id, run := body()
					ok := recoverPanic(func() {
						forkjoin.InvokePriority(q, prios[r%3], func(w *forkjoin.Worker) int { leaf(nil, r/7, run)(w); return 0 })
					}) == nil
					decide(id, ok, false)
				}
			}
		}
	}
	// burst submits, from outside, a burst of tasks to p at one level,
	// some of which join Futures submitted just before.
	burst := func(p *forkjoin.Pool, rng *rand.Rand) {
		prio := prios[rng.IntN(3)]
		own := make([]*forkjoin.Future[int], 3)
		foreign := make([]*forkjoin.Future[int], 2)
		submit := func(q *forkjoin.Pool, fs []*forkjoin.Future[int]) {
			for j := range fs {
				id, run := body()
				r := rng.Uint64()
				// Joined by tasks: it waits for no task (no Invoke, no
				// Blocking; Block does not nest tasks), or a joiner run
				// nested in its wait could wait for it from above it
				// on the same stack (see the test's comment).
				fn := leaf(nil, r-r%6+[]uint64{0, 4, 5}[r%3], run)
				fs[j] = forkjoin.SubmitPriority(q, prio, func(w *forkjoin.Worker) int { fn(w); return j })
				pending.Add(1)
				go func() {
					defer pending.Done()
					_, err := fs[j].Get(context.Background())
					decide(id, err == nil, false)
				}()
			}
		}
		submit(p, own)
		submit(other(p), foreign)
		ctx, cancel := context.WithCancel(context.Background())
		for j := range 12 {
			id, run := body()
			r := rng.Uint64()
			switch j % 4 {
			case 0: // joins the Futures: claims own ones (in a ring perhaps), waits foreign for the others
				decide(id, p.ExecutePriority(prio, func(w *forkjoin.Worker) {
					defer run()
					for k, f := range append(append([]*forkjoin.Future[int]{}, own...), foreign...) {
						if v := recoverPanic(func() { f.Join(w) }); v != nil {
							assert.ErrorIs(t, v.(error), forkjoin.ErrClosed, "future %d", k)
						}
					}
				}) == nil, false)
			case 1: // canceled at random
				f := forkjoin.SubmitContext(ctx, p, func(w *forkjoin.Worker) int { leaf(other(p), r, run)(w); return 0 })
				pending.Add(1)
				go func() {
					defer pending.Done()
					_, err := f.Get(context.Background())
					decide(id, err == nil, err != nil && !errors.Is(err, forkjoin.ErrClosed))
				}()
			default:
				decide(id, p.ExecutePriority(prio, leaf(other(p), r, run)) == nil, false)
			}
		}
		if rng.IntN(2) == 0 {
			cancel()
		} else {
			defer cancel()
		}
	}
	var wg sync.WaitGroup
	phase := func(seed uint64, rounds int) {
		for s := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(s)))
				for range rounds {
					p := a
					if rng.IntN(2) == 0 {
						p = b
					}
					burst(p, rng)
				}
			}()
		}
	}
	phase(1, 60)
	within(t, "the first bursts", wg.Wait)
	phase(2, 60)
	shutdownA := make(chan error, 1)
	time.Sleep(time.Millisecond)
	require.NoError(t, b.Execute(func(*forkjoin.Worker) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		shutdownA <- a.Shutdown(ctx)
	}))
	within(t, "the second bursts", wg.Wait)
	within(t, "A.Shutdown from B's task", func() {
		if err := <-shutdownA; err != nil {
			require.ErrorIs(t, err, context.DeadlineExceeded)
		}
	})
	closePool(t, a)
	closePool(t, b)
	within(t, "every Future", pending.Wait)
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for id, ok := range accepted {
		switch {
		case ok:
			n++
			require.Equal(t, 1, ran[id], "accepted task %d", id)
		case mayRun[id]:
			require.LessOrEqual(t, ran[id], 1, "canceled task %d", id)
		default:
			require.Zero(t, ran[id], "rejected task %d", id)
		}
	}
	for _, p := range []*forkjoin.Pool{a, b} {
		s := p.Stats()
		require.Equal(t, s.Submitted, s.Completed, "%v", s)
		require.Zero(t, s.Queued, "%v", s)
		t.Logf("%v", s)
	}
	t.Logf("%d tasks, %d accepted", len(accepted), n)
	goroutinesBack(t, base)
}
