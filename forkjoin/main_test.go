package forkjoin_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestMain fails the test binary if any goroutine outlives the tests. The
// Default pool lives as long as the process by design, so it is created
// first and its workers are excluded by goroutine id; every other pool a
// test creates must be closed.
func TestMain(m *testing.M) {
	forkjoin.Default()
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
