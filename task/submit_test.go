package task_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// panicky is a task that panics with its value.
type panicky struct{ v any }

func (x panicky) Compute(*forkjoin.Worker) int { panic(x.v) }

// TestSubmitFromOutside: Submit, SubmitPriority and SubmitAction queue a
// typed task from outside the pool; Get returns its result, Join from a
// task of the pool as well.
func TestSubmitFromOutside(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *forkjoin.Pool) {
		ctx := t.Context()
		within(t, func() {
			v, err := task.Submit(p, Fib{20}).Get(ctx)
			require.NoError(t, err)
			require.Equal(t, fibSeq(20), v)

			for _, prio := range []forkjoin.Priority{forkjoin.Urgent, forkjoin.Normal, forkjoin.Background} {
				v, err = task.SubmitPriority(p, prio, Fib{15}).Get(ctx)
				require.NoError(t, err)
				require.Equal(t, fibSeq(15), v)
			}

			var n atomic.Int64
			_, err = task.SubmitAction(p, countAction{&n}).Get(ctx)
			require.NoError(t, err)
			require.EqualValues(t, 1, n.Load())

			f := task.Submit(p, Fib{18})
			got := forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return f.Join(w) })
			require.Equal(t, fibSeq(18), got)
		})
	})
}

// TestSubmitPanicAndClosedPool: a submitted task's panic comes back from
// Get as a *forkjoin.PanicError holding the value; on a closed pool the
// Future holds forkjoin.ErrClosed and the task never runs.
func TestSubmitPanicAndClosedPool(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	ctx := t.Context()
	within(t, func() {
		_, err := task.Submit(p, panicky{"boom"}).Get(ctx)
		var pe *forkjoin.PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "boom", pe.Value)
	})
	p.Close()
	var n atomic.Int64
	_, err := task.Submit(p, Fib{5}).Get(ctx)
	require.True(t, errors.Is(err, forkjoin.ErrClosed), "got %v", err)
	_, err = task.SubmitAction(p, countAction{&n}).Get(ctx)
	require.True(t, errors.Is(err, forkjoin.ErrClosed), "got %v", err)
	require.Zero(t, n.Load())
}

// walk is a RecursiveAction that spawns one action per child of a
// complete binary tree of the given depth, counting the nodes visited.
type walk struct {
	s     *forkjoin.Scope
	depth int
	n     *atomic.Int64
}

func (x walk) Compute(w *forkjoin.Worker) {
	x.n.Add(1)
	if x.depth == 0 {
		return
	}
	task.Spawn(x.s, w, walk{x.s, x.depth - 1, x.n})
	task.Spawn(x.s, w, walk{x.s, x.depth - 1, x.n})
}

// TestSpawnRunsEveryAction: actions spawned with Spawn, from the scope's
// body and from each other, have all run when RunScope returns.
func TestSpawnRunsEveryAction(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *forkjoin.Pool) {
		const depth = 12
		var n atomic.Int64
		within(t, func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
					task.Spawn(s, w, walk{s, depth, &n})
				})
				return 0
			})
		})
		require.EqualValues(t, 1<<(depth+1)-1, n.Load())
	})
}

// panickyAction panics with its value.
type panickyAction struct{ v any }

func (x panickyAction) Compute(*forkjoin.Worker) { panic(x.v) }

// TestSpawnPanicAfterAllFinish: RunScope re-raises a spawned action's
// panic as a *forkjoin.PanicError, after every other action has run.
func TestSpawnPanicAfterAllFinish(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	var n atomic.Int64
	var got any
	within(t, func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			got = recoverValue(func() {
				forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
					for range 100 {
						task.Spawn(s, w, countAction{&n})
					}
					task.Spawn(s, w, panickyAction{"boom"})
					for range 100 {
						task.Spawn(s, w, countAction{&n})
					}
				})
			})
			return 0
		})
	})
	pe, ok := got.(*forkjoin.PanicError)
	require.True(t, ok, "got %T %v", got, got)
	require.Equal(t, "boom", pe.Value)
	require.EqualValues(t, 200, n.Load())
}

// TestSpawnAllocatesNothing: on a one-worker LIFO pool, a scope of 1,000
// Spawns of a small struct allocates at most the Scope once the worker's
// node list is warm (forkjoin.SpawnTask's claim, through task.Spawn).
func TestSpawnAllocatesNothing(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer p.Close()
	var n atomic.Int64
	scope := func(w *forkjoin.Worker) {
		forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
			for range 1000 {
				task.Spawn(s, w, countAction{&n})
			}
		})
	}
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
		scope(w) // warm the node list
		allocs := testing.AllocsPerRun(10, func() { scope(w) })
		require.LessOrEqual(t, allocs, 1.0, "1,000 spawns: the Scope at most")
		return 0
	})
}

// recoverValue runs fn and returns what it panicked with, nil if nothing.
func recoverValue(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}
