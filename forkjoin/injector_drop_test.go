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

// TestIdlePoolDropsFunctionRunOnCompensatingWorker: as
// TestIdlePoolDropsExecutedFunctions, when the last Execute runs on a
// compensating worker after every other worker has gone to sleep. A worker
// drops the functions of taken slots before it sleeps (trimSpares); a
// compensating worker that retires exits instead of sleeping, and nobody
// else looks again: here the woken worker is the compensating one (the
// most recent sleeper), so worker 0, asleep since before the Execute, is
// never woken. Before the fix the function stayed in its slot for as long
// as the pool stayed idle (the collection below timed out).
//
// One worker and two compensating ones: worker 0 blocks (S1 takes its
// place and runs T1), worker 0 unblocks and sleeps, T1 blocks (S2 starts
// and sleeps, after worker 0), the Execute wakes S2, which runs it, then
// T1 unblocks and returns, retiring S2 before the Execute returns, and S1.
func TestIdlePoolDropsFunctionRunOnCompensatingWorker(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(2))
	defer closePool(t, p)
	inBlock0, release0 := make(chan struct{}), make(chan struct{})
	t1Runs, goOn := make(chan struct{}), make(chan struct{})
	inBlock1, release1 := make(chan struct{}), make(chan struct{})
	t1Done, xGo := make(chan struct{}), make(chan struct{})
	require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
		forkjoin.Block(w, func() { close(inBlock0); <-release0 })
	}))
	within(t, "worker 0 blocks", func() { <-inBlock0 })
	require.NoError(t, p.Execute(func(w *forkjoin.Worker) { // on S1
		close(t1Runs)
		<-goOn
		forkjoin.Block(w, func() { close(inBlock1); <-release1 })
		close(t1Done) // S2 is retired by now
	}))
	within(t, "T1 runs", func() { <-t1Runs })
	close(release0)
	waitUntil(t, "worker 0 asleep", func() bool { return forkjoin.SleepersOf(p) == 1 })
	close(goOn)
	within(t, "T1 blocks", func() { <-inBlock1 })
	waitUntil(t, "S2 asleep", func() bool { return forkjoin.SleepersOf(p) == 2 })

	var collected atomic.Int32
	ranOn := make(chan int, 1)
	func() { // big is captured by the Execute only
		big := new([1 << 10]byte)
		runtime.AddCleanup(big, func(c *atomic.Int32) { c.Add(1) }, &collected)
		require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
			big[0]++
			ranOn <- w.Index()
			<-xGo // ends after S2 is retired: S2 then exits rather than sleeps
		}))
	}()
	var idx int
	within(t, "the last Execute", func() { idx = <-ranOn })
	require.GreaterOrEqual(t, idx, p.Parallelism(), "the last Execute ran on a compensating worker")
	close(release1)
	within(t, "T1 returns", func() { <-t1Done })
	close(xGo)
	waitUntil(t, "the compensating workers retired", func() bool { return p.Stats().Workers == 1 })
	waitUntil(t, "the captured value collected", func() bool {
		runtime.GC()
		return collected.Load() == 1
	})
}
