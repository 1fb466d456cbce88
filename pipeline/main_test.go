package pipeline_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestMain fails the test binary if any goroutine outlives the tests: Run
// must leave nothing behind. The Default pool's workers live as long as
// the process and are excluded.
func TestMain(m *testing.M) {
	forkjoin.Default()
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}

// hangTimeout, within and waitUntil: the shared hang limits
// (internal/testenv) under the names the tests of this package use.
const hangTimeout = testenv.HangTimeout

func within(t testing.TB, what string, fn func()) { t.Helper(); testenv.Within(t, what, fn) }

func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testenv.WaitUntil(t, what, cond)
}
