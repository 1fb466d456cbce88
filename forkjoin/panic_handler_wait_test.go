package forkjoin

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestPanicHandlerCanWaitForItsPool: a panic handler that waits for work on
// its own pool (Invoke, Submit then Get, Broadcast: a service that runs a
// recovery task) gets it done, on a pool of one worker and on a pool of two
// whose other worker is held outside Block, for a panic in an Execute'd
// task. The handler runs on a goroutine of its own while the worker that
// reports the panic waits for it; on 7a19f08 that worker waited with a
// plain channel receive, holding its place, so the handler's task had no
// worker to run on and both hung: the hang limit failed every case run
// here. The reporter now runs its pool's tasks and Broadcast shares while
// it waits (reportPanicOn). Broadcast with a worker held is left out: the
// held worker cannot run its share until released (see Broadcast).
func TestPanicHandlerCanWaitForItsPool(t *testing.T) {
	waits := map[string]func(p *Pool) int{
		"Invoke": func(p *Pool) int { return Invoke(p, func(*Worker) int { return 7 }) },
		"Submit.Get": func(p *Pool) int {
			v, err := Submit(p, func(*Worker) int { return 7 }).Get(nil)
			if err != nil {
				return -1
			}
			return v
		},
		"Broadcast": func(p *Pool) int {
			var ran atomic.Int64
			Broadcast(p, func(*Worker) { ran.Add(1) })
			if int(ran.Load()) != p.Parallelism() {
				return -1
			}
			return 7
		},
	}
	for name, wait := range waits {
		for _, workers := range []int{1, 2} {
			if name == "Broadcast" && workers == 2 {
				continue
			}
			t.Run(name+"/workers="+string(rune('0'+workers)), func(t *testing.T) {
				got := make(chan int, 1)
				var p *Pool
				p = New(WithParallelism(workers), WithPanicHandler(func(*PanicError) { got <- wait(p) }))
				release := make(chan struct{})
				t.Cleanup(func() {
					close(release)
					if !t.Failed() { // else the handler still waits, and so would Close
						p.Close()
					}
				})
				if workers == 2 {
					// The other worker is held outside Block: no
					// compensating worker takes its place.
					held := make(chan struct{})
					require.NoError(t, p.Execute(func(w *Worker) {
						close(held)
						<-release
					}))
					<-held
				}
				var v int
				testenv.Within(t, "a handler that waits for its pool", func() {
					if err := p.Execute(func(*Worker) { panic("boom") }); err != nil {
						v = -2
						return
					}
					v = <-got
				})
				require.Equal(t, 7, v)
			})
		}
	}
}

// TestPanicHandlerWaitSurvivesGoexit: while the handler runs, the reporting
// worker runs the pool's tasks (reportPanicOn); one of them that calls
// runtime.Goexit unwinds the report too. The panicking task must still
// complete, or the pool counts it in flight for ever and Close hangs
// (it did with the completion after the report instead of deferred), and
// the handler's own wait must still be served, by the worker's next
// goroutine.
func TestPanicHandlerWaitSurvivesGoexit(t *testing.T) {
	var calls atomic.Int64
	got := make(chan int, 1)
	var p *Pool
	p = New(WithParallelism(1), WithPanicHandler(func(*PanicError) {
		if calls.Add(1) != 1 {
			return // the Goexit below is reported too
		}
		if err := p.Execute(func(*Worker) { runtime.Goexit() }); err != nil {
			got <- -1
			return
		}
		got <- Invoke(p, func(*Worker) int { return 7 })
	}))
	var closed atomic.Bool // written by Within's goroutine, which a hang leaves running
	t.Cleanup(func() {
		if !closed.Load() && !t.Failed() {
			p.Close()
		}
	})
	var v int
	testenv.Within(t, "the handler's wait and Close", func() {
		if err := p.Execute(func(*Worker) { panic("boom") }); err != nil {
			v = -2
			return
		}
		v = <-got
		p.Close()
		closed.Store(true)
	})
	require.Equal(t, 7, v)
	require.Equal(t, int64(2), calls.Load(), "the panic and the Goexit")
}
