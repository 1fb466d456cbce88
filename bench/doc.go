// Package bench is magpie's comparative benchmark suite, a module of its
// own so that the library's go.mod requires only what the library uses.
// Every workload is timed for magpie and for the code a Go user would write
// instead: the sequential loop, goroutines with sync.WaitGroup,
// golang.org/x/sync/errgroup, github.com/sourcegraph/conc and a channel
// pool. The package holds no code but its tests and benchmarks (see
// bench_test.go); scripts/bench at the repository root runs them and writes
// docs/benchmarks.md.
//
// The module replaces github.com/magpie-go/magpie with the checkout it sits
// in (../), so it always measures the library next to it.
package bench
