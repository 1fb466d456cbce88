package forkjoin_test

import (
	"math/rand"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestFibResults checks every forking style against sequential fib for
// parallelism 1, 2, 4, 8 in both modes.
func TestFibResults(t *testing.T) {
	const n = 20
	want := fibSeq(n)
	styles := map[string]func(w *forkjoin.Worker) int{
		"Join":      func(w *forkjoin.Worker) int { return fibJoin(w, n) },
		"JoinTasks": func(w *forkjoin.Worker) int { return fibTask(n).Compute(w) },
		"Fork":      func(w *forkjoin.Worker) int { return fibFork(w, n) },
		"ForkTask":  func(w *forkjoin.Worker) int { return fibForkTask(n).Compute(w) },
		"Cutoff":    func(w *forkjoin.Worker) int { return fibCutoff{n, 10}.Compute(w) },
	}
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		for name, fn := range styles {
			var got int
			within(t, name, func() { got = forkjoin.Invoke(p, fn) })
			require.Equal(t, want, got, name)
		}
	})
}

// tree is an irregular fork tree generated from a seed. Each node adds its
// value to the results of the children it joins; children it forks without
// ever joining add their result to a side total instead. How each child is
// forked (and in which order futures are joined) is decided at generation
// time, so the sequential and parallel evaluations compute the same sums.
type tree struct {
	val   int64
	kids  []*tree
	steps []step
}

type stepKind int

const (
	stepJoin      stepKind = iota // forkjoin.Join of kids[a] and kids[b]
	stepJoinTasks                 // forkjoin.JoinTasks of kids[a] and kids[b]
	stepForks                     // Fork every kid in kids, Join in order perm
	stepNeverJoin                 // Fork kids[a] and drop the future
	stepInline                    // evaluate kids[a] inline (no fork)
)

type step struct {
	kind stepKind
	a, b int
	kids []int // stepForks: kids forked, in this order
	perm []int // stepForks: join order, indices into kids
}

// genTree builds a tree of about budget nodes.
func genTree(rng *rand.Rand, budget *int, depth int) *tree {
	*budget--
	n := &tree{val: rng.Int63n(1000) - 500}
	if *budget <= 0 || depth > 30 {
		return n
	}
	k := rng.Intn(6) // 0..5 children; depth-dependent bias keeps it bushy
	if depth < 3 {
		k += 2
	}
	for i := 0; i < k && *budget > 0; i++ {
		n.kids = append(n.kids, genTree(rng, budget, depth+1))
	}
	for i := 0; i < len(n.kids); {
		left := len(n.kids) - i
		switch kind := stepKind(rng.Intn(5)); {
		case (kind == stepJoin || kind == stepJoinTasks) && left >= 2:
			n.steps = append(n.steps, step{kind: kind, a: i, b: i + 1})
			i += 2
		case kind == stepForks:
			m := 1 + rng.Intn(left)
			s := step{kind: stepForks, perm: rng.Perm(m)}
			for j := 0; j < m; j++ {
				s.kids = append(s.kids, i+j)
			}
			n.steps = append(n.steps, s)
			i += m
		case kind == stepNeverJoin:
			n.steps = append(n.steps, step{kind: stepNeverJoin, a: i})
			i++
		default:
			n.steps = append(n.steps, step{kind: stepInline, a: i})
			i++
		}
	}
	return n
}

// seq evaluates the tree sequentially.
func (n *tree) seq(side *int64) int64 {
	sum := n.val
	for _, s := range n.steps {
		switch s.kind {
		case stepJoin, stepJoinTasks:
			sum += n.kids[s.a].seq(side) + n.kids[s.b].seq(side)
		case stepForks:
			for _, k := range s.kids {
				sum += n.kids[k].seq(side)
			}
		case stepNeverJoin:
			*side += n.kids[s.a].seq(side)
		case stepInline:
			sum += n.kids[s.a].seq(side)
		}
	}
	return sum
}

