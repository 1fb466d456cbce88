package forkjoin_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"

	"github.com/magpie-go/magpie/internal/testenv"
)

// chain forks a child that forks a child ... depth levels deep, each joined
// on the way back; it returns depth.
func chain(w *forkjoin.Worker, depth int) int {
	if depth == 0 {
		return 0
	}
	f := forkjoin.Fork(w, func(w *forkjoin.Worker) int { return chain(w, depth-1) })
	return f.Join(w) + 1
}

// chainTask is chain with typed tasks, stolen more easily: the parent does
// a little work of its own between Fork and Join.
type chainTask int

func (t chainTask) Compute(w *forkjoin.Worker) int {
	if t == 0 {
		return 0
	}
	f := forkjoin.ForkTask[int](w, t-1)
	return f.Join(w) + 1
}

// TestForkChainDeep runs a fork chain 100,000 deep. On one worker every
// join is inline (the goroutine stack grows to hold 100,000 frames); on
// several the chain hops between workers and every waiting joiner helps,
// nesting helping frames on each worker's stack.
func TestForkChainDeep(t *testing.T) {
	const depth = 100_000
	for _, par := range []int{1, 2, 4} {
		for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
			if testenv.Race && (par == 2) != (mode == forkjoin.FIFO) {
				continue // under -race: 1/LIFO, 2/FIFO, 4/LIFO only
			}
			t.Run(fmt.Sprintf("p=%d/%v", par, mode), func(t *testing.T) {
				p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(mode))
				defer closePool(t, p)
				var got, gotTask int
				within(t, "chain", func() {
					got = forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return chain(w, depth) })
					gotTask = depth
					if !testenv.Race {
						gotTask = forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return chainTask(depth).Compute(w) })
					}
				})
				require.Equal(t, depth, got)
				require.Equal(t, depth, gotTask)
			})
		}
	}
}

// TestJoinChainDeep is the pairwise-Join version: a Join whose b recurses
// 100,000 deep, so the chain of pending forks is as long as the recursion.
func TestJoinChainDeep(t *testing.T) {
	const depth = 100_000
	var deep func(w *forkjoin.Worker, d int) int
	deep = func(w *forkjoin.Worker, d int) int {
		if d == 0 {
			return 0
		}
		a, b := forkjoin.Join(w,
			func(*forkjoin.Worker) int { return 1 },
			func(w *forkjoin.Worker) int { return deep(w, d-1) })
		return a + b
	}
	for _, par := range []int{1, 2} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var got int
		within(t, "deep Join", func() {
			got = forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return deep(w, depth) })
		})
		require.Equal(t, depth, got)
		within(t, "Close", p.Close)
	}
}

// TestWideFork forks 100,000 futures from one task before joining any, so
// that one deque holds them all, then joins them newest first.
func TestWideFork(t *testing.T) {
	width := 100_000
	if testenv.Race {
		width = 20_000
	}
	for _, par := range []int{1, 4} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var sum int
		within(t, "wide", func() {
			sum = forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				fs := make([]*forkjoin.Future[int], width)
				for i := range fs {
					fs[i] = forkjoin.Fork(w, func(*forkjoin.Worker) int { return i })
				}
				s := 0
				for i := width - 1; i >= 0; i-- {
					s += fs[i].Join(w)
				}
				return s
			})
		})
		require.Equal(t, width*(width-1)/2, sum)
		within(t, "Close", p.Close)
	}
}
