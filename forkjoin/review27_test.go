package forkjoin_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestRev27DrainedPoolKeepsWorkerForBlock: a fork never joined outlives
// its root, so a closed pool is drained (no submission in flight) while
// such a fork still runs; it may then fork and Block. Two workers, no
// compensating slot (WithMaxBlocked(0)): one Block in progress is below
// Parallelism() plus WithMaxBlocked, so some worker must be left to run
// what it waits for. F, forked by a root that returns at once, waits
// until the pool is closed and the other worker has seen it drained, then
// forks T and Blocks until T has run. The other worker left as soon as
// the pool was drained (exitIdle's drained case for a regular worker), so
// nobody ran T and the pool hung (review rev25's suspicion, confirmed by
// rev27).
func TestRev27DrainedPoolKeepsWorkerForBlock(t *testing.T) {
	for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
		t.Run(mode.String(), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxBlocked(0),
				forkjoin.WithMode(mode))
			wait, rescue := rescuer()
			defer closePool(t, p)
			defer close(rescue)
			fIn, fGo, fDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
			var fIndex atomic.Int32
			require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
				forkjoin.Fork(w, func(w *forkjoin.Worker) int { // F: never joined
					defer close(fDone)
					fIndex.Store(int32(w.Index()))
					close(fIn)
					wait(fGo)
					chT := make(chan struct{})
					forkjoin.Fork(w, func(*forkjoin.Worker) int { close(chT); return 0 }) // T
					forkjoin.Block(w, func() { wait(chT) })
					return 0
				})
			}))
			within(t, "F starts", func() { <-fIn })
			other := 1 - int(fIndex.Load())
			parks := func() uint64 { return p.WorkerStats()[other].Parks }
			waitUntil(t, "the other worker idle and asleep", func() bool {
				return p.Stats().Idle == 1 && parks() > 0
			})
			p0 := parks()
			go p.Close() // drained: the root has completed, F outlives it
			// The other worker either leaves (as it did) or, woken by
			// Close, goes back to sleep.
			waitUntil(t, "the other worker has seen the pool drained", func() bool {
				return p.Stats().Workers == 1 || parks() > p0
			})
			close(fGo)
			within(t, "F's Block", func() { <-fDone })
			within(t, "Close", p.Close)
			require.Zero(t, p.Stats().Workers)
		})
	}
}

// TestRev27ClaimedSlotLeavesQueueByClose: a submission that a Join runs
// ahead of its turn leaves the queue once it is at the front of its level
// (queue.peek, dropClaimed). Review rev24 asked whether such a slot could
// stay queued after Close. It cannot: a claimed slot stays only behind an
// older slot not taken yet, which is a submission counted in flight
// (claimed ones only leave), so the workers do not exit before taking it,
// and the take that pops it drops the claimed slots behind it under the
// same lock, before that task can finish. One worker; a task queues D
// (Execute) then E (Submit), joins E (run at once, its slot left behind
// D), and closes the pool before or after the Join; once Close returns,
// nothing is queued, everything submitted completed, and no goroutine is
// left.
func TestRev27ClaimedSlotLeavesQueueByClose(t *testing.T) {
	for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
		for _, closeFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/closeFirst=%v", mode, closeFirst), func(t *testing.T) {
				before := goleak.IgnoreCurrent()
				p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMode(mode))
				var (
					dRan     atomic.Bool
					eResult  int
					queuedIn int // QueuedNormal with D and E's claimed slot queued
				)
				done := make(chan struct{})
				require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
					defer close(done)
					if err := p.Execute(func(*forkjoin.Worker) { dRan.Store(true) }); err != nil { // D
						return
					}
					f := forkjoin.Submit(p, func(*forkjoin.Worker) int { return 7 }) // E
					if closeFirst {
						p.Close() // from a task: returns at once
					}
					eResult = f.Join(w) // claims E ahead of D
					queuedIn = p.Stats().QueuedNormal
					if !closeFirst {
						p.Close()
					}
				}))
				within(t, "the task", func() { <-done })
				within(t, "Close", p.Close)
				require.Equal(t, 7, eResult)
				require.Equal(t, 2, queuedIn, "D and E's claimed slot behind it")
				require.True(t, dRan.Load())
				s := p.Stats()
				require.Zero(t, s.QueuedNormal, "%v", s)
				require.Zero(t, s.Queued, "%v", s)
				require.Zero(t, s.Workers, "%v", s)
				require.Equal(t, uint64(3), s.Submitted, "%v", s)
				require.Equal(t, s.Submitted, s.Completed, "%v", s)
				goleak.VerifyNone(t, before)
			})
		}
	}
}

