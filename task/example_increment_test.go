package task_test

import (
	"fmt"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// IncrementTask is the RecursiveAction of Java's documentation: it
// increments every element of Array[Lo:Hi] in place, splitting the range
// in two while it is longer than Threshold.
type IncrementTask struct {
	Array     []int
	Lo, Hi    int
	Threshold int
}

// Compute increments the range, in parallel where it pays.
func (t IncrementTask) Compute(w *forkjoin.Worker) {
	if t.Hi-t.Lo <= t.Threshold {
		for i := t.Lo; i < t.Hi; i++ {
			t.Array[i]++
		}
		return
	}
	mid := int(uint(t.Lo+t.Hi) >> 1)
	task.InvokeAllActions(w,
		IncrementTask{t.Array, t.Lo, mid, t.Threshold},
		IncrementTask{t.Array, mid, t.Hi, t.Threshold})
}

func ExampleInvokeAllActions() {
	pool := forkjoin.New(forkjoin.WithParallelism(2))
	defer pool.Close()

	a := make([]int, 10_000)
	for i := range a {
		a[i] = i
	}
	task.InvokeAction(pool, IncrementTask{Array: a, Lo: 0, Hi: len(a), Threshold: 1000})
	fmt.Println(a[0], a[4999], a[9999])
	// Output: 1 5000 10000
}
