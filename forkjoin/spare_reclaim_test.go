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

// spareRounds is the number of back-to-back Blocks the reclaim tests make:
// each round gives the previous round's compensating worker a chance to be
// caught retiring but not yet exited.
const spareRounds = 300

// TestBlockRightAfterBlockIsCompensated: on one worker with one
// compensating slot (WithMaxBlocked(1)), a task Blocks again and again,
// each time waiting for a task that only another worker can run (one it
// submitted, or forked, just before). The compensating worker of round k
// is told to retire when round k's Block returns; round k+1's Block must
// still get a compensating worker, since none is in use any more. It found
// the slot taken by the retiring one (still alive), ran fn uncompensated,
// and the pool hung: its only worker waited in fn for a task that the
// retiring worker left behind as it exited. The hooks of each index
// alternate start, exit (a reclaimed worker calls neither), and pair up
// after Close.
func TestBlockRightAfterBlockIsCompensated(t *testing.T) {
	for _, how := range []string{"submitted", "forked"} {
		t.Run(how, func(t *testing.T) {
			h := forkjoin.NewHookPairs()
			p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(1),
				forkjoin.WithWorkerHooks(h.Start, h.Exit))
			rescue := make(chan struct{}) // closed on the way out: frees a hung round
			defer closePool(t, p)
			defer close(rescue)
			within(t, "back-to-back Blocks", func() {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
					for range spareRounds {
						ch := make(chan struct{})
						var f *forkjoin.Future[int]
						if how == "submitted" {
							if err := p.Execute(func(*forkjoin.Worker) { close(ch) }); err != nil {
								panic(err)
							}
						} else {
							f = forkjoin.Fork(w, func(*forkjoin.Worker) int { close(ch); return 0 })
						}
						forkjoin.Block(w, func() {
							select {
							case <-ch:
							case <-rescue:
							}
						})
						if f != nil {
							f.Join(w)
						}
					}
					return 0
				})
			})
			within(t, "Close", p.Close)
			h.Check(t)
		})
	}
}

// TestBlockQueuedForExitingSpare: a Block that comes while the only
// compensating slot's goroutine is leaving (it has decided to exit and
// runs its exit hook, held here) gets that slot once the goroutine has
// gone: a fresh goroutine, which calls the start hook after the old one's
// exit hook, runs the task the Block waits for. The Block found no free
// slot and none retiring, ran uncompensated, and the pool's one worker
// waited for good.
func TestBlockQueuedForExitingSpare(t *testing.T) {
	h := forkjoin.NewHookPairs()
	var once sync.Once
	inExit, release := make(chan struct{}), make(chan struct{})
	rescue := make(chan struct{})
	exit := func(i int) {
		if i == 1 {
			once.Do(func() {
				close(inExit)
				select {
				case <-release:
				case <-rescue:
				}
			})
		}
		h.Exit(i)
	}
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(1),
		forkjoin.WithWorkerHooks(h.Start, exit))
	defer closePool(t, p)
	defer close(rescue)
	within(t, "Block while the spare exits", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			ch1 := make(chan struct{})
			if err := p.Execute(func(*forkjoin.Worker) { close(ch1) }); err != nil {
				panic(err)
			}
			forkjoin.Block(w, func() { <-ch1 })
			<-inExit // the spare retired and is in its exit hook
			ch2 := make(chan struct{})
			if err := p.Execute(func(*forkjoin.Worker) { close(ch2) }); err != nil {
				panic(err)
			}
			forkjoin.Block(w, func() {
				close(release)
				select {
				case <-ch2:
				case <-rescue:
				}
			})
			return 0
		})
	})
	within(t, "Close", p.Close)
	h.Check(t)
	require.Equal(t, 2, h.Starts(1), "the slot ran two goroutines, one after the other")
}

// TestBlockEndHandsSpareToQueuedBlock: two workers, one compensating slot.
// Task X blocks (the slot's goroutine S stands in for it); while S runs a
// long task L, task Y on the other worker blocks too and finds no slot,
// waiting for T, which Y forked. Then X's Block ends (L returns after
// that), and X goes on computing until T has run. Y needs S: X's Block
// must hand S to Y rather than retire it. Retired, S left after L, with T
// stranded in Y's deque and X's worker busy: the pool hung.
func TestBlockEndHandsSpareToQueuedBlock(t *testing.T) {
	for round := range 20 {
		handOverRound(t, round)
	}
}

