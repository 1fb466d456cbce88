package forkjoin_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestIdleCPU measures the CPU the process burns during one second of
// idleness after a burst of work: parked workers must not spin. It logs the
// figure (target: under 1% of one core) and fails only beyond 50%, so that
// a loaded machine cannot make it flake. Run it alone for a clean figure:
//
//	go test ./forkjoin -run TestIdleCPU -v
func TestIdleCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("takes over a second")
	}
	p := forkjoin.New() // GOMAXPROCS workers
	defer closePool(t, p)
	// A burst of forking work and of external submissions.
	for i := 0; i < 5; i++ {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibTask(22).Compute(w) })
	}
	for i := 0; i < 10000; i++ {
		require.NoError(t, p.Execute(func(*forkjoin.Worker) {}))
	}
	forkjoin.Invoke(p, func(*forkjoin.Worker) int { return 0 })
	waitUntil(t, "all workers idle", func() bool { return p.Stats().Idle == p.Parallelism() })
	time.Sleep(50 * time.Millisecond) // let spinning and yielding end

	parks := p.Stats().Parks
	c0, t0 := cpuTime(t), time.Now()
	time.Sleep(time.Second)
	c1, t1 := cpuTime(t), time.Now()
	share := float64(c1-c0) / float64(t1.Sub(t0))
	t.Logf("idle pool of %d workers: %.3f%% of one core over %v (%v CPU); parks during the second: %d",
		p.Parallelism(), 100*share, t1.Sub(t0).Round(time.Millisecond), c1-c0, p.Stats().Parks-parks)
	require.Less(t, share, 0.5, "an idle pool burns CPU")
}