// treeTask evaluates a subtree on the pool; it is the typed task of
// stepJoinTasks.
type treeTask struct {
	n    *tree
	side *atomic.Int64
}

func (t treeTask) Compute(w *forkjoin.Worker) int64 { return t.n.par(w, t.side) }

// par evaluates the tree on the pool, forking as the steps say.
func (n *tree) par(w *forkjoin.Worker, side *atomic.Int64) int64 {
	sum := n.val
	for _, s := range n.steps {
		switch s.kind {
		case stepJoin:
			a, b := forkjoin.Join(w,
				func(w *forkjoin.Worker) int64 { return n.kids[s.a].par(w, side) },
				func(w *forkjoin.Worker) int64 { return n.kids[s.b].par(w, side) })
			sum += a + b
		case stepJoinTasks:
			a, b := forkjoin.JoinTasks[int64, int64](w, treeTask{n.kids[s.a], side}, treeTask{n.kids[s.b], side})
			sum += a + b
		case stepForks:
			fs := make([]*forkjoin.Future[int64], len(s.kids))
			for i, k := range s.kids {
				fs[i] = forkjoin.ForkTask[int64](w, treeTask{n.kids[k], side})
			}
			for _, i := range s.perm {
				sum += fs[i].Join(w)
			}
		case stepNeverJoin:
			kid := n.kids[s.a]
			forkjoin.Fork(w, func(w *forkjoin.Worker) struct{} {
				side.Add(kid.par(w, side))
				return struct{}{}
			})
		case stepInline:
			sum += n.kids[s.a].par(w, side)
		}
	}
	return sum
}

// TestRandomTreeResults evaluates irregular random fork trees mixing Join,
// JoinTasks, Fork with out-of-order joins and forks never joined, and checks
// the result against the sequential evaluation. Forks never joined must
// still all run: their side total is checked after Close.
func TestRandomTreeResults(t *testing.T) {
	seeds := []int64{1, 2, 3}
	trees := make([]*tree, len(seeds))
	wants := make([]int64, len(seeds))
	wantSides := make([]int64, len(seeds))
	for i, seed := range seeds {
		budget := 3000
		trees[i] = genTree(rand.New(rand.NewSource(seed)), &budget, 0)
		wants[i] = trees[i].seq(&wantSides[i])
	}
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		sides := make([]atomic.Int64, len(trees))
		for i, tr := range trees {
			var got int64
			within(t, "tree", func() {
				got = forkjoin.Invoke(p, func(w *forkjoin.Worker) int64 { return tr.par(w, &sides[i]) })
			})
			require.Equal(t, wants[i], got, "seed %d", seeds[i])
		}
		within(t, "Close", p.Close)
		for i := range trees {
			require.Equal(t, wantSides[i], sides[i].Load(), "seed %d: side total of forks never joined", seeds[i])
		}
	})
}

// TestForkOutOfOrderJoin forks many futures and joins them in reverse,
// forward and shuffled order; the deque holds all of them at once, so it
// grows past its initial size.
func TestForkOutOfOrderJoin(t *testing.T) {
	const n = 500
	orders := map[string]func() []int{
		"reverse": func() []int {
			o := make([]int, n)
			for i := range o {
				o[i] = n - 1 - i
			}
			return o
		},
		"forward": func() []int {
			o := make([]int, n)
			for i := range o {
				o[i] = i
			}
			return o
		},
		"shuffled": func() []int { return rand.New(rand.NewSource(7)).Perm(n) },
	}
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		for name, order := range orders {
			var got []int
			within(t, name, func() {
				got = forkjoin.Invoke(p, func(w *forkjoin.Worker) []int {
					fs := make([]*forkjoin.Future[int], n)
					for i := range fs {
						fs[i] = forkjoin.Fork(w, func(*forkjoin.Worker) int { return i * i })
					}
					res := make([]int, n)
					for _, i := range order() {
						res[i] = fs[i].Join(w)
					}
					return res
				})
			})
			for i, v := range got {
				require.Equal(t, i*i, v, "%s: future %d", name, i)
			}
		}
	})
}
