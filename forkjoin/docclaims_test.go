package forkjoin_test

import (
	"bytes"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// Tests of doc claims that named no test (the docs audit of 2026-12-06).

// goroutineLabels returns the goroutine profile with each goroutine's
// pprof labels (debug=1 prints them as "# labels: {...}").
func goroutineLabels(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, pprof.Lookup("goroutine").WriteTo(&buf, 1))
	return buf.String()
}

// TestWithNameLabelsWorkerGoroutines: WithName's doc says that worker
// goroutines carry the pprof labels magpie.pool=name and
// magpie.worker=index, a compensating worker of Block too, and that a
// pool without a name is "pool-N".
func TestWithNameLabelsWorkerGoroutines(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithName("docaudit-named"))
	defer closePool(t, p)
	for i := range 2 {
		want := fmt.Sprintf(`"magpie.pool":"docaudit-named", "magpie.worker":"%d"`, i)
		waitUntil(t, "worker "+want, func() bool { return strings.Contains(goroutineLabels(t), want) })
	}

	// A compensating worker (index 1 of a pool of one) while a task blocks.
	one := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithName("docaudit-block"))
	defer closePool(t, one)
	release := make(chan struct{})
	blocked := make(chan struct{})
	f := forkjoin.Submit(one, func(w *forkjoin.Worker) int {
		forkjoin.Block(w, func() { close(blocked); <-release })
		return 0
	})
	<-blocked
	const spare = `"magpie.pool":"docaudit-block", "magpie.worker":"1"`
	waitUntil(t, "compensating worker "+spare, func() bool { return strings.Contains(goroutineLabels(t), spare) })
	close(release)
	within(t, "the blocking task", func() { _, _ = f.Get(t.Context()) })

	anon := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, anon)
	name := forkjoin.Invoke(anon, func(w *forkjoin.Worker) string {
		prof := goroutineLabels(t)
		// This goroutine's own record is the one that lists this function.
		for _, rec := range strings.Split(prof, "\n\n") {
			if strings.Contains(rec, "TestWithNameLabelsWorkerGoroutines.func") {
				if i := strings.Index(rec, `"magpie.pool":"`); i >= 0 {
					rest := rec[i+len(`"magpie.pool":"`):]
					return rest[:strings.IndexByte(rest, '"')]
				}
			}
		}
		return ""
	})
	require.Regexp(t, `^pool-[0-9]+$`, name, "the default name")
}

// TestDefaultPanicHandlerPrintsToStderr: WithPanicHandler's doc says that
// the default handler prints an Execute task's panic and its stack to
// standard error.
func TestDefaultPanicHandlerPrintsToStderr(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer f.Close()
	saved := os.Stderr
	os.Stderr = f // before New: the pool's goroutines see it
	p := forkjoin.New(forkjoin.WithParallelism(1))
	require.NoError(t, p.Execute(func(*forkjoin.Worker) { panic("docaudit: the value") }))
	within(t, "Close", p.Close) // the worker waits for the handler, Close for the worker
	os.Stderr = saved
	out, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	require.Contains(t, string(out), "docaudit: the value", "the panic value")
	require.Contains(t, string(out), "TestDefaultPanicHandlerPrintsToStderr.func", "the stack where it was raised")
	require.EqualValues(t, 1, p.Stats().Panics)
}

// TestWithMaxBlockedDefault: WithMaxBlocked's doc says that the default
// bound on compensating workers is the pool's parallelism and that n < 0
// means none; MaxWorkers counts them beside the workers.
func TestWithMaxBlockedDefault(t *testing.T) {
	for _, c := range []struct {
		opts []forkjoin.Option
		want int
	}{
		{nil, 3 + 3},
		{[]forkjoin.Option{forkjoin.WithMaxBlocked(0)}, 3},
		{[]forkjoin.Option{forkjoin.WithMaxBlocked(-5)}, 3},
		{[]forkjoin.Option{forkjoin.WithMaxBlocked(2)}, 3 + 2},
	} {
		p := forkjoin.New(append(c.opts, forkjoin.WithParallelism(3))...)
		require.Equal(t, c.want, p.MaxWorkers())
		closePool(t, p)
	}
}