func handOverRound(t *testing.T, round int) {
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxBlocked(1))
	rescue := make(chan struct{})
	defer closePool(t, p)
	defer close(rescue)
	chA, chT := make(chan struct{}), make(chan struct{})
	xIn, yIn, xOut, lIn := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(3)
	require.NoError(t, p.Execute(func(w *forkjoin.Worker) { // X
		defer wg.Done()
		forkjoin.Block(w, func() { close(xIn); <-chA })
		close(xOut)
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
	<-xIn
	role := func(w *forkjoin.Worker) {
		defer wg.Done()
		if w.Index() >= p.Parallelism() { // L, on S
			close(lIn)
			select {
			case <-yIn:
			case <-rescue:
			}
			close(chA)
			select { // L ends after X's Block: S then goes on as X's Block left it
			case <-xOut:
			case <-rescue:
			}
			return
		}
		select { // S is busy with L: it cannot take T before Y's Block
		case <-lIn:
		case <-rescue:
		}
		f := forkjoin.Fork(w, func(*forkjoin.Worker) int { close(chT); return 0 }) // Y
		forkjoin.Block(w, func() {
			close(yIn)
			select {
			case <-chT:
			case <-rescue:
			}
		})
		f.Join(w)
	}
	require.NoError(t, p.Execute(role))
	require.NoError(t, p.Execute(role))
	within(t, fmt.Sprintf("round %d", round), wg.Wait)
}

// TestBlockSkipsBlockedSpare: one worker, two compensating slots. X
// blocks (S1 stands in); S1 runs Y, which blocks too (S2 stands in) and,
// once its Block is over, computes until T has run. S2 runs L, which ends
// X's Block and then Y's. When X's Block ends, S1 retires, but it is
// blocked in Y: a Block Z that X makes next, waiting for T, must not take
// S1 over, as it could run nothing for Z; Z waits for S2, which Y's Block
// hands on when it ends. Taken over, S1 stood in for Z while blocked, S2
// retired after L, and the pool hung (and on the code before the queue,
// Z ran uncompensated: the same hang).
func TestBlockSkipsBlockedSpare(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(2))
	wait, rescue := rescuer()
	defer closePool(t, p)
	defer close(rescue)
	chA, chB, chT := make(chan struct{}), make(chan struct{}), make(chan struct{})
	yIn, zIn, yOut := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(4) // X, Y, L, T
	exec := func(fn func(w *forkjoin.Worker)) {
		if err := p.Execute(func(w *forkjoin.Worker) { defer wg.Done(); fn(w) }); err != nil {
			panic(err)
		}
	}
	L := func(*forkjoin.Worker) {
		wait(yIn)
		close(chA)
		wait(zIn)
		close(chB)
		wait(yOut)
	}
	Y := func(w *forkjoin.Worker) {
		exec(L)
		forkjoin.Block(w, func() { close(yIn); wait(chB) })
		close(yOut)
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
	}
	exec(func(w *forkjoin.Worker) { // X
		exec(Y)
		forkjoin.Block(w, func() { wait(chA) })
		exec(func(*forkjoin.Worker) { close(chT) })         // T
		forkjoin.Block(w, func() { close(zIn); wait(chT) }) // Z
	})
	within(t, "nested Blocks", wg.Wait)
}

// TestBlockChainsWithinBoundStress: two workers, three compensating
// slots, rounds of two concurrent chains of Blocks two deep (a task
// Blocks until its child, submitted or forked, has run; the child does
// the same with a leaf), so that at most four goroutines block at once
// and one of the five always runs: every round completes, whatever the
// order in which spares start, retire, are taken over, handed on and
// exit. Some Blocks' functions panic or call runtime.Goexit after their
// wait instead of returning. The pool never has more goroutines than
// MaxWorkers(), the hooks pair up, and it ends at Parallelism() workers.
func TestBlockChainsWithinBoundStress(t *testing.T) {
	h := forkjoin.NewHookPairs()
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxBlocked(3),
		forkjoin.WithWorkerHooks(h.Start, h.Exit),
		forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}))
	rescue := make(chan struct{})
	defer closePool(t, p)
	defer close(rescue)
	var tooMany atomic.Int64
	var chain func(w *forkjoin.Worker, depth, seed int, done chan struct{})
	chain = func(w *forkjoin.Worker, depth, seed int, done chan struct{}) {
		defer close(done)
		if n := p.Stats().Workers; n > p.MaxWorkers() {
			tooMany.Store(int64(n))
		}
		if depth == 0 {
			return
		}
		child := make(chan struct{})
		var f *forkjoin.Future[int]
		if seed%2 == 0 {
			if err := p.Execute(func(w *forkjoin.Worker) { chain(w, depth-1, seed/2, child) }); err != nil {
				panic(err)
			}
		} else {
			f = forkjoin.Fork(w, func(w *forkjoin.Worker) int { chain(w, depth-1, seed/2, child); return 0 })
		}
		end := seed % 7 // 5: panic after the wait, 6: Goexit after the wait
		func() {
			defer func() { _ = recover() }()
			forkjoin.Block(w, func() {
				select {
				case <-child:
				case <-rescue:
				}
				switch end {
				case 5:
					panic("in Block")
				case 6:
					if f == nil { // a Goexit ends the task: not with a fork to join
						runtime.Goexit()
					}
				}
			})
		}()
		if f != nil {
			f.Join(w)
		}
	}
	for round := range 100 {
		var dones []chan struct{}
		for c := range 2 {
			done := make(chan struct{})
			dones = append(dones, done)
			seed := round*7 + c*3
			require.NoError(t, p.Execute(func(w *forkjoin.Worker) { chain(w, 2, seed, done) }))
		}
		within(t, fmt.Sprintf("round %d", round), func() {
			for _, d := range dones {
				<-d
			}
		})
	}
	waitUntil(t, "the spares retire", func() bool { return p.Stats().Workers == p.Parallelism() })
	require.Zero(t, tooMany.Load(), "more goroutines than MaxWorkers")
	within(t, "Close", p.Close)
	h.Check(t)
}

