package forkjoin_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestSubmitterYieldsOnBacklog: with one P, a goroutine that submits
// 50,000 tiny tasks in a loop does not run its whole time slice ahead of
// the pool's worker: once a level's backlog passes 4,096 tasks the
// submitter yields its P at each block it installs, so the backlog it
// samples stays within twice that. Before, the submitter ran on until
// preempted, and the backlog reached the whole 50,000 (a queue that no
// longer fits in cache, whose blocks the GC marks: docs/design.md,
// Submissions).
func TestSubmitterYieldsOnBacklog(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	const n = 50_000
	var wg sync.WaitGroup
	wg.Add(n)
	task := func(*forkjoin.Worker) { wg.Done() }
	worst := 0
	within(t, "the submissions", func() {
		for i := range n {
			if err := p.Execute(task); err != nil {
				panic(err)
			}
			if i%256 == 255 {
				worst = max(worst, p.Stats().QueuedNormal)
			}
		}
		wg.Wait()
	})
	assert.LessOrEqual(t, worst, 2*4096, "largest backlog sampled")
	t.Logf("largest backlog sampled: %d", worst)
}

// TestBacklogReusesBlocks: with one P, a stream of 20,000 tasks from one
// goroutine reuses the blocks of its backlog (about 4,096 tasks, 64
// blocks: the submitter yields beyond it, see
// TestSubmitterYieldsOnBacklog), since a level keeps that many retired
// blocks as spares while the pool is busy: 0 allocations per stream once
// warm (the bound asserted is half the blocks of the stream). Before, the
// backlog was the whole stream and nearly every block of it was
// allocated: 308 per stream, of 313 blocks.
func TestBacklogReusesBlocks(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector allocates")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	const n = 20_000
	var wg sync.WaitGroup
	task := func(*forkjoin.Worker) { wg.Done() }
	stream := func() {
		wg.Add(n)
		for range n {
			if err := p.Execute(task); err != nil {
				panic(err)
			}
		}
		wg.Wait()
	}
	stream() // warm: the worker's exec nodes
	allocs := testing.AllocsPerRun(5, stream)
	assert.Less(t, allocs, float64(n/blockSlots/2), "allocations per stream of %d tasks", n)
	t.Logf("allocations per stream of %d tasks: %v", n, allocs)
}

// blockSlots is the number of slots of a block of the submission queue
// (forkjoin/injector.go, blockCap).
const blockSlots = 64
