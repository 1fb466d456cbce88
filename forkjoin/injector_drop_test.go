package forkjoin_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestIdlePoolDropsExecutedFunctionsAcrossBlocks: as
// TestIdlePoolDropsExecutedFunctions, with more Executes than a few blocks
// hold (blockCap 64), so that the head leaves blocks: the functions of the
// blocks it left (peek's clearSlots, before retire puts them on the spares
// with act untouched) are dropped as well as those of the head block
// (dropTaken). One Execute at a time, so that every block is retired, not
// left to the GC.
func TestIdlePoolDropsExecutedFunctionsAcrossBlocks(t *testing.T) {
	for _, par := range []int{1, 2} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		var collected atomic.Int32
		const n = 3*64 + 5
		for range n {
			big := new([1 << 10]byte)
			runtime.AddCleanup(big, func(c *atomic.Int32) { c.Add(1) }, &collected)
			var ran sync.WaitGroup
			ran.Add(1)
			require.NoError(t, p.Execute(func(*forkjoin.Worker) { big[0]++; ran.Done() }))
			within(t, "the task", ran.Wait)
		}
		waitUntil(t, "captured values collected", func() bool {
			runtime.GC()
			return collected.Load() == n
		})
		p.Close()
	}
}
