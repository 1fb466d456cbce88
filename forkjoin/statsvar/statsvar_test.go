package statsvar

import (
	"encoding/json"
	"expvar"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestMain checks for leaked goroutines; the Default pool's workers, which
// live as long as the process, are started first and ignored.
func TestMain(m *testing.M) {
	forkjoin.Default()
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}

// TestNilPoolMeansDefault: Var(nil) reads the Default pool's Stats (it
// dereferenced nil when read before).
func TestNilPoolMeansDefault(t *testing.T) {
	want := forkjoin.Default().Parallelism()
	var got struct{ Workers int }
	require.NoError(t, json.Unmarshal([]byte(Var(nil).String()), &got))
	require.Equal(t, want, got.Workers)
}

func TestPublish(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	for i := 0; i < 10; i++ {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return i })
	}
	// A name per run: expvar names live as long as the process, and
	// -count=N runs the test N times in one.
	publishRuns++
	name := fmt.Sprintf("magpie_test_pool_%d", publishRuns)
	Publish(name, p)
	v := expvar.Get(name)
	require.NotNil(t, v)
	var got forkjoin.Stats
	require.NoError(t, json.Unmarshal([]byte(v.String()), &got))
	require.Equal(t, 2, got.Workers)
	require.Equal(t, uint64(10), got.Submitted)
	require.Eventually(t, func() bool { return p.Stats().Completed == 10 }, 30*time.Second, time.Millisecond,
		"counted just after Invoke's result is delivered")
	require.Equal(t, uint64(1), got.QueueWaits, "one submission in 8 is timed")
	require.Zero(t, got.QueuedUrgent+got.QueuedNormal+got.QueuedBackground)
	require.Panics(t, func() { Publish(name, p) }, "a name is published once")
}

// publishRuns counts TestPublish's runs in this process (see its name).
var publishRuns int
