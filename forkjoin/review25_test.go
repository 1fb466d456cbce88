package forkjoin_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestRev25DrainedPoolSpareStaysForItsBlock: a fork never joined outlives
// its root, so a closed pool can be drained (no submission in flight)
// while such a fork is inside a Block. Two workers, one compensating
// slot. A root forks two tasks and returns; A Blocks (G1, slot 2, stands
// in), the pool is closed from outside, and then B forks T and Blocks
// waiting for it, while A, once its Block has returned, computes until T
// has run. G1 must stay while A's Block lasts and then go to B, whose
// Block queued for it. It left as soon as the pool was drained
// (exitIdle's drained case, whatever its state), so that B's Block took
// the freed slot, and A's Block, ending, then told B's compensating
// worker to retire (a lease on a slot it no longer held): that worker
// left without running T, and the pool hung, A busy and B blocked.
func TestRev25DrainedPoolSpareStaysForItsBlock(t *testing.T) {
	const slot = 2 // the only compensating slot: Parallelism()
	rescue := make(chan struct{})
	wait := func(ch chan struct{}) {
		select {
		case <-ch:
		case <-rescue:
		}
	}
	var starts atomic.Int32
	var exitOnce sync.Once
	g1Exit, aEnded := make(chan struct{}), make(chan struct{})
	start := func(i int) {
		if i == slot && starts.Add(1) == 2 {
			wait(aEnded) // a second goroutine in the slot: hold it until A's Block is over
		}
	}
	exit := func(i int) {
		if i == slot {
			exitOnce.Do(func() { close(g1Exit) })
		}
	}
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxBlocked(1),
		forkjoin.WithWorkerHooks(start, exit))
	defer closePool(t, p)
	defer close(rescue)

	bStarted, bGo, aIn, aGo, bIn, chT := make(chan struct{}), make(chan struct{}),
		make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	var roles atomic.Int32
	var wg sync.WaitGroup
	wg.Add(2)
	role := func(w *forkjoin.Worker) int {
		defer wg.Done()
		if roles.Add(1) == 1 { // A
			wait(bStarted) // B runs on the other worker
			forkjoin.Block(w, func() { close(aIn); wait(aGo) })
			close(aEnded)
			for { // busy until T has run
				select {
				case <-chT:
					return 0
				case <-rescue:
					return 0
				default:
					runtime.Gosched()
				}
			}
		}
		close(bStarted) // B
		wait(bGo)
		f := forkjoin.Fork(w, func(*forkjoin.Worker) int { close(chT); return 0 }) // T
		forkjoin.Block(w, func() { close(bIn); wait(chT) })
		f.Join(w)
		return 0
	}
	require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
		forkjoin.Fork(w, role) // never joined: the root completes at once
		forkjoin.Fork(w, role)
	}))
	within(t, "A's Block", func() { <-aIn })
	parks := func() uint64 { return p.WorkerStats()[slot].Parks }
	waitUntil(t, "G1 asleep", func() bool { return parks() > 0 })
	p0 := parks()
	go p.Close() // drained: the root has completed
	// G1 either leaves (as it did) or goes back to sleep, still A's.
	waitUntil(t, "G1 has seen the pool drained", func() bool {
		select {
		case <-g1Exit:
			return true
		default:
			return parks() > p0
		}
	})
	close(bGo)
	within(t, "B's Block", func() { <-bIn })
	close(aGo)
	within(t, "A and B", wg.Wait)
	within(t, "Close", p.Close)
}

// TestRev25BlockingDoesNotTakeOverBusySpare: one worker, one compensating
// slot. X Blocks; its compensating worker S runs L, a long task that
// computes until T has run. X's Block returns (S retires, busy with L),
// X forks T and waits for it through Blocking. With no slot free,
// Blocking runs its function on a goroutine of its own and the worker
// helps its pool meanwhile, so it runs T. It took S over instead (S was
// retiring) and blocked the worker in the function, S being busy with L:
// nobody ran T, and the pool hung (on de64c83, where a retiring spare's
// slot was not free, it helped).
func TestRev25BlockingDoesNotTakeOverBusySpare(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(1))
	wait, rescue := rescuer()
	defer closePool(t, p)
	defer close(rescue)
	lIn, chT := make(chan struct{}), make(chan struct{})
	within(t, "Blocking after a Block", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			require.NoError(t, p.Execute(func(*forkjoin.Worker) { // L, on S
				close(lIn)
				for {
					select {
					case <-chT:
						return
					case <-rescue:
						return
					default:
						runtime.Gosched()
					}
				}
			}))
			forkjoin.Block(w, func() { wait(lIn) })
			f := forkjoin.Fork(w, func(*forkjoin.Worker) int { close(chT); return 0 }) // T
			forkjoin.Blocking(func() { wait(chT) })
			f.Join(w)
			return 0
		})
	})
}

