package forkjoin_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestExecuteSteadyStateAllocatesNothing: a stream of Execute calls that
// the workers keep up with (at most 16 queued: the submitter waits for
// each group) allocates nothing once warm, blocks of the submission queue
// included: the takers retire the blocks they leave and the submitters
// reuse them (injector.go, retire). Before, every 64 submissions allocated
// a block (1 alloc per run of 64 tasks here).
func TestExecuteSteadyStateAllocatesNothing(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector allocates")
	}
	for _, par := range []int{1, 2} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var wg sync.WaitGroup
		task := func(*forkjoin.Worker) { wg.Done() }
		run := func() { // 64 tasks, in groups of 16
			for range 4 {
				wg.Add(16)
				for range 16 {
					if err := p.Execute(task); err != nil {
						panic(err)
					}
				}
				wg.Wait()
			}
		}
		for range 100 { // warm: blocks, spares, exec nodes
			run()
		}
		assert.Zero(t, testing.AllocsPerRun(200, run), "%d workers: allocations per 64 paced Executes", par)
		p.Close()
	}
}
