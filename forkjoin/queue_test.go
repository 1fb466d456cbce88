package forkjoin

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// blockWorkers occupies every worker of p until release is closed.
func blockWorkers(t *testing.T, p *Pool) (release func()) {
	gate := make(chan struct{})
	var started sync.WaitGroup
	started.Add(p.Parallelism())
	for i := 0; i < p.Parallelism(); i++ {
		require.NoError(t, p.Execute(func(*Worker) { started.Done(); <-gate }))
	}
	started.Wait()
	return func() { close(gate) }
}

func TestMaxQueuedFailsFastWhenFull(t *testing.T) {
	p := New(WithParallelism(2), WithMaxQueued(4))
	defer p.Close()
	release := blockWorkers(t, p)
	var ran atomic.Int64
	for i := 0; i < 4; i++ {
		require.NoError(t, p.Execute(func(*Worker) { ran.Add(1) }))
	}
	require.ErrorIs(t, p.Execute(func(*Worker) { ran.Add(1) }), ErrQueueFull)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, p.ExecuteContext(ctx, func(*Worker) {}), context.Canceled)

	release()
	require.Eventually(t, func() bool { return ran.Load() == 4 }, 30*time.Second, time.Millisecond)
	require.NoError(t, p.Execute(func(*Worker) { ran.Add(1) }), "room again once drained")
}

