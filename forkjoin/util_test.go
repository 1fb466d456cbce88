package forkjoin_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// hangTimeout, within and waitUntil are the hang limits every package's
// tests share (internal/testenv), under the short names these tests use.
const hangTimeout = testenv.HangTimeout

func within(t testing.TB, what string, fn func()) { t.Helper(); testenv.Within(t, what, fn) }

func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testenv.WaitUntil(t, what, cond)
}

// recoverPanic calls fn and returns what it panicked with, or nil.
func recoverPanic(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

// pools calls fn with a fresh pool for each parallelism and mode the
// result tests cover, closing it afterwards.
func pools(t *testing.T, fn func(t *testing.T, p *forkjoin.Pool)) {
	for _, par := range []int{1, 2, 4, 8} {
		for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
			t.Run(fmt.Sprintf("p=%d/%v", par, mode), func(t *testing.T) {
				p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(mode))
				defer closePool(t, p)
				fn(t, p)
			})
		}
	}
}

func fibSeq(n int) int {
	if n < 2 {
		return n
	}
	return fibSeq(n-1) + fibSeq(n-2)
}

// fibJoins is the number of Join (or Fork) calls of a fib(n) that forks at
// every level n >= 2: one per internal node of the call tree, F(n+1)-1.
func fibJoins(n int) int { return fibSeq(n+1) - 1 }

// fibJoin forks at every level with closures.
func fibJoin(w *forkjoin.Worker, n int) int {
	if n < 2 {
		return n
	}
	a, b := forkjoin.Join(w,
		func(w *forkjoin.Worker) int { return fibJoin(w, n-1) },
		func(w *forkjoin.Worker) int { return fibJoin(w, n-2) })
	return a + b
}

// fibTask forks at every level with typed tasks (JoinTasks).
type fibTask int

func (t fibTask) Compute(w *forkjoin.Worker) int {
	if t < 2 {
		return int(t)
	}
	a, b := forkjoin.JoinTasks[int, int](w, t-1, t-2)
	return a + b
}

// fibFork forks at every level with Fork and Future.Join.
func fibFork(w *forkjoin.Worker, n int) int {
	if n < 2 {
		return n
	}
	f := forkjoin.Fork(w, func(w *forkjoin.Worker) int { return fibFork(w, n-2) })
	a := fibFork(w, n-1)
	return a + f.Join(w)
}

// fibForkTask is fibFork with typed tasks (ForkTask).
type fibForkTask int

func (t fibForkTask) Compute(w *forkjoin.Worker) int {
	if t < 2 {
		return int(t)
	}
	f := forkjoin.ForkTask[int](w, t-2)
	a := (t - 1).Compute(w)
	return a + f.Join(w)
}

// fibCutoff is fib with JoinTasks above a cutoff and sequential below.
type fibCutoff struct{ n, cutoff int }

func (t fibCutoff) Compute(w *forkjoin.Worker) int {
	if t.n < t.cutoff {
		return fibSeq(t.n)
	}
	a, b := forkjoin.JoinTasks[int, int](w, fibCutoff{t.n - 1, t.cutoff}, fibCutoff{t.n - 2, t.cutoff})
	return a + b
}

// closePool closes p for a deferred cleanup. Unlike within, it does not
// stop the test when Close hangs (a test already failing may have left a
// task stuck): it reports the failure and returns, leaking the pool.
func closePool(t testing.TB, p *forkjoin.Pool) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		p.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(hangTimeout):
		t.Errorf("Close still running after %v (deadlock?); stats: %v", hangTimeout, p.Stats())
	}
}

// rescuer returns rescue, a channel a test closes on its way out (deferred
// after its closePool, so that it runs first), and wait, which blocks
// until ch or rescue is closed: a test that fails with tasks still in
// wait frees them, and closePool can return.
func rescuer() (wait func(ch chan struct{}), rescue chan struct{}) {
	rescue = make(chan struct{})
	wait = func(ch chan struct{}) {
		select {
		case <-ch:
		case <-rescue:
		}
	}
	return wait, rescue
}

// startOrder records, from any goroutine, the order in which tasks run:
// the order tests of priorities, aging and batches share it.
type startOrder struct {
	mu    sync.Mutex
	order []string
}

// record appends s.
func (o *startOrder) record(s string) {
	o.mu.Lock()
	o.order = append(o.order, s)
	o.mu.Unlock()
}

// get returns a copy of the order recorded so far.
func (o *startOrder) get() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.order)
}
