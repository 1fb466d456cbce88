package testenv

import (
	"sync"
	"testing"
	"time"
)

// HangTimeout bounds anything in a test that could deadlock: a hang fails
// the test with a message instead of stalling CI until the global test
// timeout. Concurrency tests use it as a hang limit, never as a speed
// assertion.
const HangTimeout = 60 * time.Second

// Within runs fn on a new goroutine and fails the test if it does not
// return within HangTimeout. A panic in fn is re-raised, with its original
// value, on the calling goroutine, so a recover around Within sees it. fn
// must not call t.FailNow (it is not the test goroutine).
func Within(t testing.TB, what string, fn func()) {
	t.Helper()
	type outcome struct {
		panicked bool
		value    any
	}
	done := make(chan outcome, 1)
	go func() {
		ok := false
		defer func() {
			if !ok {
				done <- outcome{true, recover()}
			}
		}()
		fn()
		ok = true
		done <- outcome{}
	}()
	select {
	case o := <-done:
		if o.panicked {
			panic(o.value)
		}
	case <-time.After(HangTimeout):
		t.Fatalf("%s: still running after %v (deadlock?)", what, HangTimeout)
	}
}

// WaitUntil polls cond and fails the test if it does not hold within
// HangTimeout. Test goroutine only.
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(HangTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", HangTimeout, what)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// Concurrently runs fn(0) ... fn(n-1), each on a goroutine of its own, and
// waits for them all, failing the test (as Within) if they have not all
// returned within HangTimeout: the shape of every "several goroutines at
// once" stress test. fn must not call t.FailNow; t.Error and assert are
// fine.
func Concurrently(t testing.TB, what string, n int, fn func(g int)) {
	t.Helper()
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(g)
		}()
	}
	Within(t, what, wg.Wait)
}
