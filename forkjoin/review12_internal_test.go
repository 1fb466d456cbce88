package forkjoin

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/magpie-go/magpie/internal/testenv"
)

// Review rev12: tests that need the pool's internals (the sleepers).

// TestForeignWaitKeepsSubmitWakeup: a worker w of P waiting in Invoke(Q, f)
// (waitForeign) registers as an idle sleeper of P, so a submitter's
// WakeIdle may pick it. If the Invoke's latch is set between w's Prepare
// and its Cancel, w leaves waitUntil by the addWaiter failure exit (or
// via findHelp and the loop's latch check) with the token, and the
// submission waits while P's other worker sleeps.
//
// Each round, on P with 2 workers: a P task T waits until P's other worker
// B sleeps, then invokes f on Q. f returns, and a goroutine G submits S to
// P, at swept moments after w registers as a sleeper (P's sleeper count
// reaches 2). T then waits for S without helping (a channel receive).
func TestForeignWaitKeepsSubmitWakeup(t *testing.T) {
	rounds := 40000
	if testing.Short() || testenv.Race {
		rounds = 4000
	}
	p := New(WithParallelism(2))
	q := New(WithParallelism(1))
	giveUp := make(chan struct{})
	defer func() {
		close(giveUp)
		p.Close()
		q.Close()
	}()
	var sink atomic.Int64
	spin := func(n int) {
		for range n {
			sink.Add(1)
		}
	}
	for r := range rounds {
		ran := make(chan struct{})
		d1, d2 := (r*7)%41, (r*13)%53
		var armed atomic.Bool // w registered as a sleeper (seen once)
		wait := func() {
			for !armed.Load() {
				if p.sleepers.Count() >= 2 {
					armed.Store(true)
				}
				runtime.Gosched() // 4 goroutines on 2 vCPUs: let w reach its Prepare
			}
		}
		if err := p.Execute(func(w *Worker) {
			for p.sleepers.Count() < 1 { // B asleep
				runtime.Gosched()
			}
			go func() { // G
				wait()
				spin(d2)
				if err := p.Execute(func(*Worker) { close(ran) }); err != nil {
					panic(err)
				}
			}()
			Invoke(q, func(*Worker) int {
				wait() // w registered
				spin(d1)
				return 0
			})
			select { // unmanaged: w does not look for S
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
	}
}
