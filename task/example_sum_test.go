package task_test

import (
	"fmt"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// SumTask sums a []float64, splitting it in halves while its Cutoff says
// the part is worth splitting.
type SumTask struct {
	Xs  []float64
	Cut task.Cutoff
}

// Compute returns the sum of Xs.
func (s SumTask) Compute(w *forkjoin.Worker) float64 {
	if !s.Cut.Split(w, len(s.Xs)) {
		total := 0.0
		for _, x := range s.Xs {
			total += x
		}
		return total
	}
	mid := len(s.Xs) / 2
	// InvokeBoth forks the second task unboxed in a recycled node and runs
	// the first here: no allocation unless the second is stolen.
	left, right := task.InvokeBoth(w, SumTask{s.Xs[:mid], s.Cut}, SumTask{s.Xs[mid:], s.Cut})
	return left + right
}

func ExampleCutoff() {
	pool := forkjoin.New(forkjoin.WithParallelism(2))
	defer pool.Close()

	xs := make([]float64, 1_000_000)
	for i := range xs {
		xs[i] = float64(i) // integers: the sum is exact whatever the split
	}
	fmt.Println(task.Invoke(pool, SumTask{xs, task.Fixed(10_000)}))
	fmt.Println(task.Invoke(pool, SumTask{xs, task.Adaptive()}))
	// Output:
	// 4.999995e+11
	// 4.999995e+11
}
