package pipeline_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/pipeline"
)

// A CPU stage on the default pool, then a slow stage on a small pool of
// its own, in input order, into a sink.
func Example() {
	io := forkjoin.New(forkjoin.WithParallelism(2))
	defer io.Close()

	lines := pipeline.From(slices.Values([]string{"a b", "c d e", "f"}))
	counted := pipeline.Map(lines, nil, func(_ context.Context, _ *forkjoin.Worker, s string) (int, error) {
		return len(strings.Fields(s)), nil
	})
	stored := pipeline.Map(counted, io, func(_ context.Context, _ *forkjoin.Worker, n int) (string, error) {
		return strings.Repeat("*", n), nil // stands for a write to a slow device
	}, pipeline.WithLimit(2))
	err := pipeline.Run(context.Background(), stored, func(s string) error {
		fmt.Println(s)
		return nil
	})
	fmt.Println(err)
	// Output:
	// **
	// ***
	// *
	// <nil>
}
