package forkjoin_test

import (
	"fmt"
	"sync"

	"github.com/magpie-go/magpie/forkjoin"
)

// Tasks queued at several priorities start most urgent first, each level in
// submission order. The pool's only worker is held while they are queued.
func ExamplePool_ExecutePriority() {
	pool := forkjoin.New(forkjoin.WithParallelism(1))
	defer pool.Close()
	gate, held := make(chan struct{}), make(chan struct{})
	_ = pool.Execute(func(*forkjoin.Worker) { close(held); <-gate })
	<-held

	var wg sync.WaitGroup
	var order []string // one worker: the tasks run one after another
	for _, t := range []struct {
		prio forkjoin.Priority
		name string
	}{
		{forkjoin.Background, "rebuild index"},
		{forkjoin.Normal, "request 1"},
		{forkjoin.Urgent, "health check"},
		{forkjoin.Normal, "request 2"},
	} {
		wg.Add(1)
		_ = pool.ExecutePriority(t.prio, func(*forkjoin.Worker) { order = append(order, t.name); wg.Done() })
	}
	close(gate)
	wg.Wait()
	fmt.Println(order)
	// Output: [health check request 1 request 2 rebuild index]
}
