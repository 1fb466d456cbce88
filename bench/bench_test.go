// Comparative benchmarks: every workload is measured for magpie and for the
// code a Go user would write instead, side by side in one process, so that
// the ratios between them are fair. Names follow Workload/impl=NAME so that
// benchstat can pivot on the implementation (in this directory, one
// GOMAXPROCS value per process: see checkProcs):
//
//	for p in 1 2; do MAGPIE_BENCH_PROCS=$p go test -run '^$' -bench . -benchmem -count 10 -cpu $p -timeout 0 .; done > new.txt
//	benchstat -col /impl new.txt
//
// scripts/bench runs the whole suite with a benchtime chosen per workload,
// writes the benchstat tables and regenerates the plots (docs/benchmarks.md).
//
// The implementations:
//
//	seq        the sequential code (the standard library where it has one)
//	magpie     the magpie helpers or typed tasks on a forkjoin.Pool
//	waitgroup  plain goroutines joined with sync.WaitGroup, at the same cutoff
//	errgroup   golang.org/x/sync/errgroup, at the same cutoff
//	conc       github.com/sourcegraph/conc (WaitGroup for fork-join, iter for
//	           data parallelism, pool for submitted tasks)
//	channel    a fixed set of GOMAXPROCS goroutines draining one shared channel
//	           (submitted tasks only: the global queue work stealing replaces)
//
// (and, in some families, variants named in their files). BenchmarkCeiling
// (ceiling_test.go) is not a workload: it measures what the machine
// allows P goroutines at the moment, and scripts/bench runs it before every
// round of every family.
//
// Every pool and worker set has runtime.GOMAXPROCS(0) workers, so the -cpu
// flag drives the scaling run for magpie and the baselines alike. A pool is
// created and closed inside each benchmark function, outside the timed loop:
// the package's TestMain checks for leaked goroutines.
package bench

import (
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/sourcegraph/conc"
	"golang.org/x/sync/errgroup"

	"github.com/magpie-go/magpie/forkjoin"
)

// benchPool starts a pool with one worker per GOMAXPROCS and closes it when
// the benchmark function returns. The testing package stops the timer before
// cleanups run, so starting and stopping workers is never measured; the
// caller resets the timer after building its inputs.
func benchPool(b *testing.B) *forkjoin.Pool { return benchPoolOf(b, runtime.GOMAXPROCS(0)) }

// benchPoolOf is benchPool with n workers.
func benchPoolOf(b *testing.B, n int) *forkjoin.Pool {
	checkProcs(b)
	p := forkjoin.New(forkjoin.WithParallelism(n))
	b.Cleanup(p.Close)
	// Wake every worker once so the first timed iteration does not pay for
	// goroutine start-up.
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return w.Index() })
	return p
}

// checkProcs fails the benchmark if it does not run at the GOMAXPROCS that
// scripts/bench asked for (MAGPIE_BENCH_PROCS, set when each process runs
// one -test.cpu value). Go's -cpu 1,2 with sub-benchmarks runs the rows
// named for 1 at GOMAXPROCS 2; one value per process avoids that, and this
// check keeps it so.
func checkProcs(b *testing.B) {
	want := os.Getenv("MAGPIE_BENCH_PROCS")
	if want == "" {
		return
	}
	if got := strconv.Itoa(runtime.GOMAXPROCS(0)); got != want {
		b.Fatalf("running at GOMAXPROCS %s, but scripts/bench asked for %s", got, want)
	}
}

// benchGroup is the fork-join shape shared by the goroutine baselines: Go starts
// f on a new goroutine, Wait returns once every f has returned.
// *sync.WaitGroup and *conc.WaitGroup implement it as they are; errgroup
// needs the small adapter below.
type benchGroup interface {
	Go(f func())
	Wait()
}

// benchErrGroup adapts errgroup.Group to benchGroup. The workloads never fail, so the
// error is always nil.
type benchErrGroup struct{ g errgroup.Group }

func (e *benchErrGroup) Go(f func()) { e.g.Go(func() error { f(); return nil }) }
func (e *benchErrGroup) Wait()       { _ = e.g.Wait() }

// benchBaseline is one goroutine-based implementation: its name as it appears in
// the benchmark name, and how to make a fresh benchGroup.
type benchBaseline struct {
	name     string
	newGroup func() benchGroup
}

// goroutineBaselines are the fork-join baselines, in the order they appear
// in every family (after seq and magpie).
var goroutineBaselines = []benchBaseline{
	{"waitgroup", func() benchGroup { return new(sync.WaitGroup) }},
	{"errgroup", func() benchGroup { return new(benchErrGroup) }},
	{"conc", func() benchGroup { return new(conc.WaitGroup) }},
}

// benchPar2 runs a and b in parallel with a fresh benchGroup: b on a new goroutine,
// a on the caller's. It is what a user writes to fork two halves.
func benchPar2(newGroup func() benchGroup, a, b func()) {
	g := newGroup()
	g.Go(b)
	a()
	g.Wait()
}

// benchChunks splits [0, n) into one contiguous range per GOMAXPROCS, the static
// schedule of hand-chunked goroutines.
func benchChunks(n int) [][2]int {
	p := runtime.GOMAXPROCS(0)
	out := make([][2]int, 0, p)
	for k := range p {
		lo, hi := n*k/p, n*(k+1)/p
		if lo < hi {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}

// forChunks runs body over one static chunk per GOMAXPROCS, each on its own
// goroutine of g, and waits.
func forChunks(g benchGroup, n int, body func(k, lo, hi int)) {
	for k, c := range benchChunks(n) {
		g.Go(func() { body(k, c[0], c[1]) })
	}
	g.Wait()
}

// chunkResults runs body over one static chunk per GOMAXPROCS, each on its
// own goroutine joined with a sync.WaitGroup, and returns the chunks'
// results in chunk order: the hand-written baseline of the helpers.
func chunkResults[T any](n int, body func(lo, hi int) T) []T {
	out := make([]T, len(benchChunks(n)))
	forChunks(new(sync.WaitGroup), n, func(k, lo, hi int) { out[k] = body(lo, hi) })
	return out
}

// benchRand returns a deterministic generator, so that every implementation
// and every run sees the same inputs.
func benchRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// heapWarmup is how many large allocations warmHeap makes.
const heapWarmup = 20

// heapSink keeps warmHeap's buffers from being optimised away.
var heapSink []byte

// warmHeap allocates and writes a buffer of n bytes a number of times
// before a family whose implementations allocate buffers that large per
// operation: in a fresh process the first such allocations cost several
// times the steady-state ones (fresh pages, GC pacing still growing the
// heap), which would penalise whichever implementation happens to run first.
func warmHeap(n int) {
	for range heapWarmup {
		heapSink = make([]byte, n)
		for i := 0; i < n; i += 4096 {
			heapSink[i] = 1
		}
	}
	heapSink = nil
}
