package forkjoin

import (
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// tree is a generated directory-like tree: node i's children are given by
// a seeded generator, so the sequential and parallel walks see the same tree.
type tree struct{ children [][]int32 }

func genTree(n int, seed uint64) *tree {
	r := rand.New(rand.NewPCG(seed, 1))
	t := &tree{children: make([][]int32, n)}
	// Attach node i to a random earlier node: irregular fan-out and depth.
	for i := 1; i < n; i++ {
		parent := r.IntN(i)
		if r.IntN(4) == 0 { // bias towards deep chains now and then
			parent = i - 1
		}
		t.children[parent] = append(t.children[parent], int32(i))
	}
	return t
}

func pred(i int32) bool { return i%3 == 0 || i%7 == 0 }

func (t *tree) countSeq(i int32) int64 {
	var c int64
	if pred(i) {
		c++
	}
	for _, ch := range t.children[i] {
		c += t.countSeq(ch)
	}
	return c
}

func (t *tree) spawnCount(s *Scope, w *Worker, i int32, total *atomic.Int64) {
	var c int64
	// Walk small subtrees inline, spawn the others: irregular parallelism.
	for _, ch := range t.children[i] {
		if len(t.children[ch]) == 0 {
			if pred(ch) {
				c++
			}
			continue
		}
		s.Spawn(w, func(w *Worker) { t.spawnCount(s, w, ch, total) })
	}
	if pred(i) {
		c++
	}
	total.Add(c)
}

func TestScopeTreeCount(t *testing.T) {
	n := 1_000_000
	if testenv.Race {
		n = 50_000
	}
	tr := genTree(n, 42)
	want := tr.countSeq(0)
	for _, par := range []int{1, 2, 4} {
		p := New(WithParallelism(par))
		var total atomic.Int64
		Invoke(p, func(w *Worker) int {
			RunScope(w, func(s *Scope, w *Worker) { tr.spawnCount(s, w, 0, &total) })
			return 0
		})
		require.Equal(t, want, total.Load(), "parallelism %d", par)
		p.Close()
	}
}

func TestScopePanicAfterAllFinish(t *testing.T) {
	p := New(WithParallelism(2))
	defer p.Close()
	var ran atomic.Int64
	boom := errors.New("boom")
	err := func() (err error) {
		defer func() { err, _ = recover().(error) }()
		Invoke(p, func(w *Worker) int {
			RunScope(w, func(s *Scope, w *Worker) {
				for i := 0; i < 100; i++ {
					s.Spawn(w, func(w *Worker) {
						ran.Add(1)
						if i == 50 {
							panic(boom)
						}
					})
				}
			})
			return 0
		})
		return nil
	}()
	require.ErrorIs(t, err, boom)
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, int64(100), ran.Load(), "every spawned task ran before the panic surfaced")
	require.Equal(t, 7, Invoke(p, func(*Worker) int { return 7 }), "the pool survives")
}

func TestScopeSpawnFromSpawned(t *testing.T) {
	p := New(WithParallelism(3))
	defer p.Close()
	var count atomic.Int64
	var grow func(s *Scope, w *Worker, depth int)
	grow = func(s *Scope, w *Worker, depth int) {
		count.Add(1)
		if depth == 0 {
			return
		}
		for k := 0; k < 3; k++ {
			s.Spawn(w, func(w *Worker) { grow(s, w, depth-1) })
		}
	}
	Invoke(p, func(w *Worker) int {
		RunScope(w, func(s *Scope, w *Worker) { grow(s, w, 7) })
		return 0
	})
	require.Equal(t, int64(3280), count.Load()) // 1+3+...+3^7
}

func TestScopeBadInput(t *testing.T) {
	p := New(WithParallelism(1))
	defer p.Close()
	require.PanicsWithValue(t, "forkjoin: RunScope called with a nil *Worker",
		func() { RunScope(nil, func(*Scope, *Worker) {}) })
	var leaked *Scope
	Invoke(p, func(w *Worker) int {
		RunScope(w, func(s *Scope, w *Worker) { leaked = s })
		require.PanicsWithValue(t, "forkjoin: Scope.Spawn called after its RunScope returned",
			func() { leaked.Spawn(w, func(*Worker) {}) })
		return 0
	})
}
