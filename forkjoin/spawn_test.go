package forkjoin_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// growTask is a typed spawned task that spawns fan more of itself until
// depth runs out, counting every run and checking that the node it ran
// from carried its own fields (id and check are written together by the
// spawner: a node reused while still readable would mix two tasks').
type growTask struct {
	s            *forkjoin.Scope
	depth, fan   int
	id, check    int64
	ran, corrupt *atomic.Int64
}

func (g growTask) Compute(w *forkjoin.Worker) {
	g.ran.Add(1)
	if g.check != ^g.id {
		g.corrupt.Add(1)
	}
	if g.depth == 0 {
		return
	}
	for k := 0; k < g.fan; k++ {
		c := g
		c.depth--
		c.id = g.id*int64(g.fan) + int64(k) + 1
		c.check = ^c.id
		forkjoin.SpawnTask(g.s, w, c)
	}
}

// growCount is the number of tasks a growTask of this depth and fan runs.
func growCount(depth, fan int) int64 {
	n, level := int64(0), int64(1)
	for d := 0; d <= depth; d++ {
		n += level
		level *= int64(fan)
	}
	return n
}

func TestSpawnTaskRunsEveryTask(t *testing.T) {
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		var ran, corrupt atomic.Int64
		within(t, "a scope of typed spawns", func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
					forkjoin.SpawnTask(s, w, growTask{s: s, depth: 6, fan: 3, check: ^0, ran: &ran, corrupt: &corrupt})
				})
				return 0
			})
		})
		require.Equal(t, growCount(6, 3), ran.Load())
		require.Zero(t, corrupt.Load())
	})
}

// panicAction panics with its value.
type panicAction struct{ v any }

func (p panicAction) Compute(*forkjoin.Worker) { panic(p.v) }

// countTask adds one to n.
type countTask struct{ n *atomic.Int64 }

func (c countTask) Compute(*forkjoin.Worker) { c.n.Add(1) }

func TestSpawnTaskPanicIsPanicErrorAfterAllFinish(t *testing.T) {
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		boom := errors.New("boom")
		var ran atomic.Int64
		v := recoverPanic(func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
					for i := 0; i < 100; i++ {
						if i == 50 {
							forkjoin.SpawnTask(s, w, panicAction{boom})
						}
						forkjoin.SpawnTask(s, w, countTask{&ran})
					}
				})
				return 0
			})
		})
		pe, ok := v.(*forkjoin.PanicError)
		require.True(t, ok, "got %T (%v), want *forkjoin.PanicError", v, v)
		require.ErrorIs(t, pe, boom)
		require.Equal(t, int64(100), ran.Load(), "every spawned task ran before the panic surfaced")
		requireHealthy(t, p)
	})
}

// cancelTask cancels the computation and, once its worker sees it, spawns
// another of itself: the spawn unwinds it.
type cancelTask struct {
	s       *forkjoin.Scope
	cancel  context.CancelFunc
	spawned *atomic.Int64
}

func (c cancelTask) Compute(w *forkjoin.Worker) {
	c.cancel()
	if !holdUntil(func() bool { return w.Err() != nil }) {
		return // hung: spawned stays 0 and the error check fails
	}
	forkjoin.SpawnTask(c.s, w, c)
	c.spawned.Add(1) // not reached: the spawn above panics
}

func TestSpawnTaskCanceled(t *testing.T) {
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var spawned, ran atomic.Int64
		var err error
		within(t, "a canceled scope", func() {
			_, err = forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
				forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
					for range 50 {
						forkjoin.SpawnTask(s, w, countTask{&ran}) // queued before the cancel: some are skipped
					}
					forkjoin.SpawnTask(s, w, cancelTask{s, cancel, &spawned})
				})
				return 0
			})
		})
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, spawned.Load(), "a spawn in a canceled computation unwinds its task")
		require.Less(t, ran.Load(), int64(51))
		requireHealthy(t, p)
	})
}