// TestRev25QueuedBlockEndsAsItIsServed: one worker, one slot, whose
// retiring goroutine is held in its exit hook while the next Block
// queues for it; the Block's function releases the hook and returns at
// once, so that the Block's end (endSpare, leaving the queue) races with
// the exiting goroutine handing the slot to it (workerExited). Either
// way no compensating worker is left running for nobody: the pool goes
// back to one worker, the hooks pair up, and Close returns.
func TestRev25QueuedBlockEndsAsItIsServed(t *testing.T) {
	for round := range 100 {
		h := forkjoin.NewHookPairs()
		var once sync.Once
		inExit, release := make(chan struct{}), make(chan struct{})
		exit := func(i int) {
			if i == 1 {
				once.Do(func() { close(inExit); <-release })
			}
			h.Exit(i)
		}
		p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(1),
			forkjoin.WithWorkerHooks(h.Start, exit))
		within(t, fmt.Sprintf("round %d", round), func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				forkjoin.Block(w, func() {})
				<-inExit
				forkjoin.Block(w, func() {
					close(release)
					if round%2 == 0 {
						runtime.Gosched()
					}
				})
				return 0
			})
		})
		waitUntil(t, "one worker", func() bool {
			s := p.Stats()
			return s.Workers == 1 && s.Idle == 1
		})
		within(t, "Close", p.Close)
		h.Check(t)
	}
}

// TestRev25HandedSlotStartHookGoexit: the slot an exiting compensating
// worker hands to a queued Block runs a fresh goroutine whose start hook
// calls runtime.Goexit; the goroutine after it (which calls no start hook
// again) still stands in for the Block and runs the task it waits for,
// that only a compensating worker can run.
func TestRev25HandedSlotStartHookGoexit(t *testing.T) {
	var starts atomic.Int32
	var once sync.Once
	inExit, release := make(chan struct{}), make(chan struct{})
	start := func(i int) {
		if i == 1 && starts.Add(1) == 2 {
			runtime.Goexit()
		}
	}
	exit := func(i int) {
		if i == 1 {
			once.Do(func() { close(inExit); <-release })
		}
	}
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(1),
		forkjoin.WithWorkerHooks(start, exit), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}))
	defer closePool(t, p)
	within(t, "Block served by a restarted goroutine", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			forkjoin.Block(w, func() {})
			<-inExit
			ch := make(chan struct{})
			require.NoError(t, p.Execute(func(*forkjoin.Worker) { close(ch) }))
			forkjoin.Block(w, func() { close(release); <-ch })
			return 0
		})
	})
	waitUntil(t, "one worker", func() bool { return p.Stats().Workers == 1 })
	within(t, "Close", p.Close)
	require.Equal(t, int32(2), starts.Load())
}

// TestRev25BlockDoesNotTakeOverBusySpare: one worker, two compensating
// slots, both retiring and busy when a Block comes: S1 (index 1) with L,
// which computes until T has run, S2 (index 2) with M, which computes
// only until that Block has started. The Block waits for T, which it
// forked. Taking S1 over (the first retiring one) left T to nobody: S1
// computes in L, and S2 left once M had returned. Queued, the Block gets
// S2's slot as S2 leaves, whose fresh goroutine runs T.
func TestRev25BlockDoesNotTakeOverBusySpare(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(2))
	wait, rescue := rescuer()
	defer closePool(t, p)
	defer close(rescue)
	spin := func(ch chan struct{}) {
		for {
			select {
			case <-ch:
				return
			case <-rescue:
				return
			default:
				runtime.Gosched()
			}
		}
	}
	lIn, mOut, b2In, chT := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	var onM, onL atomic.Int32
	within(t, "a Block while both spares are busy", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			require.NoError(t, p.Execute(func(w *forkjoin.Worker) { // M, on S2
				onM.Store(int32(w.Index()))
				require.NoError(t, p.Execute(func(w *forkjoin.Worker) { // L, on S1
					onL.Store(int32(w.Index()))
					close(lIn)
					spin(chT)
				}))
				forkjoin.Block(w, func() { wait(lIn) })
				close(mOut)
				spin(b2In)
			}))
			forkjoin.Block(w, func() { wait(mOut) })
			f := forkjoin.Fork(w, func(*forkjoin.Worker) int { close(chT); return 0 }) // T
			forkjoin.Block(w, func() { close(b2In); wait(chT) })
			f.Join(w)
			return 0
		})
	})
	require.Equal(t, int32(2), onM.Load())
	require.Equal(t, int32(1), onL.Load())
}
