package sorts

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestMain checks that no test leaks a goroutine. The shared Default pool
// (used by the tests that pass a nil Runner) lives as long as the process
// by design, so it is started first and its workers are excluded.
func TestMain(m *testing.M) {
	forkjoin.Default()
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
