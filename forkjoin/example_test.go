package forkjoin_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/magpie-go/magpie/forkjoin"
)

func fib(w *forkjoin.Worker, n int) int {
	if n < 15 {
		return fibSeq(n) // small problems run sequentially
	}
	a, b := forkjoin.Join(w,
		func(w *forkjoin.Worker) int { return fib(w, n-1) },
		func(w *forkjoin.Worker) int { return fib(w, n-2) })
	return a + b
}

// Join splits a computation in two halves that may run in parallel.
func ExampleJoin() {
	p := forkjoin.New()
	defer p.Close()
	fmt.Println(forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fib(w, 30) }))
	// Output: 832040
}

// Fork hands out a Future; join futures in any order.
func ExampleFork() {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	squares := forkjoin.Invoke(p, func(w *forkjoin.Worker) []int {
		fs := make([]*forkjoin.Future[int], 5)
		for i := range fs {
			fs[i] = forkjoin.Fork(w, func(*forkjoin.Worker) int { return i * i })
		}
		out := make([]int, len(fs))
		for i := len(fs) - 1; i >= 0; i-- {
			out[i] = fs[i].Join(w)
		}
		return out
	})
	fmt.Println(squares)
	// Output: [0 1 4 9 16]
}

// A typed task (a struct with a Compute method) forks without allocating.
func ExampleJoinTasks() {
	p := forkjoin.New()
	defer p.Close()
	fmt.Println(forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibTask(20).Compute(w) }))
	// Output: 6765
}

// Submit returns at once; Get waits from any goroutine and reports a
// task's panic as a *PanicError.
func ExampleSubmit() {
	p := forkjoin.New()
	defer p.Close()
	ok := forkjoin.Submit(p, func(w *forkjoin.Worker) int { return fib(w, 25) })
	bad := forkjoin.Submit(p, func(*forkjoin.Worker) int { panic("out of cheese") })

	v, err := ok.Get(context.Background())
	fmt.Println(v, err)
	_, err = bad.Get(context.Background())
	var pe *forkjoin.PanicError
	fmt.Println(errors.As(err, &pe), pe.Value)
	// Output:
	// 75025 <nil>
	// true out of cheese
}

// Close runs everything already submitted, then refuses new work.
func ExamplePool_Close() {
	p := forkjoin.New()
	results := make(chan int, 3)
	for i := 1; i <= 3; i++ {
		_ = p.Execute(func(*forkjoin.Worker) { results <- i * 10 })
	}
	p.Close()
	close(results)
	sum := 0
	for r := range results {
		sum += r
	}
	fmt.Println(sum, p.Execute(func(*forkjoin.Worker) {}) == forkjoin.ErrClosed)
	// Output: 60 true
}
