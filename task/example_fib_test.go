package task_test

import (
	"fmt"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// Fib is the classic RecursiveTask of Java's ForkJoin documentation: it
// forks fib(n-1), computes fib(n-2) itself, then joins. It forks at every
// level to show the idiom; real code stops splitting below a cutoff.
type Fib struct{ N int }

// Compute returns the N-th Fibonacci number.
func (f Fib) Compute(w *forkjoin.Worker) int {
	if f.N <= 1 {
		return f.N
	}
	f1 := task.Fork(w, Fib{f.N - 1}) // no type arguments: T=int is inferred
	return Fib{f.N - 2}.Compute(w) + f1.Join(w)
}

func ExampleFork() {
	pool := forkjoin.New(forkjoin.WithParallelism(2))
	defer pool.Close()

	fmt.Println(task.Invoke(pool, Fib{20}))
	// Output: 6765
}
