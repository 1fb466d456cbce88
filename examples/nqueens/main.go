// Command nqueens counts the solutions of the N-Queens problem by
// backtracking, forking one task per free column of each row near the top
// of the search tree. The tree is irregular (some placements die at once,
// others hide thousands of solutions), the case where work stealing and an
// adaptive cutoff earn their keep. It compares the pool against the
// sequential search timed in the same run.
//
//	go run ./examples/nqueens                # 13 queens, all cores, adaptive cutoff
//	go run ./examples/nqueens -n 14 -p 2
//	go run ./examples/nqueens -n 14 -depth 4 # fork in the first 4 rows only
package main

import (
	"flag"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// queens is the search below a partial placement: cols, left and right are
// the bit masks of the columns the placed queens attack in the next row
// (vertically and along the two diagonals).
type queens struct {
	n, row            int
	cols, left, right uint64
	cut               task.Cutoff
}

// Compute returns the number of solutions below q. The cutoff sees the
// subtree size estimated as 2^(rows left): the search below a row shrinks
// roughly geometrically, so the estimate orders subtrees correctly, which
// is all a cutoff needs.
func (q queens) Compute(w *forkjoin.Worker) int {
	all := uint64(1)<<q.n - 1
	if q.cols == all {
		return 1
	}
	if !q.cut.Split(w, 1<<(q.n-q.row)) {
		return count(all, q.cols, q.left, q.right)
	}
	// The children escape (thieves may run them), so they cost one
	// allocation per split node, sized exactly; leaves allocate nothing.
	free := all &^ (q.cols | q.left | q.right)
	children := make([]queens, 0, bits.OnesCount64(free))
	for ; free != 0; free &= free - 1 {
		bit := free & -free
		children = append(children, queens{q.n, q.row + 1,
			q.cols | bit, (q.left | bit) << 1, (q.right | bit) >> 1, q.cut})
	}
	total := 0
	for _, c := range task.InvokeSlice(w, children) {
		total += c
	}
	return total
}

// count is the sequential search (Richards' bit-mask backtracking).
func count(all, cols, left, right uint64) int {
	if cols == all {
		return 1
	}
	total := 0
	for free := all &^ (cols | left | right); free != 0; free &= free - 1 {
		bit := uint64(1) << bits.TrailingZeros64(free)
		total += count(all, cols|bit, (left|bit)<<1, (right|bit)>>1)
	}
	return total
}

// depthCutoff splits the first rows of the board only: sizes are 2^(rows
// left), so splitting while more than n-depth rows are left is Fixed.
func depthCutoff(n, depth int) task.Cutoff { return task.Fixed(1 << (n - depth)) }

func main() {
	n := flag.Int("n", 13, "board size, 1..30")
	par := flag.Int("p", 0, "workers (0: GOMAXPROCS)")
	depth := flag.Int("depth", 0, "fork in the first depth rows only (0: adaptive cutoff)")
	flag.Parse()
	if *n < 1 || *n > 30 || *depth < 0 || *depth > *n {
		fmt.Fprintln(os.Stderr, "nqueens: need 1 <= n <= 30 and 0 <= depth <= n")
		os.Exit(2)
	}

	cut, cutName := task.Adaptive(), "adaptive"
	if *depth > 0 {
		cut, cutName = depthCutoff(*n, *depth), fmt.Sprintf("fork in the first %d rows", *depth)
	}

	pool := forkjoin.New(forkjoin.WithParallelism(*par))
	defer pool.Close()

	start := time.Now()
	want := count(uint64(1)<<*n-1, 0, 0, 0)
	seq := time.Since(start)

	start = time.Now()
	got := task.Invoke(pool, queens{n: *n, cut: cut})
	parT := time.Since(start)

	if got != want {
		fmt.Fprintf(os.Stderr, "nqueens: got %d solutions, sequential search found %d\n", got, want)
		os.Exit(1)
	}
	fmt.Printf("%d-queens: %d solutions\n", *n, got)
	fmt.Printf("sequential: %v\n", seq.Round(time.Microsecond))
	fmt.Printf("magpie:     %v on %d workers (GOMAXPROCS %d, cutoff: %s)\n",
		parT.Round(time.Microsecond), pool.Parallelism(), runtime.GOMAXPROCS(0), cutName)
	fmt.Printf("speedup:    %.2fx\n", seq.Seconds()/parT.Seconds())
	fmt.Printf("stats:      %v\n", pool.Stats())
}
