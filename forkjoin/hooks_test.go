package forkjoin

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// hookLog records the hook calls of a pool, in order, with the goroutine
// that made each.
type hookLog struct {
	mu     sync.Mutex
	events []hookEvent
}

type hookEvent struct {
	start bool
	index int
	gid   uint64
}

func (l *hookLog) hooks() Option {
	return WithWorkerHooks(
		func(i int) { l.add(hookEvent{true, i, goroutineKey()}) },
		func(i int) { l.add(hookEvent{false, i, goroutineKey()}) })
}

func (l *hookLog) add(e hookEvent) { l.mu.Lock(); l.events = append(l.events, e); l.mu.Unlock() }

func (l *hookLog) of(index int) []hookEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []hookEvent
	for _, e := range l.events {
		if e.index == index {
			out = append(out, e)
		}
	}
	return out
}

// paired checks that index's calls alternate start, exit, ..., each exit
// on the goroutine of the start before it, and returns how many pairs.
func (l *hookLog) paired(t *testing.T, index int) int {
	t.Helper()
	ev := l.of(index)
	require.Zero(t, len(ev)%2, "index %d: %v", index, ev)
	for k := 0; k < len(ev); k += 2 {
		require.True(t, ev[k].start, "index %d: %v", index, ev)
		require.False(t, ev[k+1].start, "index %d: %v", index, ev)
		require.Equal(t, ev[k].gid, ev[k+1].gid, "index %d: exit on the goroutine of its start: %v", index, ev)
	}
	return len(ev) / 2
}

// TestWorkerHooksStartAndExit: each worker calls start on its own
// goroutine before it runs a task, and exit on the same goroutine; Close
// returns after every exit.
func TestWorkerHooksStartAndExit(t *testing.T) {
	var log hookLog
	p := New(WithParallelism(3), log.hooks())
	var unstarted atomic.Int64
	testenv.Within(t, "tasks", func() {
		Invoke(p, func(w *Worker) int { return fibHooked(w, 16, &log, &unstarted) })
	})
	require.Zero(t, unstarted.Load(), "a task ran on a worker whose goroutine had not called start")
	testenv.Within(t, "Close", p.Close)
	for i := range 3 {
		require.Equal(t, 1, log.paired(t, i), "index %d", i) // at once: Close waited for the exits
	}
}

// fibHooked is fib forking at every level that counts tasks running on a
// goroutine that has not called start.
func fibHooked(w *Worker, n int, log *hookLog, unstarted *atomic.Int64) int {
	ev := log.of(w.Index())
	if len(ev) == 0 || !ev[len(ev)-1].start || ev[len(ev)-1].gid != goroutineKey() {
		unstarted.Add(1)
	}
	if n < 2 {
		return n
	}
	a, b := Join(w,
		func(w *Worker) int { return fibHooked(w, n-1, log, unstarted) },
		func(w *Worker) int { return fibHooked(w, n-2, log, unstarted) })
	return a + b
}

// TestWorkerHooksCompensatingWorkers: a compensating worker started by
// Block calls start with its own index, and exit when it retires.
func TestWorkerHooksCompensatingWorkers(t *testing.T) {
	var log hookLog
	p := New(WithParallelism(1), WithMaxBlocked(1), log.hooks())
	defer p.Close()
	ranOn := -1
	testenv.Within(t, "Block", func() {
		Invoke(p, func(w *Worker) int {
			f := Submit(p, func(w *Worker) int { return w.Index() })
			Block(w, func() { ranOn, _ = f.Get(context.Background()) }) // only the compensating worker can run it
			return 0
		})
	})
	require.Equal(t, 1, ranOn)
	testenv.WaitUntil(t, "the compensating worker retired", func() bool { return len(log.of(1)) == 2 })
	require.Equal(t, 1, log.paired(t, 1))
}

// TestWorkerHooksAcrossGoexit: a task that calls runtime.Goexit ends its
// worker's goroutine; the old goroutine calls exit before the new one
// calls start.
func TestWorkerHooksAcrossGoexit(t *testing.T) {
	var log hookLog
	var reported atomic.Int64
	p := New(WithParallelism(1), log.hooks(), WithPanicHandler(func(*PanicError) { reported.Add(1) }))
	require.NoError(t, p.Execute(func(*Worker) { runtime.Goexit() }))
	testenv.Within(t, "the pool after a Goexit", func() {
		require.Equal(t, 5, Invoke(p, func(*Worker) int { return 5 }))
	})
	testenv.Within(t, "Close", p.Close)
	require.Equal(t, 2, log.paired(t, 0), "start and exit on the first goroutine, then on the fresh one")
	require.EqualValues(t, 1, reported.Load(), "the Goexit of the task")
}

// TestWorkerHooksPanic: a panic in a hook goes to the panic handler and
// the worker carries on; a start hook that calls runtime.Goexit is
// reported and not called again on the fresh goroutine.
func TestWorkerHooksPanic(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		name        string
		start, exit func(int)
		want        error
	}{
		{"start panics", func(int) { panic(boom) }, nil, boom},
		{"exit panics", nil, func(int) { panic(boom) }, boom},
		{"start exits", func(int) { runtime.Goexit() }, nil, ErrGoexit},
		{"exit exits", nil, func(int) { runtime.Goexit() }, ErrGoexit},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []*PanicError
			var starts atomic.Int64
			start := c.start
			p := New(WithParallelism(2),
				WithWorkerHooks(func(i int) {
					starts.Add(1)
					if start != nil {
						start(i)
					}
				}, c.exit),
				WithPanicHandler(func(pe *PanicError) { mu.Lock(); got = append(got, pe); mu.Unlock() }))
			testenv.Within(t, "tasks", func() {
				require.Equal(t, fibSeq(15), Invoke(p, func(w *Worker) int { return fibForkAll(w, 15) }))
			})
			testenv.Within(t, "Close", p.Close)
			require.EqualValues(t, 2, starts.Load(), "start called once per worker")
			require.Len(t, got, 2, "one report per worker")
			for _, pe := range got {
				require.ErrorIs(t, pe, c.want)
			}
			require.EqualValues(t, 2, p.Stats().Panics)
		})
	}
}

// fibForkAll forks at every level.
func fibForkAll(w *Worker, n int) int {
	if n < 2 {
		return n
	}
	a, b := Join(w,
		func(w *Worker) int { return fibForkAll(w, n-1) },
		func(w *Worker) int { return fibForkAll(w, n-2) })
	return a + b
}

func fibSeq(n int) int {
	if n < 2 {
		return n
	}
	return fibSeq(n-1) + fibSeq(n-2)
}
