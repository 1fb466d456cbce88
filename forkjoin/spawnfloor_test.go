package forkjoin_test

// BenchmarkSpawnFloor measures the floor of the spawn blocks' design
// (spawn.go, "Blocks") with everything else taken away: no deque, no
// scope count, no computation, no panic guard, no interface call. The
// spawner writes each tiny task (spawnLeaf's) into a block of 32; a full
// block goes to the other goroutine if that one is waiting for work (one
// atomic mailbox), else the spawner runs it itself. The other goroutine
// runs the blocks it gets and gives them back to the spawner's stack of
// returned blocks (a CAS), which the spawner takes whole (a Swap), as a
// spawn node goes back to its owner's list. With GOMAXPROCS 1 there is no
// second goroutine and the spawner runs every block. Set beside
// BenchmarkSpawn, it shows what moving tiny tasks between two cores costs
// on the machine itself, whatever the runtime around it
// (docs/benchmarks.md, "The floor of moving tiny tasks"). Run one
// GOMAXPROCS per process:
//
//	go test ./forkjoin -run XXX -bench 'SpawnFloor' -benchtime 3x -cpu 1
//	go test ./forkjoin -run XXX -bench 'SpawnFloor' -benchtime 3x -cpu 2

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

const floorBlockLen = 32 // spawnBlock

// floorLeaf is the tiny task: it adds one to the counter of the
// goroutine that runs it (slot i of spawnCounts), as spawnLeaf does to its
// worker's.
type floorLeaf struct{ c *spawnCounts }

func (l floorLeaf) run(i int) { l.c[(i+1)*16]++ }

// floorBlock is a block of tasks, as a spawn node's.
type floorBlock struct {
	n     int
	tasks [floorBlockLen]floorLeaf
	next  *floorBlock
}

// floorSpawner is the spawning goroutine's state and the shared lines.
type floorSpawner struct {
	free *floorBlock // spawner only
	_    [128]byte
	// returned holds blocks the runner emptied; it pushes with a CAS, the
	// spawner takes them all with a Swap.
	returned atomic.Pointer[floorBlock]
	_        [128]byte
	// mailbox holds a block for the runner, which sets hungry while it
	// waits for one; the spawner clears hungry when it fills the mailbox.
	mailbox atomic.Pointer[floorBlock]
	hungry  atomic.Bool
	stop    atomic.Bool
	_       [128]byte
	ran     atomic.Int64 // tasks the runner ran, added once per block
	_       [128]byte
	handed  int64 // tasks the spawner handed over; spawner only
}

func (f *floorSpawner) take() *floorBlock {
	b := f.free
	if b == nil {
		b = f.returned.Swap(nil)
		if b == nil {
			return &floorBlock{}
		}
	}
	f.free = b.next
	b.next = nil
	return b
}

// runFloorBlock runs b's tasks newest first, as a spawn node's are run,
// as goroutine i.
func runFloorBlock(b *floorBlock, i int) {
	for b.n > 0 {
		b.n--
		b.tasks[b.n].run(i)
	}
}

// spawnLoop spawns n tasks of leaf as goroutine 0, handing full blocks to
// the runner when it is hungry, and returns once every task has run.
func (f *floorSpawner) spawnLoop(leaf floorLeaf, n int, runner bool) {
	b := f.take()
	for range n {
		b.tasks[b.n] = leaf
		b.n++
		if b.n < floorBlockLen {
			continue
		}
		if runner && f.hungry.Load() && f.mailbox.Load() == nil {
			f.hungry.Store(false)
			f.handed += floorBlockLen
			f.mailbox.Store(b)
		} else {
			runFloorBlock(b, 0)
			b.next = f.free
			f.free = b
		}
		b = f.take()
	}
	runFloorBlock(b, 0)
	b.next = f.free
	f.free = b
	for f.ran.Load() != f.handed { // the blocks handed over: wait for them
		runtime.Gosched()
	}
}

// runLoop is the runner, goroutine 1: it waits for blocks, runs them and
// returns them.
func (f *floorSpawner) runLoop() {
	for !f.stop.Load() {
		b := f.mailbox.Load()
		if b == nil {
			if !f.hungry.Load() {
				f.hungry.Store(true)
			}
			continue
		}
		f.mailbox.Store(nil)
		k := b.n
		runFloorBlock(b, 1)
		f.ran.Add(int64(k)) // after the tasks: the spawner's load of ran orders their counts before its read
		for {
			h := f.returned.Load()
			b.next = h
			if f.returned.CompareAndSwap(h, b) {
				break
			}
		}
	}
}

func BenchmarkSpawnFloor(b *testing.B) {
	// hand=yes is the mechanism; hand=no keeps the runner spinning for
	// blocks it is never handed, so that it measures what the spinning
	// neighbour alone costs the spawner. With GOMAXPROCS 1 both are the
	// spawner alone.
	for _, hand := range []bool{true, false} {
		name := map[bool]string{true: "hand=yes", false: "hand=no"}[hand]
		b.Run(name, func(b *testing.B) { benchSpawnFloor(b, hand) })
	}
}

func benchSpawnFloor(b *testing.B, hand bool) {
	var counts spawnCounts
	leaf := floorLeaf{&counts}
	runner := runtime.GOMAXPROCS(0) > 1
	f := &floorSpawner{}
	var done sync.WaitGroup
	if runner {
		done.Add(1)
		go func() {
			defer done.Done()
			f.runLoop()
		}()
	}
	f.spawnLoop(leaf, spawnTasks, runner && hand) // warm-up: the blocks
	counts.total()
	ran0 := f.ran.Load()
	b.ReportAllocs()
	for b.Loop() {
		f.spawnLoop(leaf, spawnTasks, runner && hand)
	}
	f.stop.Store(true)
	done.Wait()
	if n := counts.total(); n != int64(b.N)*spawnTasks {
		b.Fatalf("%d tasks ran, want %d", n, int64(b.N)*spawnTasks)
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N*spawnTasks), "ns/task")
	b.ReportMetric(float64(f.ran.Load()-ran0)/float64(b.N*spawnTasks), "handed/task")
}
