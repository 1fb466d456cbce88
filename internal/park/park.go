// Package park puts idle workers to sleep and wakes them when work appears,
// without lost wake-ups and without burning CPU while the pool is idle.
//
// # Protocol
//
// A worker that finds no work first backs off (Backoff: spin, then yield).
// When that fails too it calls Prepare, re-checks every source of work, and
// only then calls Sleep; if the re-check finds work it calls Cancel instead.
// A producer publishes its work (a deque push, a queue append) and then calls
// Any; only if that reports a registered sleeper does it call WakeOne.
//
// Why no wake-up is lost: Prepare increments the sleeper count before the
// worker re-checks for work, and the producer publishes its work before it
// loads the count. Both are sequentially consistent atomics, so (Dekker) at
// least one side sees the other: either the worker's re-check finds the work,
// or the producer sees a sleeper and WakeOne hands a token to some registered
// worker. Whichever worker gets the token searches again, because Sleep
// returns at once when a token is pending. The producer's cost when nobody
// sleeps is the single atomic load in Any.
//
// Two kinds of worker sleep here: idle ones (in the scheduling loop, ready
// to run anything) and waiting ones (blocked in a join, which help only
// with some work). Prepare says which. WakeOne prefers an idle sleeper, and
// WakeIdle wakes only an idle one, for work that a waiting worker cannot
// run (a submitted task): a wake-up handed to a worker that cannot use the
// work would leave the work waiting while an idle worker sleeps.
//
// Tokens may be spurious (a worker woken after it had already found work
// keeps the token and its next Sleep returns at once); every caller of Sleep
// re-checks its condition in a loop, so a spurious wake-up costs one search.
package park

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Sleepers is the set of workers that are asleep or about to sleep, with one
// wake-up token per worker. Workers are named by their index 0..n-1.
type Sleepers struct {
	n  atomic.Int32 // registered sleepers: the only field producers read
	mu sync.Mutex
	// stack, listed and idle are guarded by mu; n changes with them, under
	// mu, and is read without it.
	stack  []int32         // registered sleepers, most recent last
	listed []bool          // listed[i]: i is on stack
	idle   []bool          // idle[i]: i registered as idle (see Prepare); valid while listed[i]
	tokens []chan struct{} // tokens[i]: worker i's wake-up token (capacity 1); set by New, read-only after
}

// New returns an empty set for workers 0..n-1.
func New(n int) *Sleepers {
	s := &Sleepers{
		stack:  make([]int32, 0, n),
		listed: make([]bool, n),
		idle:   make([]bool, n),
		tokens: make([]chan struct{}, n),
	}
	for i := range s.tokens {
		s.tokens[i] = make(chan struct{}, 1)
	}
	return s
}

// Any reports whether some worker is registered as a sleeper. It is one
// atomic load: producers call it after publishing work.
func (s *Sleepers) Any() bool { return s.n.Load() > 0 }

// Count reports the number of registered sleepers.
func (s *Sleepers) Count() int { return int(s.n.Load()) }

// Listed reports whether worker i is registered as a sleeper now: a
// snapshot, for tests.
func (s *Sleepers) Listed(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listed[i]
}

// Prepare registers worker i as about to sleep, idle (it can run any work)
// or not (it waits in a join). The caller must then re-check all sources of
// work and call either Sleep or Cancel. The count is updated with a locked
// instruction, a full fence: the re-checks that follow cannot be ordered
// before it.
func (s *Sleepers) Prepare(i int, idle bool) {
	s.mu.Lock()
	s.idle[i] = idle
	if !s.listed[i] {
		s.listed[i] = true
		s.stack = append(s.stack, int32(i))
		s.n.Add(1)
	}
	s.mu.Unlock()
}

// Cancel removes worker i from the set if it is still registered (it found
// work, or was woken by Unpark rather than WakeOne).
func (s *Sleepers) Cancel(i int) {
	// Only i lists itself, and n, changed under mu with listed, counts i
	// while i is listed: n == 0 means i is not listed
	// (TestSleeperSetStaysExact).
	if s.n.Load() == 0 {
		return
	}
	s.mu.Lock()
	if s.listed[i] {
		s.listed[i] = false
		for k := len(s.stack) - 1; k >= 0; k-- {
			if s.stack[k] == int32(i) {
				s.stack = append(s.stack[:k], s.stack[k+1:]...)
				break
			}
		}
		s.n.Add(-1)
	}
	s.mu.Unlock()
}

