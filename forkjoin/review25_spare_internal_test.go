package forkjoin

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// checkSlots checks the compensating slots of a closed pool: every one
// free, on the spare list exactly once, none blocked, none queued for.
func checkSlots(t *testing.T, p *Pool) {
	t.Helper()
	p.spareMu.Lock()
	defer p.spareMu.Unlock()
	require.Empty(t, p.spareWaits, "Blocks still queued")
	require.Len(t, p.spares, len(p.workers)-p.parallelism, "every slot back on the list")
	seen := map[*Worker]bool{}
	for _, s := range p.spares {
		require.False(t, seen[s], "slot %d listed twice", s.index)
		seen[s] = true
	}
	for _, w := range p.workers {
		require.Zero(t, w.blocking.Load(), "worker %d counted blocked", w.index)
		if w.spare {
			require.Equal(t, spareFree, w.spareState.Load(), "slot %d", w.index)
		}
	}
}

// rev25Blocker runs rounds of Blocks of every kind on w, each waiting for
// an event that comes whatever the pool does (a goroutine of its own
// closes the channel), so that no mix of them can hang: plain Blocks,
// Blocking (its foreign path when no slot is free or retiring), Blocks
// whose fn panics or calls runtime.Goexit after the wait, a Block whose
// fn Blocks again on w (nested: its own worker is then blocked), and a
// Block around a fork that Blocks in turn.
func rev25Blocker(w *Worker, seed uint64, rounds int) {
	rng := seed*2654435761 + 1
	next := func(n uint64) uint64 {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return rng % n
	}
	event := func() chan struct{} {
		ch := make(chan struct{})
		k := next(4)
		go func() {
			for range k {
				runtime.Gosched()
			}
			close(ch)
		}()
		return ch
	}
	for range rounds {
		ch := event()
		switch next(7) {
		case 0, 1:
			Block(w, func() { <-ch })
		case 2:
			Blocking(func() { <-ch })
		case 3:
			func() {
				defer func() { _ = recover() }()
				Block(w, func() { <-ch; panic("in Block") })
			}()
		case 4:
			Block(w, func() {
				<-ch
				ch2 := event()
				Block(w, func() { <-ch2 })
			})
		case 5:
			f := Fork(w, func(w *Worker) int {
				ch2 := event()
				Block(w, func() { <-ch2 })
				return 0
			})
			Block(w, func() { <-ch })
			f.Join(w)
		case 6:
			Blocking(func() {
				<-ch
				ch2 := event()
				Blocking(func() { <-ch2 })
			})
		}
	}
	switch next(16) { // ends the task: last
	case 0:
		Block(w, func() { runtime.Goexit() })
	case 1:
		ch := event()
		Blocking(func() { <-ch; runtime.Goexit() }) // a *PanicError on the foreign path
	}
}

// TestRev25SpareSlotsStress: tasks Block in every way at once (see
// rev25Blocker) on pools of one and two workers with no, one and two
// compensating slots, so that spares start, retire, are taken over,
// queued for and handed on, exit and restart for a queue, many times
// over. Each slot runs one goroutine at a time (the hooks of an index
// never overlap), the pool goes back to Parallelism() workers, all idle,
// once the tasks are done, Close returns, and then every slot is free and
// on the list once, with no Block queued or counted.
func TestRev25SpareSlotsStress(t *testing.T) {
	for _, par := range []int{1, 2} {
		for _, maxBlocked := range []int{0, 1, 2} {
			t.Run(fmt.Sprintf("P%d/M%d", par, maxBlocked), func(t *testing.T) {
				for round := range 10 {
					h := NewHookPairs()
					p := New(WithParallelism(par), WithMaxBlocked(maxBlocked),
						WithWorkerHooks(h.Start, h.Exit),
						WithPanicHandler(func(*PanicError) {}))
					var wg sync.WaitGroup
					tasks := 3 + par
					wg.Add(tasks)
					for i := range tasks {
						seed := uint64(round*31 + i*7 + par*3 + maxBlocked)
						require.NoError(t, p.Execute(func(w *Worker) {
							defer wg.Done()
							rev25Blocker(w, seed, 40)
						}))
					}
					testenv.Within(t, fmt.Sprintf("round %d", round), wg.Wait)
					testenv.WaitUntil(t, "the spares retire", func() bool {
						s := p.Stats()
						return s.Workers == par && s.Idle == par
					})
					testenv.Within(t, "Close", p.Close)
					require.Zero(t, p.Stats().Workers)
					h.Check(t)
					checkSlots(t, p)
				}
			})
		}
	}
}

// TestRev25CloseRacingSpareSlots: the same Blocks while Close is called
// from outside at once, run by submitted tasks or, every other round, by
// forks that their root never joins, so that they Block on a drained pool
// too: every task completes, Close returns, no worker is left, the hooks
// pair up and the slots are all free.
func TestRev25CloseRacingSpareSlots(t *testing.T) {
	for round := range 40 {
		forks := round%4 >= 2
		h := NewHookPairs()
		par, maxBlocked := 1+round%2, round%3
		p := New(WithParallelism(par), WithMaxBlocked(maxBlocked),
			WithWorkerHooks(h.Start, h.Exit),
			WithPanicHandler(func(*PanicError) {}))
		var done atomic.Int64
		for i := range 4 {
			seed := uint64(round*13 + i)
			task := func(w *Worker) int {
				defer done.Add(1)
				rev25Blocker(w, seed, 20)
				return 0
			}
			require.NoError(t, p.Execute(func(w *Worker) {
				if forks {
					Fork(w, task) // never joined
				} else {
					task(w)
				}
			}))
		}
		if round%2 == 0 {
			runtime.Gosched()
		}
		testenv.Within(t, fmt.Sprintf("Close, round %d", round), p.Close)
		require.Equal(t, int64(4), done.Load())
		require.Zero(t, p.Stats().Workers)
		h.Check(t)
		checkSlots(t, p)
	}
}
