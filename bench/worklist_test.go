package bench

import (
	"fmt"
	"testing"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

// A work list of independent leaves, started one by one from a flat loop:
// the shape of "for each item, do this in parallel" when the items are
// not a slice a helper can split (a list of requests, files, graph
// nodes). Each leaf is real computation, aluSpin for a fixed number of
// steps: about 1 µs or 100 µs on the development machine (~1.9 ns per step;
// seq's ns/leaf metric is the measured figure). magpie forks each leaf as
// a Future and joins them all, magpie-spawn spawns each leaf in a Scope,
// magpie-for is the helper magpie.For over the indices (the split
// engine, for comparison), and the goroutine baselines start one
// goroutine per leaf.

// workListShape is one leaf size: how many aluSpin steps a leaf takes and
// how many leaves one operation runs (about 20 ms of work in all).
type workListShape struct {
	name          string
	steps, leaves int
}

var workListShapes = []workListShape{
	{"1us", 512, 20_000},
	{"100us", 51_200, 200},
}

// workListLeaf is leaf i's computation; its result goes to its own slot.
func workListLeaf(out []uint64, steps, i int) { out[i] = aluSpin(steps, uint64(i)) }

// workListSpawn spawns every leaf in one scope on r.
func workListSpawn(r forkjoin.Runner, out []uint64, steps int) {
	forkjoin.ScopeOn(r, func(s *forkjoin.Scope, w *forkjoin.Worker) {
		for i := range out {
			s.Spawn(w, func(*forkjoin.Worker) { workListLeaf(out, steps, i) })
		}
	})
}

// workListFork forks every leaf as a Future, then joins them in order.
func workListFork(w *forkjoin.Worker, out []uint64, steps int) {
	fs := make([]*forkjoin.Future[struct{}], len(out))
	for i := range out {
		fs[i] = forkjoin.Fork(w, func(*forkjoin.Worker) struct{} { workListLeaf(out, steps, i); return struct{}{} })
	}
	for _, f := range fs {
		f.Join(w)
	}
}

// workListGroup starts one goroutine of g per leaf and waits.
func workListGroup(g benchGroup, out []uint64, steps int) {
	for i := range out {
		g.Go(func() { workListLeaf(out, steps, i) })
	}
	g.Wait()
}

// BenchmarkWorkList runs each shape's leaves from a flat loop.
func BenchmarkWorkList(b *testing.B) {
	for _, sh := range workListShapes {
		want := make([]uint64, sh.leaves)
		for i := range want {
			workListLeaf(want, sh.steps, i)
		}
		run := func(b *testing.B, fn func(out []uint64)) {
			out := make([]uint64, sh.leaves)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				fn(out)
			}
			b.StopTimer()
			for _, i := range []int{0, sh.leaves / 2, sh.leaves - 1} {
				if out[i] != want[i] {
					b.Fatalf("leaf %d: %x, want %x: not run", i, out[i], want[i])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(sh.leaves), "ns/leaf")
		}
		name := fmt.Sprintf("leaf=%s/impl=", sh.name)
		b.Run(name+"seq", func(b *testing.B) {
			run(b, func(out []uint64) {
				for i := range out {
					workListLeaf(out, sh.steps, i)
				}
			})
		})
		b.Run(name+"magpie-spawn", func(b *testing.B) {
			p := benchPool(b)
			run(b, func(out []uint64) { workListSpawn(p, out, sh.steps) })
		})
		b.Run(name+"magpie", func(b *testing.B) {
			p := benchPool(b)
			run(b, func(out []uint64) {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} { workListFork(w, out, sh.steps); return struct{}{} })
			})
		})
		b.Run(name+"magpie-for", func(b *testing.B) {
			p := benchPool(b)
			run(b, func(out []uint64) { magpie.For(p, len(out), func(i int) { workListLeaf(out, sh.steps, i) }) })
		})
		for _, bl := range goroutineBaselines {
			b.Run(name+bl.name, func(b *testing.B) {
				run(b, func(out []uint64) { workListGroup(bl.newGroup(), out, sh.steps) })
			})
		}
	}
}
