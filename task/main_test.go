package task_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind, such as a
// pool's workers when a test forgets to Close it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
