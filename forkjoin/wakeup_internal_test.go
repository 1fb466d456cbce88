package forkjoin

// Lost wake-ups of submissions (reviews rev11 and rev12): a worker that
// leaves a wait after registering as an idle sleeper may hold the token a
// submitter's WakeIdle gave it, and must pass it on (docs/design.md,
// "Parking"). These tests need the pool's internals (the sleepers, the
// live count), so they are internal.

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/magpie-go/magpie/internal/testenv"
)

// submitWakeupRounds runs rounds (fewer under -short or -race) of a
// lost-wake-up test on p. Each round runs a task on p that calls body with
// the round's number and a submit function, which Executes S on p; the
// task then waits for S without helping (a channel receive), so only
// another worker can run S. The round fails the test if S has not run
// after the hang limit; afterRound, if not nil, runs between rounds.
func submitWakeupRounds(t *testing.T, p *Pool, rounds int, body func(w *Worker, r int, submit func()), afterRound func()) {
	t.Helper()
	if testing.Short() || testenv.Race {
		rounds /= 10
	}
	giveUp := make(chan struct{})
	defer close(giveUp)
	for r := range rounds {
		ran := make(chan struct{})
		submit := func() {
			if err := p.Execute(func(*Worker) { close(ran) }); err != nil {
				panic(err)
			}
		}
		if err := p.Execute(func(w *Worker) {
			body(w, r, submit)
			select { // unmanaged: this worker does not look for S
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
		if afterRound != nil {
			afterRound()
		}
	}
}

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
// and submits T. Only B or S can run T. On 301e773 (2 vCPUs) 6 runs of 9
// failed within 50,000 rounds (at rounds 5849 to 33427): T stayed queued,
// Stats workers=2 idle=1 queued_normal=1 (review rev11).
func TestRetiringSpareKeepsSubmitWakeup(t *testing.T) {
	p := New(WithParallelism(2), WithMaxBlocked(1))
	defer p.Close()
	var sink atomic.Int64
	submitWakeupRounds(t, p, 50000, func(w *Worker, r int, submit func()) {
		Block(w, func() {
			for p.idleWorkers() < 2 { // the spare and the other worker idle
			}
			for range (r * 37) % 3001 { // sweep the spare's way to sleep
				sink.Add(1)
			}
		})
		submit() // the spare is told to retire: submit at once
	}, func() {
		// Let the spare exit, so that each round starts one.
		for {
			if live, _ := splitCounts(p.counts.Load()); live == 2 {
				break
			}
			runtime.Gosched()
		}
	})
}

// TestForeignWaitKeepsSubmitWakeup: a worker w of P waiting in Invoke(Q, f)
// (waitForeign) registers as an idle sleeper of P, so a submitter's
// WakeIdle may pick it. If the Invoke's latch is set between w's Prepare
// and its Cancel, w leaves waitUntil by the addWaiter failure exit (or
// via findHelp and the loop's latch check) with the token, and the
// submission waits while P's other worker sleeps.
//
// Each round, on P with 2 workers: a P task waits until P's other worker
// B sleeps, then invokes f on Q. f returns, and a goroutine G submits S to
// P, at swept moments after w registers as a sleeper (P's sleeper count
// reaches 2). 3 runs of 3 failed on 37a0b30 at rounds 0, 143 and 2,520
// (review rev12).
func TestForeignWaitKeepsSubmitWakeup(t *testing.T) {
	p := New(WithParallelism(2))
	q := New(WithParallelism(1))
	defer q.Close()
	defer p.Close()
	var sink atomic.Int64
	spin := func(n int) {
		for range n {
			sink.Add(1)
		}
	}
	submitWakeupRounds(t, p, 40000, func(w *Worker, r int, submit func()) {
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
		for p.sleepers.Count() < 1 { // B asleep
			runtime.Gosched()
		}
		go func() { // G
			wait()
			spin(d2)
			submit()
		}()
		Invoke(q, func(*Worker) int {
			wait() // w registered
			spin(d1)
			return 0
		})
	}, nil)
}
