package park

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wakeTimeout bounds every wait for a wake-up, so that a lost wake-up fails
// the test instead of hanging it.
const wakeTimeout = 30 * time.Second

// sleepAsync runs s.Sleep(i) on a new goroutine and returns a channel closed
// when it returns.
func sleepAsync(s *Sleepers, i int) <-chan struct{} {
	woke := make(chan struct{})
	go func() {
		s.Sleep(i)
		close(woke)
	}()
	return woke
}

func requireWakes(t *testing.T, woke <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-woke:
	case <-time.After(wakeTimeout):
		t.Fatalf("%s: not woken within %v", msg, wakeTimeout)
	}
}

// requireAsleep checks that a sleeper has not returned. It can only fail if
// Sleep returned without a token, never because the machine is slow.
func requireAsleep(t *testing.T, woke <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-woke:
		t.Fatalf("%s: Sleep returned without a token", msg)
	case <-time.After(20 * time.Millisecond):
	}
}

func TestPrepareCancelCount(t *testing.T) {
	s := New(4)
	require.False(t, s.Any())
	require.Zero(t, s.Count())

	s.Prepare(1, true)
	require.True(t, s.Any())
	require.Equal(t, 1, s.Count())
	s.Prepare(1, true) // idempotent: a worker is registered once
	require.Equal(t, 1, s.Count())
	s.Prepare(3, true)
	require.Equal(t, 2, s.Count())

	s.Cancel(1)
	require.Equal(t, 1, s.Count())
	s.Cancel(1) // not registered any more: no-op
	s.Cancel(0) // never registered: no-op
	require.Equal(t, 1, s.Count())
	s.Cancel(3)
	require.False(t, s.Any())
	require.Zero(t, s.Count())
}

// TestWakeOneMostRecent checks that WakeOne picks the most recently
// registered sleeper, deregisters it and gives it a token.
func TestWakeOneMostRecent(t *testing.T) {
	s := New(3)
	require.False(t, s.WakeOne(), "nobody registered")

	s.Prepare(0, true)
	s.Prepare(2, true)
	s.Prepare(1, true)
	require.True(t, s.WakeOne())
	require.Equal(t, 2, s.Count())
	requireWakes(t, sleepAsync(s, 1), "worker 1 (most recent) has a token")
	// Cancel after waking, as the protocol does: a no-op for the woken one.
	s.Cancel(1)
	require.Equal(t, 2, s.Count())

	require.True(t, s.WakeOne())
	requireWakes(t, sleepAsync(s, 2), "worker 2 next")
	require.True(t, s.WakeOne())
	requireWakes(t, sleepAsync(s, 0), "worker 0 last")
	require.False(t, s.WakeOne())
	require.Zero(t, s.Count())
}

// TestWakePrefersIdle: WakeOne wakes an idle sleeper before any waiting
// one, however recently the waiting one registered, and WakeIdle never
// wakes a waiting one: a submitted task's wake-up must reach a worker that
// may run it (a waiting worker runs no submitted task).
func TestWakePrefersIdle(t *testing.T) {
	s := New(3)
	s.Prepare(0, true)
	s.Prepare(1, false)
	s.Prepare(2, false)
	require.True(t, s.WakeIdle())
	requireWakes(t, sleepAsync(s, 0), "the idle worker")
	require.False(t, s.WakeIdle(), "only waiting workers are left")
	require.Equal(t, 2, s.Count())

	s.Prepare(0, true)
	s.Cancel(2)
	s.Prepare(2, false) // now the most recent
	require.True(t, s.WakeOne())
	requireWakes(t, sleepAsync(s, 0), "WakeOne: the idle worker first, though a waiting one registered after it")
	require.True(t, s.WakeOne())
	requireWakes(t, sleepAsync(s, 2), "then the most recent waiting one")
	require.Equal(t, 1, s.Count())
}

// TestSleepBlocksUntilToken checks that Sleep without a token blocks and
// that each of Unpark, WakeOne and WakeAll releases it.
func TestSleepBlocksUntilToken(t *testing.T) {
	s := New(2)

	woke := sleepAsync(s, 0)
	requireAsleep(t, woke, "no token")
	s.Unpark(0)
	requireWakes(t, woke, "Unpark")

	s.Prepare(0, true)
	woke = sleepAsync(s, 0)
	requireAsleep(t, woke, "registered, no token")
	require.True(t, s.WakeOne())
	requireWakes(t, woke, "WakeOne")

	s.Prepare(1, true)
	woke = sleepAsync(s, 1)
	requireAsleep(t, woke, "registered, no token")
	s.WakeAll()
	requireWakes(t, woke, "WakeAll")
	require.Zero(t, s.Count())
}

