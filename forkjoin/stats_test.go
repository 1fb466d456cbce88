package forkjoin_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestStatsAfterKnownWorkload runs a workload whose counts do not depend on
// scheduling and checks the counters after Close, when they are exact:
// Forks is the number of Join and Fork calls, Submitted the number of
// Execute, Submit and Invoke calls from outside, and every forked or
// submitted task was executed once (inline joins included).
func TestStatsAfterKnownWorkload(t *testing.T) {
	const n = 18
	for _, par := range []int{1, 2, 4} {
		for _, mode := range []forkjoin.Mode{forkjoin.LIFO, forkjoin.FIFO} {
			t.Run(fmt.Sprintf("p=%d/%v", par, mode), func(t *testing.T) {
				p := forkjoin.New(forkjoin.WithParallelism(par), forkjoin.WithMode(mode))
				s0 := p.Stats()
				require.Equal(t, par, s0.Workers)
				require.Zero(t, s0.Submitted)
				require.Zero(t, s0.Forks)

				within(t, "workload", func() {
					// 3 Invokes: fib by Join, JoinTasks and Fork, each
					// fibJoins(n) forks.
					forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibJoin(w, n) })
					forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibTask(n).Compute(w) })
					forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibFork(w, n) })
					// 10 Executes and 10 Submits, each forking 3 tasks
					// (one never joined).
					var wg sync.WaitGroup
					var fs []*forkjoin.Future[int]
					for i := 0; i < 10; i++ {
						wg.Add(1)
						if err := p.Execute(func(w *forkjoin.Worker) {
							defer wg.Done()
							forkjoin.Join(w, func(*forkjoin.Worker) int { return 0 }, func(*forkjoin.Worker) int { return 0 })
							forkjoin.Fork(w, func(*forkjoin.Worker) int { return 0 }).Join(w)
							forkjoin.Fork(w, func(*forkjoin.Worker) int { return 0 })
						}); err != nil {
							panic(err)
						}
						fs = append(fs, forkjoin.Submit(p, func(w *forkjoin.Worker) int {
							forkjoin.Join(w, func(*forkjoin.Worker) int { return 0 }, func(*forkjoin.Worker) int { return 0 })
							forkjoin.Fork(w, func(*forkjoin.Worker) int { return 0 }).Join(w)
							forkjoin.Fork(w, func(*forkjoin.Worker) int { return 0 })
							return 0
						}))
					}
					wg.Wait()
					for _, f := range fs {
						if _, err := f.Get(context.Background()); err != nil {
							panic(err)
						}
					}
					// Invoke from inside a task runs inline: not a submission.
					forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
						return forkjoin.Invoke(p, func(*forkjoin.Worker) int { return 0 })
					})
				})
				within(t, "Close", p.Close)

				s := p.Stats()
				const submitted = 3 + 10 + 10 + 1
				forks := 3*fibJoins(n) + 20*3
				require.EqualValues(t, submitted, s.Submitted, "%v", s)
				require.EqualValues(t, submitted, s.Completed, "closed: every submitted task completed, %v", s)
				require.EqualValues(t, forks, s.Forks, "%v", s)
				require.EqualValues(t, forks+submitted, s.Executed, "%v", s)
				require.LessOrEqual(t, s.Steals, s.Executed)
				require.LessOrEqual(t, s.Helped, s.Executed)
				require.Zero(t, s.Panics)
				require.Zero(t, s.Workers)
				require.Zero(t, s.Queued)
				if par == 1 {
					require.Zero(t, s.Steals, "one worker has nobody to steal from")
				}
				t.Log(s)
			})
		}
	}
}

func TestStatsString(t *testing.T) {
	s := forkjoin.Stats{Workers: 2, Submitted: 3, Executed: 4, Forks: 5, Steals: 6, Helped: 7, Parks: 8, Panics: 9, Queued: 10, Idle: 1}
	str := s.String()
	for _, want := range []string{"workers=2", "submitted=3", "executed=4", "forks=5", "steals=6", "helped=7", "parks=8", "panics=9", "queued=10", "idle=1"} {
		require.True(t, strings.Contains(str, want), "%q lacks %q", str, want)
	}
}

// TestStatsWhileIdle checks the live gauges of an idle pool: every worker is
// idle and nothing is queued, and the counters have been published.
func TestStatsWhileIdle(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(3))
	defer closePool(t, p)
	forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibJoin(w, 10) })
	waitUntil(t, "all workers idle with counters published", func() bool {
		s := p.Stats()
		return s.Idle == 3 && s.Executed == uint64(fibJoins(10)+1)
	})
	s := p.Stats()
	require.Zero(t, s.Queued)
	require.EqualValues(t, fibJoins(10), s.Forks)
}

// TestStatsCompletedCountsGoexit checks that a submitted task that calls
// runtime.Goexit counts in Completed, whether it was submitted by Execute
// or by Submit: its outcome (ErrGoexit) is delivered like a panic's, and
// once the pool is closed Completed equals Submitted. Submit's count was
// skipped by the Goexit (it was not deferred) while Execute's was not.
func TestStatsCompletedCountsGoexit(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPanicHandler(func(*forkjoin.PanicError) {}))
	within(t, "Goexit tasks", func() {
		var wg sync.WaitGroup
		wg.Add(1)
		require.NoError(t, p.Execute(func(*forkjoin.Worker) {
			defer wg.Done()
			runtime.Goexit()
		}))
		wg.Wait()
		f := forkjoin.Submit(p, func(*forkjoin.Worker) int { runtime.Goexit(); return 0 })
		_, err := f.Get(context.Background())
		require.ErrorIs(t, err, forkjoin.ErrGoexit)
		forkjoin.Invoke(p, func(*forkjoin.Worker) int { return 1 })
	})
	within(t, "Close", p.Close)
	s := p.Stats()
	require.EqualValues(t, 3, s.Submitted, "%v", s)
	require.EqualValues(t, 3, s.Completed, "every submitted task ended: %v", s)
}
