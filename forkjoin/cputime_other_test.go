//go:build !unix

package forkjoin_test

import (
	"testing"
	"time"
)

// cpuTime skips the calling test: the process's CPU time is read with
// getrusage, which only Unix systems have (cputime_unix_test.go).
func cpuTime(t *testing.T) time.Duration {
	t.Skip("no getrusage on this system: the process's CPU time is not measured")
	return 0
}