// TestSpuriousToken checks the token semantics the protocol relies on: a
// token given before Sleep makes the next Sleep return at once; tokens do
// not accumulate (two Unparks give one token); a token is consumed.
func TestSpuriousToken(t *testing.T) {
	s := New(2)
	s.Unpark(1)
	s.Unpark(1) // a token is already pending: dropped
	requireWakes(t, sleepAsync(s, 1), "pending token")
	woke := sleepAsync(s, 1)
	requireAsleep(t, woke, "the second Unpark must not have left a second token")
	s.Unpark(1)
	requireWakes(t, woke, "Unpark")

	// Tokens are per worker: a token for 0 does not wake 1.
	woke = sleepAsync(s, 1)
	s.Unpark(0)
	requireAsleep(t, woke, "token went to worker 0")
	s.Unpark(1)
	requireWakes(t, woke, "Unpark(1)")
	requireWakes(t, sleepAsync(s, 0), "worker 0 kept its token")
}

// TestWakeAllTokensEveryone checks that WakeAll gives a token even to
// workers that are not registered yet (between Prepare and Sleep, or about
// to call Prepare), which is what shutdown needs.
func TestWakeAllTokensEveryone(t *testing.T) {
	s := New(4)
	s.Prepare(0, true)
	s.Prepare(2, true)
	s.WakeAll()
	require.Zero(t, s.Count())
	require.False(t, s.Any())
	for i := 0; i < 4; i++ {
		requireWakes(t, sleepAsync(s, i), "worker after WakeAll")
	}
	s.WakeAll() // with nobody registered
	require.Zero(t, s.Count())
}

func TestBackoff(t *testing.T) {
	var b Backoff
	n := 0
	for b.Snooze() {
		n++
		require.LessOrEqual(t, n, 1000, "Backoff never gives up")
	}
	require.Equal(t, spinSteps+yieldSteps, n)
	require.False(t, b.Snooze(), "stays exhausted until Reset")
	b.Reset()
	require.True(t, b.Snooze())
}

// TestAnyDoesNotAllocate pins the producer's fast path.
func TestAnyDoesNotAllocate(t *testing.T) {
	s := New(2)
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = s.Any() }))
	require.Zero(t, testing.AllocsPerRun(100, func() {
		s.Prepare(1, true)
		s.Cancel(1)
	}))
}

// TestSleepTimeout checks the timed sleep the scheduling loop uses before
// trimming its free lists: a token ends it (true) and stops the timer, so
// that the timer can be Reset for the next call; the timer ends it
// (false) with the worker still registered, and a wake-up given after the
// timeout is not lost: it waits in the token for the next Sleep.
func TestSleepTimeout(t *testing.T) {
	s := New(2)
	timer := time.NewTimer(time.Hour)

	s.Unpark(0) // a pending token: returns at once, the timer stopped
	require.True(t, s.SleepTimeout(0, timer), "pending token")

	timer.Reset(time.Millisecond) // no stale tick left by the Stop
	s.Prepare(0, true)
	require.False(t, s.SleepTimeout(0, timer), "timer")
	require.Equal(t, 1, s.Count(), "still registered after the timeout")

	require.True(t, s.WakeOne(), "the registered sleeper is woken after its timeout")
	requireWakes(t, sleepAsync(s, 0), "the wake-up given after the timeout")

	timer.Reset(wakeTimeout)
	woke := make(chan bool)
	go func() { woke <- s.SleepTimeout(1, timer) }()
	s.Unpark(1)
	select {
	case got := <-woke:
		require.True(t, got, "a token, not the timer, ended the sleep")
	case <-time.After(wakeTimeout):
		t.Fatalf("SleepTimeout not woken within %v", wakeTimeout)
	}
}

// TestSleepTimeoutNoStaleTickAsyncTimerChan: SleepTimeout leaves its timer
// ready for Reset even where Go's timers keep a stale tick after Stop
// (GODEBUG asynctimerchan=1, which a program built against magpie may
// set): a token and a fired timer both ready, the token chosen, the next
// SleepTimeout must wait for its own timer, not return false at once on
// the old tick (for sleepIdle, a trim at the first idle sleep).
func TestSleepTimeoutNoStaleTickAsyncTimerChan(t *testing.T) {
	t.Setenv("GODEBUG", "asynctimerchan=1") // read at each timer's creation
	s := New(1)
	for range 200 {
		timer := time.NewTimer(time.Millisecond)
		time.Sleep(5 * time.Millisecond) // the tick is in the channel
		s.Unpark(0)
		if !s.SleepTimeout(0, timer) {
			<-s.tokens[0] // the timer was chosen: drop the token, try again
			continue
		}
		timer.Reset(time.Hour)
		woke := make(chan bool, 1)
		go func() { woke <- s.SleepTimeout(0, timer) }()
		select {
		case got := <-woke:
			require.Fail(t, "SleepTimeout returned at once on a stale tick", "reported %v", got)
		case <-time.After(20 * time.Millisecond):
		}
		s.Unpark(0)
		require.True(t, <-woke)
		return
	}
	t.Skip("the token was never chosen over the fired timer")
}
