package task_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// Submit starts a root task without waiting for it; the Future's Get waits
// for the result (or the task's *forkjoin.PanicError).
func ExampleSubmit() {
	pool := forkjoin.New(forkjoin.WithParallelism(2))
	defer pool.Close()

	f := task.Submit(pool, Fib{25}) // queued at once; T=int is inferred
	// ... the caller does other work meanwhile ...
	v, err := f.Get(context.Background())
	fmt.Println(v, err)
	// Output:
	// 75025 <nil>
}

// Dir is a directory of a made-up tree: it counts itself and spawns one
// action per subdirectory into the scope, however many there are.
type Dir struct {
	Scope *forkjoin.Scope
	Depth int
	Count *atomic.Int64
}

// Compute visits the directory and spawns its three subdirectories.
func (d Dir) Compute(w *forkjoin.Worker) {
	d.Count.Add(1)
	if d.Depth == 0 {
		return
	}
	for range 3 {
		task.Spawn(d.Scope, w, Dir{d.Scope, d.Depth - 1, d.Count})
	}
}

// Spawn suits work whose number of tasks is found as it runs: a walk
// spawns an action per node, and RunScope returns when all have run.
func ExampleSpawn() {
	pool := forkjoin.New(forkjoin.WithParallelism(2))
	defer pool.Close()

	var count atomic.Int64
	forkjoin.Invoke(pool, func(w *forkjoin.Worker) int {
		forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
			task.Spawn(s, w, Dir{s, 4, &count})
		})
		return 0
	})
	fmt.Println(count.Load()) // 1 + 3 + 9 + 27 + 81
	// Output:
	// 121
}

// Hit is a request-sized action: it adds its weight to a shared total.
type Hit struct {
	Total *atomic.Int64
	Done  *sync.WaitGroup
	N     int64
}

// Compute records the hit.
func (h Hit) Compute(*forkjoin.Worker) {
	h.Total.Add(h.N)
	h.Done.Done()
}

// Execute is fire and forget: nothing to join, and the action, stored
// unboxed in a node the pool recycles, allocates nothing once warm. Here
// the caller waits with a WaitGroup of its own.
func ExampleExecute() {
	pool := forkjoin.New(forkjoin.WithParallelism(2))
	defer pool.Close()

	var total atomic.Int64
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		hit := Hit{&total, &wg, int64(i)}
		var err error
		if i%10 == 0 {
			err = task.ExecutePriority(pool, forkjoin.Urgent, hit) // before queued Normal ones
		} else {
			err = task.Execute(pool, hit)
		}
		if err != nil {
			fmt.Println(err) // forkjoin.ErrClosed once the pool is closed
		}
	}
	wg.Wait()
	fmt.Println(total.Load())
	// Output:
	// 4950
}
