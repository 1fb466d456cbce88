package forkjoin_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// Review rev11: attacks on compensating workers, the submission queue, the
// panic handler path and Stats. Each test here failed on 301e773 (see its
// comment) or records an attack that held.

// TestOtherPoolsHandlerCanCloseReporterPool: a panic that AllOf drops is
// reported to the handler of the pool it came from (b) by the goroutine
// that completes AllOf's last Future, here a worker of pool a, which waits
// for b's handler. A Close of a from that handler must then return at once,
// as a Close from a's own handler does (TestPanicHandlerCanClose): it
// waited for a's workers to exit, among them the one waiting for the
// handler, and both hung on 301e773.
func TestOtherPoolsHandlerCanCloseReporterPool(t *testing.T) {
	a := forkjoin.New(forkjoin.WithParallelism(1))
	closedFromHandler := make(chan struct{})
	b := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {
		a.Close()
		close(closedFromHandler)
	}))
	defer closePool(t, b)
	defer closePool(t, a)
	fb1 := forkjoin.Submit(b, func(*forkjoin.Worker) int { panic("delivered") })
	fb2 := forkjoin.Submit(b, func(*forkjoin.Worker) int { panic("dropped") })
	waitUntil(t, "b's tasks done", func() bool { return fb1.Done() && fb2.Done() })
	release := make(chan struct{})
	fa := forkjoin.Submit(a, func(*forkjoin.Worker) int { <-release; return 1 })
	all := forkjoin.AllOf(fb1, fb2, fa) // fa arrives last, on a's worker
	close(release)
	within(t, "b's handler closing a, reported from a's worker", func() { <-closedFromHandler })
	within(t, "AllOf", func() {
		_, err := all.Get(context.Background())
		require.Error(t, err)
	})
}

// countAction is a typed Execute action that counts its run.
type countAction struct{ n *atomic.Int64 }

func (a countAction) Compute(*forkjoin.Worker) { a.n.Add(1) }

// TestCloseRunsEveryAcceptedSubmission (held on 301e773): submitters at
// every priority, through every entry point (Execute, ExecuteContext
// with live and canceled contexts, typed ExecuteTaskPriority, Submit,
// SubmitContext, Then), on a bounded queue, with tasks that panic, call
// runtime.Goexit or Block, race a Close: every submission accepted runs
// exactly once (or, for SubmitContext, completes), Close returns, and
// Stats.Completed equals Stats.Submitted afterwards.
func TestCloseRunsEveryAcceptedSubmission(t *testing.T) {
	rounds := 40
	if testing.Short() || testenv.Race {
		rounds = 8
	}
	for r := range rounds {
		p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxQueued(8),
			forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}))
		var accepted, ran, other atomic.Int64 // Execute's accepted and run; Submit's and Then's runs
		body := func(k int, ran *atomic.Int64) func(w *forkjoin.Worker) {
			return func(w *forkjoin.Worker) {
				ran.Add(1)
				switch k % 7 {
				case 1:
					panic("boom")
				case 2:
					runtime.Goexit()
				case 3:
					forkjoin.Block(w, func() { time.Sleep(10 * time.Microsecond) })
				}
			}
		}
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		var futures sync.Map
		testenv.Concurrently(t, "submitters", 4, func(g int) {
			prios := []forkjoin.Priority{forkjoin.Urgent, forkjoin.Normal, forkjoin.Background}
			for k := 0; k < 300; k++ {
				prio := prios[(g+k)%3]
				var err error
				switch k % 6 {
				case 0:
					err = p.ExecutePriority(prio, body(k, &ran))
				case 1:
					err = p.ExecuteContextPriority(context.Background(), prio, body(k, &ran))
				case 2:
					err = p.ExecuteContextPriority(canceled, prio, body(k, &ran))
				case 3:
					err = forkjoin.ExecuteTaskPriority(p, prio, countAction{&ran})
				case 4:
					f := forkjoin.SubmitPriority(p, prio, func(w *forkjoin.Worker) int { body(k, &other)(w); return 0 })
					futures.Store(f, true)
					continue
				case 5:
					f := forkjoin.Then(p, forkjoin.Submit(p, func(*forkjoin.Worker) int { other.Add(1); return 1 }),
						func(w *forkjoin.Worker, v int) int { other.Add(1); return v })
					futures.Store(f, true)
					continue
				}
				if err == nil {
					accepted.Add(1)
				} else if !errors.Is(err, forkjoin.ErrClosed) && !errors.Is(err, forkjoin.ErrQueueFull) && !errors.Is(err, context.Canceled) {
					t.Errorf("unexpected error %v", err)
				}
				if g == 0 && k == 150 {
					go p.Close()
				}
			}
		})
		within(t, "Close", p.Close)
		// Each Future done; those whose task ran count one run each
		// (two for Then: its source and its stage).
		futures.Range(func(f, _ any) bool {
			fu := f.(*forkjoin.Future[int])
			require.True(t, fu.Done(), "round %d: a Future not done after Close", r)
			return true
		})
		st := p.Stats()
		require.Equal(t, st.Submitted, st.Completed, "round %d: %v", r, st)
		require.Equal(t, 0, st.Workers, "round %d", r)
		require.Equal(t, accepted.Load(), ran.Load(), "round %d: accepted Execute tasks run", r)
	}
}

