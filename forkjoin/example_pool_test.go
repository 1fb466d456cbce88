package forkjoin_test

import (
	"fmt"
	"sync/atomic"

	"github.com/magpie-go/magpie/forkjoin"
)

// Broadcast warms per-worker state: here one scratch buffer per worker,
// indexed by Index(), which tasks then use without locks since a worker
// runs one task at a time.
func ExampleBroadcast() {
	pool := forkjoin.New(forkjoin.WithParallelism(4))
	defer pool.Close()

	scratch := make([][]byte, pool.MaxWorkers())
	forkjoin.Broadcast(pool, func(w *forkjoin.Worker) {
		scratch[w.Index()] = make([]byte, 0, 1<<10)
	})
	ready := 0
	for _, b := range scratch[:pool.Parallelism()] {
		if cap(b) == 1<<10 {
			ready++
		}
	}
	fmt.Println(ready, "workers ready")
	// Output: 4 workers ready
}

// Worker hooks bracket each worker goroutine's life, compensating
// workers included; Close returns after every exit hook.
func ExampleWithWorkerHooks() {
	var live, started atomic.Int64
	pool := forkjoin.New(forkjoin.WithParallelism(3), forkjoin.WithWorkerHooks(
		func(index int) { live.Add(1); started.Add(1) },
		func(index int) { live.Add(-1) }))
	forkjoin.Invoke(pool, func(*forkjoin.Worker) int { return 0 })
	pool.Close()
	fmt.Println("started:", started.Load(), "live after Close:", live.Load())
	// Output: started: 3 live after Close: 0
}

// WorkerStats shows how the work spread over the workers; after Close
// (or once the pool is idle) the counters are exact.
func ExamplePool_WorkerStats() {
	pool := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxBlocked(-1))
	for range 10 {
		forkjoin.Invoke(pool, func(*forkjoin.Worker) int { return 0 })
	}
	pool.Close()
	var completed uint64
	for _, s := range pool.WorkerStats() {
		completed += s.Completed
	}
	fmt.Println(len(pool.WorkerStats()), "workers completed", completed, "submitted tasks")
	// Output: 2 workers completed 10 submitted tasks
}

// SetDefault configures the Default pool; call it first thing in main,
// before anything uses Default() (or passes a nil Runner). No output is
// checked: in a test binary the Default pool already exists, and
// SetDefault returns ErrDefaultStarted.
func ExampleSetDefault() {
	if err := forkjoin.SetDefault(forkjoin.WithParallelism(4), forkjoin.WithName("app")); err != nil {
		fmt.Println(err) // something used Default() first
	}
	forkjoin.Invoke(nil, func(w *forkjoin.Worker) int { return w.Index() })
}