// Sleep blocks worker i until it holds a token: from WakeOne, WakeAll or
// Unpark, possibly one handed out before this call. The caller re-checks
// its condition afterwards and calls Cancel if it may still be registered.
func (s *Sleepers) Sleep(i int) { <-s.tokens[i] }

// SleepTimeout is Sleep bounded by the timer t, which the caller owns and
// has started: it blocks worker i until it holds a token, and reports
// true, or until t fires, and reports false. On false, worker i is still
// registered as it was: a token given later waits for its next Sleep.
// Either way t holds no tick afterwards, so the caller may Reset it for
// the next call: Go's timers since 1.23 keep none after Stop, and under
// GODEBUG asynctimerchan=1 (old timers, which a program may choose) a tick
// already sent is drained here (TestSleepTimeoutNoStaleTickAsyncTimerChan).
func (s *Sleepers) SleepTimeout(i int, t *time.Timer) bool {
	select {
	case <-s.tokens[i]:
		if !t.Stop() {
			select {
			case <-t.C: // asynctimerchan=1: the tick that fired meanwhile
			default:
			}
		}
		return true
	case <-t.C:
		return false
	}
}

// Unpark gives worker i a token, waking it if it sleeps. Used when the event
// a worker waits for is specific to it (a task it joins has completed).
func (s *Sleepers) Unpark(i int) {
	select {
	case s.tokens[i] <- struct{}{}:
	default: // a token is already pending
	}
}

// WakeOne wakes a registered sleeper, if any, and removes it from the set:
// the most recently registered idle one, or else the most recent waiting
// one. The most recent is the likeliest to be still spinning down or to
// have a warm cache. It reports whether it woke someone.
func (s *Sleepers) WakeOne() bool { return s.wake(false) }

// WakeIdle is WakeOne restricted to idle sleepers: for work that only an
// idle worker may run. It reports whether it woke someone.
func (s *Sleepers) WakeIdle() bool { return s.wake(true) }

func (s *Sleepers) wake(idleOnly bool) bool {
	s.mu.Lock()
	k := len(s.stack) - 1
	for k >= 0 && !s.idle[s.stack[k]] {
		k--
	}
	if k < 0 && !idleOnly {
		k = len(s.stack) - 1
	}
	if k < 0 {
		s.mu.Unlock()
		return false
	}
	i := s.stack[k]
	s.stack = append(s.stack[:k], s.stack[k+1:]...)
	s.listed[i] = false
	s.n.Add(-1)
	s.mu.Unlock()
	s.Unpark(int(i))
	return true
}

// WakeAll wakes every registered sleeper and gives every worker a token,
// so that a worker between Prepare and Sleep does not sleep either. Used at
// shutdown, and for work that only an unknown one of the waiting workers
// may run.
func (s *Sleepers) WakeAll() {
	s.mu.Lock()
	for _, i := range s.stack {
		s.listed[i] = false
	}
	s.n.Add(-int32(len(s.stack)))
	s.stack = s.stack[:0]
	s.mu.Unlock()
	for i := range s.tokens {
		s.Unpark(i)
	}
}

// Backoff paces a worker that found no work: a few rounds of busy spinning,
// then yielding the processor, then giving up so that the caller sleeps.
// Spinning catches work that appears within a few hundred nanoseconds (the
// common case inside a computation); yielding lets other goroutines, such as
// an external submitter, run on this core; sleeping stops burning CPU.
type Backoff struct{ step int }

const (
	spinSteps  = 6  // busy-wait 1, 2, 4, ... 32 iterations
	yieldSteps = 10 // then runtime.Gosched this many times
)

// Reset starts the backoff over (call it after finding work).
func (b *Backoff) Reset() { b.step = 0 }

// Snooze waits a little and reports true, or reports false when the caller
// has waited long enough and should sleep.
func (b *Backoff) Snooze() bool {
	switch {
	case b.step < spinSteps:
		spin(1 << b.step)
	case b.step < spinSteps+yieldSteps:
		runtime.Gosched()
	default:
		return false
	}
	b.step++
	return true
}

var spinSink atomic.Int32

// spin busy-waits for about n short iterations. The atomic load keeps the
// compiler from removing the loop and, being a plain move on x86, does not
// disturb the cache line of anyone else.
func spin(n int) {
	for i := 0; i < n; i++ {
		spinSink.Load()
	}
}