// TestRev27BusySpareHandedToQueuedBlock: review rev25 asked whether
// endSpare, handing a compensating worker busy with a long task to a
// queued Block, can hang. Two workers, one slot. A forks L and Blocks; the
// spare S runs L, which computes until T has run. B forks T and Blocks
// until T has run: no slot is free and S is busy, so B queues. A's Block
// returns and hands S, still busy with L, to B. That keeps the pool at its
// parallelism (A's worker and S run tasks, B's is blocked): A's worker,
// free again, runs T, and everything completes. Retiring S instead would
// run a third worker only once L returned, which it does only after T:
// the same wait. Only tasks that wait without telling the pool (L here,
// with A's worker busy too) can make it wait for good, as with no Block
// at all.
func TestRev27BusySpareHandedToQueuedBlock(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxBlocked(1))
	wait, rescue := rescuer()
	defer closePool(t, p)
	defer close(rescue)
	start, lIn, aIn, aGo, bIn, chT := make(chan struct{}), make(chan struct{}),
		make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	var lIndex atomic.Int32
	var roles, running atomic.Int32
	done := make(chan struct{}, 2)
	root := func(w *forkjoin.Worker) {
		defer func() { done <- struct{}{} }()
		running.Add(1)
		wait(start)
		if roles.Add(1) == 1 { // A
			forkjoin.Fork(w, func(w *forkjoin.Worker) int { // L, on the spare
				lIndex.Store(int32(w.Index()))
				close(lIn)
				wait(chT) // computes until T has run (a task that does not tell the pool)
				return 0
			})
			forkjoin.Block(w, func() { close(aIn); wait(aGo) })
			return // A's worker is free: it runs T
		}
		wait(lIn) // B
		wait(aIn)
		forkjoin.Fork(w, func(*forkjoin.Worker) int { close(chT); return 0 }) // T
		forkjoin.Block(w, func() { close(bIn); wait(chT) })
	}
	require.NoError(t, p.Execute(root))
	require.NoError(t, p.Execute(root))
	// Both roots on the two workers before either goes on: with the
	// second root still queued when A Blocked, the other worker was free
	// and stole L before the spare did (L on a regular worker: 25 of 200
	// runs failed on 6d6b6b9, 2 CPUs; review rev30).
	waitUntil(t, "both roots running", func() bool { return running.Load() == 2 })
	close(start)
	within(t, "B's Block queued", func() { <-bIn })
	require.GreaterOrEqual(t, int(lIndex.Load()), p.Parallelism(), "L runs on the spare")
	close(aGo)
	within(t, "A and B", func() { <-done; <-done })
}

// TestRev27ThenContextGoexitReportedOnce: a ThenContext stage that calls
// runtime.Goexit (its function runs inline in a computation of its own,
// invokeInline) completes its Future with ErrGoexit, which a Then chained
// after it receives as the same error without running; the panic handler
// hears of nothing (TestThenGoexitReportedOnce covers Then). A pipeline
// task's Goexit is still reported twice, to Run and to the pool's handler
// (docs/design.md, "Continuations"): it submits through the exported
// ExecuteContext.
func TestRev27ThenContextGoexitReportedOnce(t *testing.T) {
	var reported atomic.Int64
	p := forkjoin.New(forkjoin.WithParallelism(2),
		forkjoin.WithPanicHandler(func(*forkjoin.PanicError) { reported.Add(1) }))
	defer closePool(t, p)
	src := forkjoin.Submit(p, func(*forkjoin.Worker) int { return 1 })
	exits := forkjoin.ThenContext(context.Background(), p, src, func(w *forkjoin.Worker, v int) int {
		forkjoin.Fork(w, func(*forkjoin.Worker) int { return v }) // a task of its computation, never joined
		runtime.Goexit()
		return 0
	})
	var ran atomic.Bool
	after := forkjoin.Then(p, exits, func(*forkjoin.Worker, int) int { ran.Store(true); return 0 })
	_, err := get(t, exits)
	require.ErrorIs(t, err, forkjoin.ErrGoexit)
	_, err2 := get(t, after)
	require.Equal(t, err, err2, "the same error down the chain")
	require.NoError(t, p.Shutdown(context.Background()))
	require.False(t, ran.Load())
	require.Zero(t, reported.Load(), "a Goexit its Future delivers went to the panic handler too")
	require.Zero(t, p.Stats().Panics)
}

