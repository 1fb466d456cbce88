package forkjoin_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

var soak = flag.Duration("soak", 0,
	"run TestSoak for this long (e.g. -soak=10m); 0 skips it")

type soakFailure struct{ what string }

// TestSoak runs random mixed workloads for the -soak duration: several
// pools of 1 to 4 workers in both modes, each fed by 4 goroutines picking at
// random among fork/join computations (closures, typed, futures), Execute
// bursts, Submit/Get, InvokeContext canceled at a random moment, scopes,
// Block with short sleeps, injected panics, tasks that call
// runtime.Goexit, and Broadcast; two of the pools have a bounded submission
// queue (WithMaxQueued), into which their own tasks submit trees of tasks
// past the bound, and computations wait for a second pool while a
// task they run calls runtime.Goexit. Every result is checked; every pool
// is closed at the end and goleak (TestMain) checks that nothing is left.
func TestSoak(t *testing.T) {
	if *soak == 0 {
		t.Skip("long soak: run with -soak=10m")
	}
	deadline := time.Now().Add(*soak)
	var ops, panics, cancels, executed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	other := forkjoin.New(forkjoin.WithParallelism(2)) // the pool waited for (waitForeign)
	defer other.Close()
	for pi := 0; pi < 4; pi++ {
		mode := forkjoin.LIFO
		if pi%2 == 1 {
			mode = forkjoin.FIFO
		}
		opts := []forkjoin.Option{forkjoin.WithParallelism(1 + pi), forkjoin.WithMode(mode),
			forkjoin.WithMaxBlocked(4), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) { panics.Add(1) })}
		if pi >= 2 {
			opts = append(opts, forkjoin.WithMaxQueued(8))
		}
		p := forkjoin.New(opts...)
		var feeders sync.WaitGroup
		for g := 0; g < 4; g++ {
			feeders.Add(1)
			go func(seed int64) {
				defer feeders.Done()
				rng := rand.New(rand.NewSource(seed))
				for time.Now().Before(deadline) {
					if err := soakOne(p, other, rng, &panics, &cancels, &executed); err != nil {
						errs <- err
						return
					}
					ops.Add(1)
				}
			}(int64(pi*100 + g))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			feeders.Wait()
			p.Close()
			if w := p.Stats().Workers; w != 0 {
				errs <- fmt.Errorf("pool %d: %d workers alive after Close", pi, w)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("soak %v: %d operations, %d panics caught, %d canceled computations, %d Execute tasks run",
		*soak, ops.Load(), panics.Load(), cancels.Load(), executed.Load())
}

// soakOne runs one random operation on p; other is a pool that p's tasks
// wait for. Submissions from outside wait for room (p's queue may be
// bounded): ExecuteContext, not Execute.
func soakOne(p, other *forkjoin.Pool, rng *rand.Rand, panics, cancels, executed *atomic.Int64) error {
	n := 10 + rng.Intn(12)
	want := fibSeq(n)
	bg := context.Background()
	switch rng.Intn(13) {
	case 0:
		if got := forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibJoin(w, n) }); got != want {
			return fmt.Errorf("Join fib(%d) = %d", n, got)
		}
	case 1:
		if got := forkjoin.Invoke(p, fibTask(n).Compute); got != want {
			return fmt.Errorf("JoinTasks fib(%d) = %d", n, got)
		}
	case 2:
		f := forkjoin.Submit(p, func(w *forkjoin.Worker) int { return fibFork(w, n) })
		if got, err := f.Get(context.Background()); err != nil || got != want {
			return fmt.Errorf("Submit fib(%d) = %d, %v", n, got, err)
		}
	case 3:
		var wg sync.WaitGroup
		k := 1 + rng.Intn(200)
		wg.Add(k)
		for i := 0; i < k; i++ {
			if err := p.ExecuteContext(bg, func(*forkjoin.Worker) { executed.Add(1); wg.Done() }); err != nil {
				return err
			}
		}
		wg.Wait()
	case 4:
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Duration(rng.Intn(2000))*time.Microsecond, cancel)
		got, err := forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int { return fibTask(n + 8).Compute(w) })
		cancel()
		switch {
		case errors.Is(err, context.Canceled):
			cancels.Add(1)
		case err != nil || got != fibSeq(n+8):
			return fmt.Errorf("InvokeContext fib(%d) = %d, %v", n+8, got, err)
		}
	case 5:
		var count atomic.Int64
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
				var grow func(w *forkjoin.Worker, d int)
				grow = func(w *forkjoin.Worker, d int) {
					count.Add(1)
					for i := 0; i < d; i++ {
						s.Spawn(w, func(w *forkjoin.Worker) { grow(w, d-1) })
					}
				}
				grow(w, 5)
			})
			return 0
		})
		if count.Load() != 326 { // 1 + 5 + 5·4 + 5·4·3 + 5·4·3·2 + 5!
			return fmt.Errorf("scope counted %d nodes", count.Load())
		}
	case 6:
		got := forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			a, b := forkjoin.Join(w,
				func(w *forkjoin.Worker) int {
					forkjoin.Block(w, func() { time.Sleep(time.Duration(rng.Intn(300)) * time.Microsecond) })
					return 1
				},
				func(w *forkjoin.Worker) int { return fibJoin(w, n) })
			return a + b
		})
		if got != want+1 {
			return fmt.Errorf("Block+Join = %d", got)
		}
	case 7:
		v := recoverPanic(func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				a, b := forkjoin.Join(w,
					func(w *forkjoin.Worker) int { return fibJoin(w, n) },
					func(w *forkjoin.Worker) int { panic(soakFailure{"b"}) })
				return a + b
			})
		})
		var pe *forkjoin.PanicError
		if err, ok := v.(error); !ok || !errors.As(err, &pe) || pe.Value != (soakFailure{"b"}) {
			return fmt.Errorf("injected panic arrived as %v", v)
		}
		panics.Add(1)
		if rng.Intn(4) == 0 {
			if err := p.ExecuteContext(bg, func(*forkjoin.Worker) { panic("execute") }); err != nil {
				return err
			}
		}
	case 8:
		// Spawns into a scope from a nested computation canceled at a
		// random moment: they are the scope's tasks, so each one spawned
		// runs (TestSpawnIntoOuterScopeOutlivesInnerCancel).
		var spawned, ran atomic.Int64
		k := 1 + rng.Intn(100)
		delay := time.Duration(rng.Intn(300)) * time.Microsecond
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				timer := time.AfterFunc(delay, cancel)
				defer timer.Stop()
				_, err := forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
					for range k { // a spawn unwinds this task once ctx is canceled
						forkjoin.SpawnTask(s, w, countTask{&ran})
						spawned.Add(1)
						s.Spawn(w, func(*forkjoin.Worker) { ran.Add(1) })
						spawned.Add(1)
					}
					return 0
				})
				if errors.Is(err, context.Canceled) {
					cancels.Add(1)
				}
			})
			return 0
		})
		if ran.Load() != spawned.Load() {
			return fmt.Errorf("scope ran %d of %d tasks spawned from a canceled computation", ran.Load(), spawned.Load())
		}
	case 9:
		// runtime.Goexit in a joined task, and in an Execute'd one.
		v := recoverPanic(func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				a, b := forkjoin.Join(w,
					func(w *forkjoin.Worker) int { return fibJoin(w, n) },
					func(*forkjoin.Worker) int { runtime.Goexit(); return 0 })
				return a + b
			})
		})
		if err, ok := v.(error); !ok || !errors.Is(err, forkjoin.ErrGoexit) {
			return fmt.Errorf("Goexit in a joined task arrived as %v", v)
		}
		if err := p.ExecuteContext(bg, func(*forkjoin.Worker) { executed.Add(1); runtime.Goexit() }); err != nil {
			return err
		}
	case 10:
		var ran atomic.Int64
		forkjoin.Broadcast(p, func(*forkjoin.Worker) { ran.Add(1) })
		if int(ran.Load()) != p.Parallelism() {
			return fmt.Errorf("Broadcast ran %d calls on %d workers", ran.Load(), p.Parallelism())
		}
	case 11:
		// A tree of tasks submitted by p's own tasks and joined: past the
		// bound of a full queue (TestMaxQueuedSubmissionTreeCompletes).
		var tree func(d int) func(*forkjoin.Worker) int
		tree = func(d int) func(*forkjoin.Worker) int {
			return func(w *forkjoin.Worker) int {
				if d == 0 {
					return 1
				}
				fs := make([]*forkjoin.Future[int], 3)
				for i := range fs {
					fs[i] = forkjoin.Submit(p, tree(d-1))
				}
				sum := 1
				for _, f := range fs {
					sum += f.Join(w)
				}
				return sum
			}
		}
		if got := forkjoin.Invoke(p, tree(3)); got != 1+3+9+27 {
			return fmt.Errorf("submission tree counted %d", got)
		}
	case 12:
		// p's task waits for other; a task of p run meanwhile may call
		// runtime.Goexit, which unwinds the waiting task: the Invoke
		// reports it only once the work on other has finished
		// (TestGoexitInForeignWaitWaitsForIt).
		var finished atomic.Bool
		v := recoverPanic(func() {
			forkjoin.Invoke(p, func(*forkjoin.Worker) int {
				return forkjoin.Invoke(other, func(*forkjoin.Worker) int {
					if err := p.ExecuteContext(bg, func(*forkjoin.Worker) { executed.Add(1); runtime.Goexit() }); err != nil {
						panic(err)
					}
					time.Sleep(time.Duration(rng.Intn(300)) * time.Microsecond)
					finished.Store(true)
					return 0
				})
			})
		})
		switch err, _ := v.(error); {
		case v == nil:
		case errors.Is(err, forkjoin.ErrGoexit):
			if !finished.Load() {
				return errors.New("Invoke reported a Goexit in a foreign wait before the awaited task finished")
			}
		default:
			return fmt.Errorf("foreign wait with a Goexit arrived as %v", v)
		}
	}
	return nil
}
