package forkjoin_test

// BenchmarkSpawn: 1M tiny tasks started from inside one task, per op, in
// each way the runtime offers and with goroutines, side by side
// (docs/benchmarks.md, "Spawns"). Run -cpu 1 and -cpu 2 in separate
// processes: the pool takes GOMAXPROCS workers.

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/magpie-go/magpie/forkjoin"
)

// spawnTasks is the number of tasks one op starts.
const spawnTasks = 1_000_000

// spawnCounts is one counter per worker, a cache line pair apart: a tiny
// task adds one to its worker's counter, which only that worker writes
// while the tasks run (and the caller reads after they have finished).
// The first line pair holds no counter: the compiler's nil check of c
// reads c[0], and a counter there would be a line every other worker
// reads while its owner writes it (20% of a 2-worker profile).
type spawnCounts [(64 + 1) * 16]int64

func (c *spawnCounts) add(w *forkjoin.Worker) { c[(w.Index()+1)*16]++ }

func (c *spawnCounts) total() int64 {
	var n int64
	for i := 16; i < len(c); i += 16 {
		n += c[i]
		c[i] = 0
	}
	return n
}

// spawnLeaf is the tiny task as a typed task.
type spawnLeaf struct{ c *spawnCounts }

func (l spawnLeaf) Compute(w *forkjoin.Worker) { l.c.add(w) }

// spawnLeafResult is the tiny task as a typed task with a result, for ForkTask.
type spawnLeafResult struct{ c *spawnCounts }

func (l spawnLeafResult) Compute(w *forkjoin.Worker) int { l.c.add(w); return 1 }

func BenchmarkSpawn(b *testing.B) {
	var counts spawnCounts
	// run times body, one op of spawnTasks tasks, on a fresh pool. With
	// everyWorker, body is safe to run on all workers at once and is first
	// run on each (see below).
	run := func(b *testing.B, everyWorker bool, body func(w *forkjoin.Worker)) {
		p := forkjoin.New()
		defer p.Close()
		// Untimed ops first, so that the free lists and the deque's buffers
		// grow to their steady size (b.Loop resets the counters). The op's
		// root task goes to whichever worker takes it, and each worker
		// recycles its own spawn nodes: with one warm-up op the other
		// worker's list grew during the timed ops, about 40K nodes on two
		// workers, which read as 1-4K allocations per op. So the spawns
		// warm up on every worker (Broadcast), then once as timed.
		if everyWorker {
			forkjoin.Broadcast(p, body)
		}
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int { body(w); return 0 })
		counts.total()
		b.ReportAllocs()
		for b.Loop() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int { body(w); return 0 })
			if n := counts.total(); n != spawnTasks {
				b.Fatalf("%d tasks ran, want %d", n, spawnTasks)
			}
		}
		b.ReportMetric(float64(b.Elapsed())/float64(b.N*spawnTasks), "ns/task")
	}
	b.Run("impl=Spawn", func(b *testing.B) {
		fn := func(w *forkjoin.Worker) { counts.add(w) }
		run(b, true, func(w *forkjoin.Worker) {
			forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
				for range spawnTasks {
					s.Spawn(w, fn)
				}
			})
		})
	})
	// BEGIN SpawnTask (absent from the old code's benchmark)
	b.Run("impl=SpawnTask", func(b *testing.B) {
		leaf := spawnLeaf{&counts}
		run(b, true, func(w *forkjoin.Worker) {
			forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
				for range spawnTasks {
					forkjoin.SpawnTask(s, w, leaf)
				}
			})
		})
	})
	// END SpawnTask
	b.Run("impl=ForkTask", func(b *testing.B) {
		// A flat loop of forks, then the joins newest first (the order in
		// which the forking worker finds them on its own deque).
		fs := make([]*forkjoin.Future[int], spawnTasks)
		leaf := spawnLeafResult{&counts}
		run(b, false, func(w *forkjoin.Worker) { // fs is shared: one op at a time
			for i := range fs {
				fs[i] = forkjoin.ForkTask[int](w, leaf)
			}
			for i := len(fs) - 1; i >= 0; i-- {
				fs[i].Join(w)
				fs[i] = nil
			}
		})
	})
	b.Run("impl=GoWaitGroup", func(b *testing.B) {
		var n atomic.Int64
		run(b, false, func(w *forkjoin.Worker) { // n is shared: one op at a time
			var wg sync.WaitGroup
			wg.Add(spawnTasks)
			for range spawnTasks {
				go func() {
					n.Add(1)
					wg.Done()
				}()
			}
			wg.Wait()
			counts[(w.Index()+1)*16] += n.Swap(0) // the slot add uses: the first line pair holds no counter
		})
	})
}