func TestMaxQueuedManySubmittersNothingLostNothingTwice(t *testing.T) {
	const submitters, each = 16, 500
	p := New(WithParallelism(2), WithMaxQueued(8))
	var runs [submitters * each]atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < submitters; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				k := g*each + i
				err := p.ExecuteContext(context.Background(), func(*Worker) { runs[k].Add(1) })
				if err != nil {
					t.Errorf("ExecuteContext: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	p.Close()
	for k := range runs {
		require.Equal(t, int32(1), runs[k].Load(), "task %d", k)
	}
	require.Equal(t, uint64(submitters*each), p.Stats().Submitted)
}

func TestCloseUnderLoadRunsAcceptedRejectsRest(t *testing.T) {
	const submitters = 16
	p := New(WithParallelism(2))
	// runs[g][i] counts the runs of submitter g's i-th task, accepted or
	// not: every accepted task must run exactly once, a refused one never.
	var runs [submitters][]atomic.Int32
	var accepted [submitters]int
	var rejected atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := 0; g < submitters; g++ {
		runs[g] = make([]atomic.Int32, 1<<17)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range runs[g] {
				err := p.Execute(func(*Worker) { runs[g][i].Add(1) })
				if errors.Is(err, ErrClosed) {
					rejected.Add(1)
					return
				}
				if err != nil {
					t.Errorf("Execute: %v", err)
					return
				}
				accepted[g]++
			}
			t.Errorf("submitter %d: the pool accepted all its %d tasks before Close", g, len(runs[g]))
		}()
	}
	close(start)
	for p.Stats().Submitted < 2000 {
		time.Sleep(time.Millisecond)
	}
	p.Close()
	wg.Wait()
	total := 0
	for g := range runs {
		total += accepted[g]
		for i := range runs[g] {
			want := int32(0)
			if i < accepted[g] {
				want = 1
			}
			require.Equal(t, want, runs[g][i].Load(), "submitter %d, task %d (%d accepted): runs", g, i, accepted[g])
		}
	}
	t.Logf("%d tasks accepted before Close", total)
	require.Equal(t, int64(submitters), rejected.Load())
	require.ErrorIs(t, p.Execute(func(*Worker) {}), ErrClosed)
}

func TestShutdownDeadline(t *testing.T) {
	p := New(WithParallelism(1))
	release := blockWorkers(t, p)
	for i := 0; i < 3; i++ {
		require.NoError(t, p.Execute(func(*Worker) {}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := p.Shutdown(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "4 submitted tasks unfinished")
	require.ErrorIs(t, p.Execute(func(*Worker) {}), ErrClosed)

	release()
	require.NoError(t, p.Shutdown(context.Background()), "drains once unblocked")
	require.Equal(t, 0, p.Stats().Workers)
}

func TestSubmitWaitsForRoomAndClosedWakesWaiters(t *testing.T) {
	p := New(WithParallelism(1), WithMaxQueued(1))
	release := blockWorkers(t, p)
	require.NoError(t, p.Execute(func(*Worker) {}))
	errc := make(chan error, 1)
	go func() {
		errc <- p.ExecuteContext(context.Background(), func(*Worker) {})
	}()
	select {
	case err := <-errc:
		t.Fatalf("ExecuteContext returned %v while the queue was full", err)
	case <-time.After(20 * time.Millisecond):
	}
	go func() { time.Sleep(10 * time.Millisecond); release() }()
	p.Close()
	select {
	case err := <-errc:
		// Either it got room before the close or it was woken by it.
		if err != nil {
			require.ErrorIs(t, err, ErrClosed)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a submitter waiting for room was not woken by Close")
	}
}

// TestMaxQueuedOwnTasksAreNotBounded: submissions from the pool's own
// tasks are not bounded, as forks are not (room.go): a task of a
// one-worker pool with room for one submits 20 tasks by Execute,
// ExecuteContext and Submit without an error or a wait (on 5c45ab2 the
// ExecuteContext waited for ever: only the task's own worker could make
// room, and Execute failed with ErrQueueFull), while a submitter from
// outside finds the queue full until it holds fewer than its bound again;
// then every task has run once and the queue takes one again.
func TestMaxQueuedOwnTasksAreNotBounded(t *testing.T) {
	p := New(WithParallelism(1), WithMaxQueued(1))
	defer p.Close()
	const n = 20
	var ran [n]atomic.Int32
	release := make(chan struct{})
	var outsideErr error
	testenv.Within(t, "own task submitting past a full queue", func() {
		Invoke(p, func(w *Worker) struct{} {
			for i := range n {
				run := func(*Worker) int { ran[i].Add(1); return i }
				switch i % 3 {
				case 0:
					require.NoError(t, p.Execute(func(w *Worker) { run(w) }))
				case 1:
					require.NoError(t, p.ExecuteContext(context.Background(), func(w *Worker) { run(w) }))
				default:
					_ = Submit(p, run)
				}
			}
			require.EqualValues(t, n, p.Stats().Queued)
			outsideErr = <-goErr(func() error { return p.Execute(func(*Worker) {}) })
			go func() { // from outside, once the queue has room
				err := p.ExecuteContext(context.Background(), func(*Worker) { close(release) })
				if err != nil {
					panic(err)
				}
			}()
			return struct{}{}
		})
		<-release
	})
	require.ErrorIs(t, outsideErr, ErrQueueFull)
	for i := range ran {
		require.EqualValues(t, 1, ran[i].Load(), "task %d", i)
	}
	require.NoError(t, p.Execute(func(*Worker) {}))
}

// goErr runs fn on a goroutine of its own (not a worker) and delivers its
// error.
func goErr(fn func() error) <-chan error {
	c := make(chan error, 1)
	go func() { c <- fn() }()
	return c
}

// TestMaxQueuedSubmissionTreeCompletes: tasks that submit their children to
// their own pool's bounded queue and wait for them, a tree of 1+3+9+27+81
// submissions through a queue of room 2 on 2 workers, complete. Every
// worker waited for room in its own queue on 5c45ab2, and the tree hung;
// so did a version that made room by running queued tasks on the waiting
// worker (room.go).
func TestMaxQueuedSubmissionTreeCompletes(t *testing.T) {
	p := New(WithParallelism(2), WithMaxQueued(2))
	defer p.Close()
	var tree func(depth int) func(*Worker) int
	tree = func(depth int) func(*Worker) int {
		return func(w *Worker) int {
			if depth == 0 {
				return 1
			}
			var fs []*Future[int]
			for range 3 {
				fs = append(fs, Submit(p, tree(depth-1)))
			}
			sum := 1
			for _, f := range fs {
				sum += f.Join(w)
			}
			return sum
		}
	}
	for range 5 {
		testenv.Within(t, "a tree of submissions to its own bounded pool", func() {
			require.Equal(t, 1+3+9+27+81, Invoke(p, tree(4)))
		})
	}
}
