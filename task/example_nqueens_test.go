package task_test

import (
	"fmt"
	"math/bits"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// Queens counts the ways to complete a placement of non-attacking queens
// on an N×N board, one row at a time. Cols, Left and Right are bit masks of
// the columns attacked in the current row by the queens already placed
// (vertically and along both diagonals). The search tree is irregular, so
// a cutoff on the estimated subtree size (2^rows left) decides where to
// stop forking.
type Queens struct {
	N, Row            int
	Cols, Left, Right uint64
	Cut               task.Cutoff
}

// Compute returns the number of solutions below this placement.
func (q Queens) Compute(w *forkjoin.Worker) int {
	if q.Row == q.N {
		return 1
	}
	if !q.Cut.Split(w, 1<<(q.N-q.Row)) {
		return queensSeq(q.N, q.Cols, q.Left, q.Right)
	}
	var children []Queens
	for free := q.free(); free != 0; free &= free - 1 {
		bit := free & -free
		children = append(children, Queens{q.N, q.Row + 1,
			q.Cols | bit, (q.Left | bit) << 1, (q.Right | bit) >> 1, q.Cut})
	}
	count := 0
	for _, c := range task.InvokeSlice(w, children) { // one fork per child but one
		count += c
	}
	return count
}

func (q Queens) free() uint64 {
	return (1<<q.N - 1) &^ (q.Cols | q.Left | q.Right)
}

// queensSeq is the sequential count (Richards' bit-mask backtracking).
func queensSeq(n int, cols, left, right uint64) int {
	all := uint64(1)<<n - 1
	if cols == all {
		return 1
	}
	count := 0
	for free := all &^ (cols | left | right); free != 0; free &= free - 1 {
		bit := uint64(1) << bits.TrailingZeros64(free)
		count += queensSeq(n, cols|bit, (left|bit)<<1, (right|bit)>>1)
	}
	return count
}

func ExampleInvokeSlice() {
	pool := forkjoin.New(forkjoin.WithParallelism(2))
	defer pool.Close()

	for _, n := range []int{4, 8, 10} {
		fmt.Println(n, task.Invoke(pool, Queens{N: n, Cut: task.Adaptive()}))
	}
	// Output:
	// 4 2
	// 8 92
	// 10 724
}
