package forkjoin_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/magpie-go/magpie/forkjoin"
)

// A CPU stage on one pool continues on a small pool of its own for the
// blocking part; nobody waits in between.
func ExampleThen() {
	cpu := forkjoin.New()
	defer cpu.Close()
	io := forkjoin.New(forkjoin.WithParallelism(1))
	defer io.Close()

	parsed := forkjoin.Submit(cpu, func(*forkjoin.Worker) []string {
		return strings.Fields("continue on another pool")
	})
	written := forkjoin.Then(io, parsed, func(_ *forkjoin.Worker, words []string) int {
		return len(words) // stands for a write to a slow device
	})
	n, err := written.Get(context.Background())
	fmt.Println(n, err)
	// Output: 4 <nil>
}

// AllOf collects results in the order of its Futures, whichever completes
// first; AnyOf takes the first to complete.
func ExampleAllOf() {
	p := forkjoin.New()
	defer p.Close()
	var parts []*forkjoin.Future[int]
	for i := 1; i <= 4; i++ {
		parts = append(parts, forkjoin.Submit(p, func(*forkjoin.Worker) int { return i * i }))
	}
	squares, _ := forkjoin.AllOf(parts...).Get(context.Background())
	sum, _ := forkjoin.Then(p, forkjoin.AllOf(parts...), func(_ *forkjoin.Worker, xs []int) int {
		s := 0
		for _, x := range xs {
			s += x
		}
		return s
	}).Get(context.Background())
	fmt.Println(squares, sum)
	// Output: [1 4 9 16] 30
}
