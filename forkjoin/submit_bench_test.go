package forkjoin_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/magpie-go/magpie/forkjoin"
)

// BenchmarkSubmit1M: tiny tasks submitted from outside and awaited with a
// WaitGroup, by 1, 4 and 16 submitting goroutines, through Execute on a
// pool of GOMAXPROCS workers ("magpie") and, in the same run, through the
// channel worker pool a Go server would write instead ("chan": a channel
// of 1024 funcs drained by GOMAXPROCS goroutines). One op is one task; run
// 1M of them per measurement with
//
//	go test ./forkjoin -run XXX -bench Submit1M -benchtime 1000000x -count 10 -test.cpu 2 | benchstat -
//
// Every task is the same func value, so an allocation per op is the
// submission path's own. The "typed" rows submit a struct action through
// ExecuteTaskPriority (task.Execute), the "submit" rows a typed task through
// SubmitTaskPriority (task.Submit), whose Future is one allocation per task.
func BenchmarkSubmit1M(b *testing.B) {
	for _, submitters := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("magpie/submitters=%d", submitters), func(b *testing.B) {
			p := forkjoin.New()
			defer p.Close()
			var wg sync.WaitGroup
			task := func(*forkjoin.Worker) { wg.Done() }
			submitAll(b, submitters, &wg, func() {
				if err := p.Execute(task); err != nil {
					panic(err)
				}
			})
		})
		b.Run(fmt.Sprintf("typed/submitters=%d", submitters), func(b *testing.B) {
			p := forkjoin.New()
			defer p.Close()
			var wg sync.WaitGroup
			submitAll(b, submitters, &wg, func() {
				if err := forkjoin.ExecuteTaskPriority(p, forkjoin.Normal, doneAction{&wg}); err != nil {
					panic(err)
				}
			})
		})
		b.Run(fmt.Sprintf("submit/submitters=%d", submitters), func(b *testing.B) {
			p := forkjoin.New()
			defer p.Close()
			var wg sync.WaitGroup
			submitAll(b, submitters, &wg, func() {
				forkjoin.SubmitTaskPriority[struct{}](p, forkjoin.Normal, doneTask{&wg})
			})
		})
		b.Run(fmt.Sprintf("chan/submitters=%d", submitters), func(b *testing.B) { submitChanPool(b, submitters) })
	}
}

// submitChanPool is the "chan" row: tiny tasks sent by submitters
// goroutines on a channel of 1,024 funcs drained by GOMAXPROCS goroutines,
// the worker pool a Go server writes by hand.
func submitChanPool(b *testing.B, submitters int) {
	ch := make(chan func(), 1024)
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for f := range ch {
				f()
			}
		}()
	}
	defer func() { close(ch); workers.Wait() }()
	var wg sync.WaitGroup
	task := func() { wg.Done() }
	submitAll(b, submitters, &wg, func() { ch <- task })
}

// submitAll times b.N calls of submit, split over the given number of
// goroutines, and the wait for the b.N tasks they submit (each calls
// wg.Done).
func submitAll(b *testing.B, submitters int, wg *sync.WaitGroup, submit func()) {
	b.ReportAllocs()
	wg.Add(b.N)
	var subs sync.WaitGroup
	b.ResetTimer()
	for g := range submitters {
		share := b.N / submitters
		if g < b.N%submitters {
			share++
		}
		subs.Add(1)
		go func() {
			defer subs.Done()
			for range share {
				submit()
			}
		}()
	}
	subs.Wait()
	wg.Wait()
}

// doneAction and doneTask are the typed tasks of BenchmarkSubmit1M: they
// call wg.Done.
type doneAction struct{ wg *sync.WaitGroup }

func (d doneAction) Compute(*forkjoin.Worker) { d.wg.Done() }

type doneTask struct{ wg *sync.WaitGroup }

func (d doneTask) Compute(*forkjoin.Worker) struct{} { d.wg.Done(); return struct{}{} }

// BenchmarkSubmitDrain: how fast the workers drain a backlog of tiny
// Executes, without a submitter competing for the processors. Every worker
// is held while b.N tasks (each wg.Done) are queued from one goroutine;
// only the drain, from the release to the last task, is timed. One op is
// one task. With workers=1 no two workers contend for the take; workers=
// GOMAXPROCS is the pool of BenchmarkSubmit1M. The "chan" row drains a
// channel holding b.N funcs with GOMAXPROCS goroutines in the same way.
func BenchmarkSubmitDrain(b *testing.B) {
	for i, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		if i > 0 && workers == 1 {
			break // the one-worker row again
		}
		b.Run(fmt.Sprintf("magpie/workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			p := forkjoin.New(forkjoin.WithParallelism(workers))
			defer p.Close()
			gate := make(chan struct{})
			var held sync.WaitGroup
			held.Add(workers)
			for range workers {
				if err := p.Execute(func(*forkjoin.Worker) { held.Done(); <-gate }); err != nil {
					b.Fatal(err)
				}
			}
			held.Wait()
			var wg sync.WaitGroup
			wg.Add(b.N)
			task := func(*forkjoin.Worker) { wg.Done() }
			for range b.N {
				if err := p.Execute(task); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			close(gate)
			wg.Wait()
		})
	}
	b.Run("chan", func(b *testing.B) {
		ch := make(chan func(), b.N)
		var wg sync.WaitGroup
		wg.Add(b.N)
		task := func() { wg.Done() }
		for range b.N {
			ch <- task
		}
		close(ch)
		b.ResetTimer()
		for range runtime.GOMAXPROCS(0) {
			go func() {
				for f := range ch {
					f()
				}
			}()
		}
		wg.Wait()
	})
}
