package pipeline_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestMain fails the test binary if any goroutine outlives the tests: Run
// must leave nothing behind. The Default pool's workers live as long as
// the process and are excluded.
func TestMain(m *testing.M) {
	forkjoin.Default()
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}

// hangTimeout bounds anything that could deadlock.
const hangTimeout = 60 * time.Second

// within runs fn on a new goroutine and fails the test if it does not
// return within hangTimeout. fn must not call t.FailNow.
func within(t testing.TB, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(hangTimeout):
		t.Fatalf("%s: still running after %v (deadlock?)", what, hangTimeout)
	}
}

// waitUntil polls cond and fails the test if it does not hold within
// hangTimeout.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", hangTimeout, what)
		}
		time.Sleep(50 * time.Microsecond)
	}
}
