package forkjoin

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/magpie-go/magpie/internal/testenv"
)

// Review rev11: tests that need the pool's internals (the sleepers).

// TestRetiringSpareKeepsSubmitWakeup: a compensating worker told to retire
// while it is registered as a sleeper (between Prepare and its second
// exitIdle in the scheduling loop) may be the idle sleeper a submitter's
// WakeIdle picks. If it then exits without passing the wake-up on, the
// submitted task waits in the queue while the pool's other idle worker
// sleeps, with nothing left to wake it: the task never runs.
//
// Each round, on 2 workers with one compensating worker: worker A runs a
// task that Blocks until the spare S and the other regular worker B are
// idle, then waits a swept number of spins (so that, over the rounds,
// Block returns, telling S to retire, at every point of S's way to sleep),
// submits T and waits for T without helping (a channel receive). Only B or
// S can run T. On 301e773 (2 vCPUs) 6 runs of 9 failed within 50,000
// rounds (at rounds 5849 to 33427): T stayed queued, Stats workers=2
// idle=1 queued_normal=1.
func TestRetiringSpareKeepsSubmitWakeup(t *testing.T) {
	rounds := 50000
	if testing.Short() || testenv.Race {
		rounds = 5000
	}
	p := New(WithParallelism(2), WithMaxBlocked(1))
	giveUp := make(chan struct{})
	defer func() {
		close(giveUp)
		p.Close()
	}()
	var sink atomic.Int64
	for r := range rounds {
		ran := make(chan struct{})
		if err := p.Execute(func(w *Worker) {
			Block(w, func() {
				for p.idleWorkers() < 2 { // the spare and the other worker idle
				}
				for range (r * 37) % 3001 { // sweep the spare's way to sleep
					sink.Add(1)
				}
			})
			// The spare is told to retire; submit T at once.
			if err := p.Execute(func(*Worker) { close(ran) }); err != nil {
				panic(err)
			}
			select { // unmanaged: this worker does not look for T
			case <-ran:
			case <-giveUp:
			}
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ran:
		case <-time.After(testenv.HangTimeout):
			t.Fatalf("round %d: submitted task not run after %v while a worker slept (lost wake-up); stats: %v",
				r, testenv.HangTimeout, p.Stats())
		}
		// Let the spare exit, so that each round starts one.
		for {
			if live, _ := splitCounts(p.counts.Load()); live == 2 {
				break
			}
			runtime.Gosched()
		}
	}
}
