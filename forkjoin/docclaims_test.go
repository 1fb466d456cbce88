package forkjoin_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
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

// TestEntryPointsShareTheSubmissionOrder: Execute's doc says that tasks
// submitted from outside by Execute, Submit, Invoke and their variants are
// taken in the order their submissions were accepted, within a priority,
// in both modes, and Submit's that it is queued in the same order as
// Execute. With the only worker held, Execute, ExecuteContext, Submit,
// task-typed SubmitTaskPriority at Normal and Invoke (from a goroutine
// of its own, each accepted before the next is made) are interleaved: the
// tasks start in that order.
func TestEntryPointsShareTheSubmissionOrder(t *testing.T) {
	const n = 100
	for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
		t.Run(mode.String(), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMode(mode))
			defer closePool(t, p)
			release := holdWorkers(t, p)
			var order []int // one worker: the tasks run one after another
			var done sync.WaitGroup
			done.Add(n)
			for i := range n {
				run := func(*forkjoin.Worker) int { order = append(order, i); done.Done(); return i }
				switch i % 5 {
				case 0:
					require.NoError(t, p.Execute(func(w *forkjoin.Worker) { run(w) }))
				case 1:
					require.NoError(t, p.ExecuteContext(context.Background(), func(w *forkjoin.Worker) { run(w) }))
				case 2:
					forkjoin.Submit(p, run)
				case 3:
					forkjoin.SubmitTaskPriority[int](p, forkjoin.Normal, funcTask(run))
				case 4:
					go forkjoin.Invoke(p, run)
				}
				waitUntil(t, "the submission accepted", func() bool {
					s := p.Stats()
					return s.QueuedUrgent+s.QueuedNormal+s.QueuedBackground == i+1
				})
			}
			release()
			within(t, "queued tasks", done.Wait)
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			require.Equal(t, want, order)
		})
	}
}

// funcTask is a typed task made of a function.
type funcTask func(*forkjoin.Worker) int

func (f funcTask) Compute(w *forkjoin.Worker) int { return f(w) }

// TestInvokePriority: InvokePriority's doc says that, called from outside
// p, it submits fn at priority prio, and that called from one of p's own
// tasks it runs fn inline, whatever prio. With the only worker held, an
// Urgent InvokePriority overtakes a queued Normal Execute and a
// Background one waits behind it; inside a task, InvokePriority at
// Background runs on the calling worker, within the call.
func TestInvokePriority(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	release := holdWorkers(t, p)
	var mu sync.Mutex
	var order []string
	rec := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	require.NoError(t, p.Execute(func(*forkjoin.Worker) { rec("normal") }))
	var invokes sync.WaitGroup
	for k, c := range []struct {
		prio forkjoin.Priority
		name string
	}{{forkjoin.Background, "background"}, {forkjoin.Urgent, "urgent"}} {
		invokes.Add(1)
		go func() {
			defer invokes.Done()
			forkjoin.InvokePriority(p, c.prio, func(*forkjoin.Worker) int { rec(c.name); return 0 })
		}()
		waitUntil(t, c.name+" accepted", func() bool {
			s := p.Stats()
			return s.QueuedUrgent+s.QueuedNormal+s.QueuedBackground == 1+k+1
		})
	}
	release()
	within(t, "the invokes", invokes.Wait)
	mu.Lock()
	require.Equal(t, []string{"urgent", "normal", "background"}, order)
	mu.Unlock()

	before := p.Stats().Submitted
	inline := forkjoin.Invoke(p, func(w *forkjoin.Worker) bool {
		ran := false
		forkjoin.InvokePriority(p, forkjoin.Background, func(w2 *forkjoin.Worker) int { ran = w2 == w; return 0 })
		return ran
	})
	require.True(t, inline, "InvokePriority from a task of p runs fn on its worker")
	require.Equal(t, before+1, p.Stats().Submitted, "the outer Invoke is the only submission: the inner one ran inline")
}

// TestWithMaxQueuedNonPositiveIsUnbounded: WithMaxQueued's doc says that
// n <= 0 means unbounded, the default: with the only worker held, 200
// Executes are all accepted.
func TestWithMaxQueuedNonPositiveIsUnbounded(t *testing.T) {
	for _, opts := range [][]forkjoin.Option{nil, {forkjoin.WithMaxQueued(0)}, {forkjoin.WithMaxQueued(-1)}} {
		p := forkjoin.New(append(opts, forkjoin.WithParallelism(1))...)
		release := holdWorkers(t, p)
		var done sync.WaitGroup
		for range 200 {
			done.Add(1)
			require.NoError(t, p.Execute(func(*forkjoin.Worker) { done.Done() }))
		}
		release()
		within(t, "the tasks", done.Wait)
		closePool(t, p)
	}
}
