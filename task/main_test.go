package task_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestMain fails the run if a test leaves a goroutine behind, such as a
// pool's workers when a test forgets to Close it. The shared Default pool
// (run by the tests of a nil pool) lives as long as the process by
// design, so it is started first and its workers are excluded.
func TestMain(m *testing.M) {
	forkjoin.Default()
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