// TestSparesSettleAndStayBelowMaxWorkers (held on 301e773): nested and
// concurrent Blocks, with hooks, tasks that call runtime.Goexit on
// compensating workers, and submissions meanwhile: every Index is below
// MaxWorkers, each index's hooks alternate start, exit, and once the load
// is gone the pool settles at Parallelism() workers, all idle.
func TestSparesSettleAndStayBelowMaxWorkers(t *testing.T) {
	const par = 2
	var mu sync.Mutex
	inHook := map[int]bool{}
	hookErr := ""
	start := func(i int) {
		mu.Lock()
		defer mu.Unlock()
		if inHook[i] {
			hookErr = fmt.Sprintf("start of %d twice without exit", i)
		}
		inHook[i] = true
	}
	exit := func(i int) {
		mu.Lock()
		defer mu.Unlock()
		if !inHook[i] {
			hookErr = fmt.Sprintf("exit of %d without start", i)
		}
		inHook[i] = false
	}
	p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMaxBlocked(3),
		forkjoin.WithWorkerHooks(start, exit), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}))
	defer closePool(t, p)
	var maxIndex atomic.Int64
	seen := func(w *forkjoin.Worker) {
		for {
			m := maxIndex.Load()
			if int64(w.Index()) <= m || maxIndex.CompareAndSwap(m, int64(w.Index())) {
				return
			}
		}
	}
	rounds := 300
	if testing.Short() || testenv.Race {
		rounds = 60
	}
	for r := range rounds {
		var wg sync.WaitGroup
		for k := range 6 {
			wg.Add(1)
			require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
				defer wg.Done()
				seen(w)
				forkjoin.Block(w, func() {
					forkjoin.Invoke(p, func(w *forkjoin.Worker) int { // inline on the same worker
						seen(w)
						return 0
					})
					time.Sleep(time.Duration(k*10) * time.Microsecond)
				})
				if (r+k)%5 == 0 {
					if err := p.Execute(func(w *forkjoin.Worker) {
						seen(w)
						if w.Index() >= par {
							runtime.Goexit() // on a compensating worker
						}
					}); err != nil {
						t.Error(err) // not FailNow: on a worker
					}
				}
			}))
		}
		within(t, "round", wg.Wait)
	}
	waitUntil(t, "pool settled at its parallelism, idle", func() bool {
		s := p.Stats()
		return s.Workers == par && s.Idle == par && s.Queued == 0
	})
	require.Less(t, maxIndex.Load(), int64(p.MaxWorkers()))
	mu.Lock()
	require.Empty(t, hookErr)
	mu.Unlock()
}

// TestBlockingForeignCanClose: Close from Blocking's function, in a task,
// returns at once as Close from the task itself does, whether or not a
// compensating worker is free. With none free (WithMaxBlocked(-1)) the
// function runs on a goroutine of its own while the worker waits for it;
// Close there waited for the workers to exit, among them the one waiting
// for it, and both hung on 301e773. With a spare free it returned at once.
func TestBlockingForeignCanClose(t *testing.T) {
	for _, spares := range []int{-1, 1} {
		t.Run(fmt.Sprintf("maxBlocked=%d", spares), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(spares))
			defer closePool(t, p)
			closed := make(chan struct{})
			require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
				forkjoin.Blocking(func() {
					p.Close()
					close(closed)
				})
			}))
			within(t, "Close from Blocking's function", func() { <-closed })
		})
	}
}