// TestCloseRacingBlocks: Close from outside while three tasks Block for
// their forks again and again, on one worker with three compensating
// slots (as many as Blocks can be in progress at once: fewer can hang, as
// documented), so that Blocks queue, take over retiring workers and hand
// theirs on as the pool closes: every task completes, Close returns, no
// worker is left, and the hooks pair up.
func TestCloseRacingBlocks(t *testing.T) {
	for round := range 50 {
		h := forkjoin.NewHookPairs()
		p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(3),
			forkjoin.WithWorkerHooks(h.Start, h.Exit))
		var done atomic.Int64
		for range 3 {
			require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
				for range 5 {
					ch := make(chan struct{})
					f := forkjoin.Fork(w, func(*forkjoin.Worker) int { close(ch); return 0 })
					forkjoin.Block(w, func() { <-ch })
					f.Join(w)
				}
				done.Add(1)
			}))
		}
		within(t, fmt.Sprintf("Close, round %d", round), p.Close)
		require.Equal(t, int64(3), done.Load())
		require.Zero(t, p.Stats().Workers)
		h.Check(t)
	}
}

// TestBlockIsNotItsOwnCompensation: a compensating worker S1, retiring
// (the Block it stood in for has returned) but still running a task,
// Blocks in that task while the pool's other slot is held by an exiting
// goroutine (in its exit hook, held here). The Block must not take S1
// over, itself: it must queue, and get the other slot once its goroutine
// has gone, whose fresh goroutine runs the task the Block waits for. It
// counted S1 as not blocked (the count was raised after the search) and
// took itself as its compensation, and the pool hung.
func TestBlockIsNotItsOwnCompensation(t *testing.T) {
	var once sync.Once
	inExit, release, rescue := make(chan struct{}), make(chan struct{}), make(chan struct{})
	wait := func(ch chan struct{}) {
		select {
		case <-ch:
		case <-rescue:
		}
	}
	var p *forkjoin.Pool
	exit := func(i int) {
		if i == 2 { // the first slot Block starts (the free list's last)
			once.Do(func() { close(inExit); wait(release) })
		}
	}
	p = forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(2),
		forkjoin.WithWorkerHooks(nil, exit))
	defer closePool(t, p)
	defer close(rescue)
	chA, xOut, chT := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(3) // X, Y, T
	exec := func(fn func(w *forkjoin.Worker)) {
		if err := p.Execute(func(w *forkjoin.Worker) { defer wg.Done(); fn(w) }); err != nil {
			panic(err)
		}
	}
	Y := func(w *forkjoin.Worker) { // on S1
		close(chA)
		wait(xOut) // S1 now retires, busy with Y
		exec(func(*forkjoin.Worker) { close(chT) })
		forkjoin.Block(w, func() { close(release); wait(chT) })
	}
	exec(func(w *forkjoin.Worker) { // X
		forkjoin.Block(w, func() {}) // slot 2 starts, retires, and is held in its exit hook
		wait(inExit)
		exec(Y)
		forkjoin.Block(w, func() { wait(chA) }) // slot 1 (S1) starts and runs Y
		close(xOut)
		for { // busy until T has run: only a compensating worker can run it
			select {
			case <-chT:
				return
			case <-rescue:
				return
			default:
				runtime.Gosched()
			}
		}
	})
	within(t, "a Block on a retiring spare", wg.Wait)
}