// goexitTask calls runtime.Goexit.
type goexitTask struct{}

func (goexitTask) Compute(*forkjoin.Worker) { runtime.Goexit() }

func TestSpawnTaskGoexit(t *testing.T) {
	for _, par := range []int{1, 2, 4} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var ran atomic.Int64
		var v any
		within(t, "Goexit in a spawned task", func() {
			v = recoverPanic(func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
					forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
						for i := range 20 {
							if i == 10 {
								forkjoin.SpawnTask(s, w, goexitTask{})
							}
							forkjoin.SpawnTask(s, w, countTask{&ran})
						}
					})
					return 0
				})
			})
		})
		pe, ok := v.(*forkjoin.PanicError)
		require.True(t, ok, "got %T (%v), want *forkjoin.PanicError", v, v)
		require.ErrorIs(t, pe, forkjoin.ErrGoexit)
		requireHealthy(t, p)
		closePool(t, p)
	}
}

func TestSpawnTaskBadInput(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	var leaked *forkjoin.Scope
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
		require.PanicsWithValue(t, "forkjoin: SpawnTask called with a nil *Scope",
			func() { forkjoin.SpawnTask(nil, w, goexitTask{}) })
		forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) { leaked = s })
		require.PanicsWithValue(t, "forkjoin: SpawnTask called after its RunScope returned",
			func() { forkjoin.SpawnTask(leaked, w, goexitTask{}) })
		return 0
	})
}

// TestSpawnAllocatesNothing: in the steady state, a scope of typed spawns,
// or of spawns of one closure that captures nothing per spawn, allocates
// only the Scope itself, on one worker and on two (the nodes the other
// worker ran come back to the spawner). An allocation assertion, not a
// time one.
func TestSpawnAllocatesNothing(t *testing.T) {
	if testenv.Race {
		t.Skip("-race allocates on its own")
	}
	const spawns = 1000
	var n atomic.Int64
	typed := countTask{&n}
	closure := func(*forkjoin.Worker) { n.Add(1) }
	shapes := []struct {
		name  string
		spawn func(s *forkjoin.Scope, w *forkjoin.Worker)
	}{
		{"SpawnTask", func(s *forkjoin.Scope, w *forkjoin.Worker) { forkjoin.SpawnTask(s, w, typed) }},
		{"Spawn", func(s *forkjoin.Scope, w *forkjoin.Worker) { s.Spawn(w, closure) }},
	}
	for _, par := range []int{1, 2} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		for _, sh := range shapes {
			var allocs float64
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				allocs = testing.AllocsPerRun(20, func() {
					forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
						for range spawns {
							sh.spawn(s, w)
						}
					})
				})
				return 0
			})
			require.LessOrEqual(t, allocs, 1.0, "%s on %d workers: allocations per scope of %d spawns (the Scope is one)", sh.name, par, spawns)
		}
		closePool(t, p)
	}
	require.Equal(t, int64(2*2*21*spawns), n.Load())
}

// TestSpawnNodeRecyclingStress spawns trees of typed tasks on pools whose
// workers steal from each other all the time, so that nodes run by one
// worker go back to another's free list while both spawn. Each task checks
// the fields of the node it ran from; -race checks every access to a
// recycled node.
func TestSpawnNodeRecyclingStress(t *testing.T) {
	rounds := 200
	if testenv.Race {
		rounds = 40
	}
	for _, par := range []int{2, 4} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var ran, corrupt atomic.Int64
		within(t, "recycling stress", func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				for r := 0; r < rounds; r++ {
					forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
						for k := range 4 {
							forkjoin.SpawnTask(s, w, growTask{s: s, depth: 5, fan: 3, id: int64(k), check: ^int64(k), ran: &ran, corrupt: &corrupt})
						}
					})
				}
				return 0
			})
		})
		require.Equal(t, int64(rounds)*4*growCount(5, 3), ran.Load())
		require.Zero(t, corrupt.Load())
		closePool(t, p)
	}
}
