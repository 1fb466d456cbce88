package bench

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no benchmark or test leaks a goroutine: every pool a
// benchmark starts is closed when the benchmark returns (benchPool), and
// every goroutine baseline waits for the goroutines it starts. A leak makes
// the test binary exit non-zero, which fails the scripts/bench run.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