// TestRev27JoinWaiterDoesNotServeBlock shows a limit of Block's bound
// (review rev27): below Parallelism() plus WithMaxBlocked Blocks, some
// worker is not blocked in one, but if that worker waits in a join it
// runs only tasks of its own computation, never a submission, so a Block
// whose fn waits for a submitted task waits until that join ends. Two
// workers, no slot: R forks U and joins it once the other worker has
// stolen it; U submits Z and Blocks until Z has run. R's worker sleeps in its
// join, Z stays queued, and only the test's rescue of U's fn lets R's
// join end, after which R's worker, idle, runs Z.
func TestRev27JoinWaiterDoesNotServeBlock(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxBlocked(0))
	defer closePool(t, p)
	uIn, blocked, rescue, zRan := make(chan struct{}), make(chan struct{}),
		make(chan struct{}), make(chan struct{})
	var rIndex atomic.Int32
	var rParks atomic.Uint64 // R's worker's parks before R: the next is in R's join
	var rescued atomic.Bool
	f := forkjoin.Submit(p, func(w *forkjoin.Worker) int { // R
		rIndex.Store(int32(w.Index()))
		rParks.Store(p.WorkerStats()[w.Index()].Parks)
		u := forkjoin.Fork(w, func(w *forkjoin.Worker) int { // U
			close(uIn)
			if err := p.Execute(func(*forkjoin.Worker) { close(zRan) }); err != nil { // Z
				return -1
			}
			forkjoin.Block(w, func() {
				close(blocked)
				select {
				case <-zRan:
				case <-rescue:
					rescued.Store(true)
				}
			})
			return 0
		})
		forkjoin.Block(w, func() { <-uIn }) // publishes U: the other worker steals it
		return u.Join(w)                    // R's worker waits in this join
	})
	within(t, "U blocked", func() { <-blocked })
	r := int(rIndex.Load())
	waitUntil(t, "R's worker asleep in its join", func() bool {
		return p.WorkerStats()[r].Parks > rParks.Load()
	})
	s := p.Stats()
	require.Equal(t, 1, s.QueuedNormal, "Z queued: %v", s)
	select {
	case <-zRan:
		t.Fatal("Z ran while U's Block waited: the limit is gone, update Block's doc")
	default:
	}
	close(rescue)
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	require.Zero(t, v)
	require.True(t, rescued.Load())
	within(t, "Z, once R's join has ended", func() { <-zRan })
}

// TestRev27CloseRacingUnjoinedForksThatBlock: Close from outside races a
// root whose forks, never joined, each fork T and Block until T has run,
// fewer Blocks at once than Parallelism() plus WithMaxBlocked (one fork
// without a compensating slot, Parallelism() forks with one or two), in
// both modes. Every fork completes and Close returns with no worker left:
// no worker leaves while another may still need it (Pool.quiesced), and
// none stays once all are done.
func TestRev27CloseRacingUnjoinedForksThatBlock(t *testing.T) {
	for round := range 120 {
		par, maxBlocked := 2+round%2, round%3
		mode := forkjoin.LIFO
		if round%4 >= 2 {
			mode = forkjoin.FIFO
		}
		forks := par
		if maxBlocked == 0 {
			forks = 1
		}
		p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMaxBlocked(maxBlocked),
			forkjoin.WithMode(mode))
		var done atomic.Int32
		require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
			for range forks {
				forkjoin.Fork(w, func(w *forkjoin.Worker) int { // never joined
					defer done.Add(1)
					for range 3 {
						chT := make(chan struct{})
						forkjoin.Fork(w, func(*forkjoin.Worker) int { close(chT); return 0 }) // T, never joined
						forkjoin.Block(w, func() { <-chT })
					}
					return 0
				})
			}
		}))
		for range round % 3 {
			runtime.Gosched()
		}
		within(t, fmt.Sprintf("Close, round %d", round), p.Close)
		require.Equal(t, int32(forks), done.Load(), "round %d", round)
		require.Zero(t, p.Stats().Workers, "round %d", round)
	}
}
