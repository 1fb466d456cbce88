// Command fib computes Fibonacci numbers by naive recursion, forking at
// every level above a cutoff, and compares the pool against sequential code
// measured in the same run.
//
//	go run ./examples/fib            # fib(40), cutoff 25, all cores
//	go run ./examples/fib -n 35 -cutoff 20 -p 2
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

func fibSeq(n int) int {
	if n < 2 {
		return n
	}
	return fibSeq(n-1) + fibSeq(n-2)
}

// fibTask is a typed task: forking it stores it unboxed, with no allocation.
type fibTask struct{ n, cutoff int }

func (t fibTask) Compute(w *forkjoin.Worker) int {
	if t.n < t.cutoff {
		return fibSeq(t.n)
	}
	a, b := task.InvokeBoth[int, int](w,
		fibTask{t.n - 1, t.cutoff}, fibTask{t.n - 2, t.cutoff})
	return a + b
}

func main() {
	n := flag.Int("n", 40, "compute fib(n)")
	cutoff := flag.Int("cutoff", 25, "below this n, recurse sequentially")
	par := flag.Int("p", 0, "workers (0: GOMAXPROCS)")
	flag.Parse()
	if *n < 0 || *n > 92 {
		fmt.Fprintln(os.Stderr, "fib: n must be in 0..92")
		os.Exit(2)
	}

	pool := forkjoin.New(forkjoin.WithParallelism(*par))
	defer pool.Close()

	start := time.Now()
	want := fibSeq(*n)
	seq := time.Since(start)

	start = time.Now()
	got := forkjoin.Invoke(pool, fibTask{*n, *cutoff}.Compute)
	par_ := time.Since(start)

	if got != want {
		fmt.Fprintf(os.Stderr, "fib: got %d, want %d\n", got, want)
		os.Exit(1)
	}
	fmt.Printf("fib(%d) = %d\n", *n, got)
	fmt.Printf("sequential: %v\n", seq.Round(time.Microsecond))
	fmt.Printf("magpie:     %v on %d workers (GOMAXPROCS %d, cutoff %d)\n",
		par_.Round(time.Microsecond), pool.Parallelism(), runtime.GOMAXPROCS(0), *cutoff)
	fmt.Printf("speedup:    %.2fx\n", seq.Seconds()/par_.Seconds())
	fmt.Printf("stats:      %v\n", pool.Stats())
}
