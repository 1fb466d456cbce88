package bench

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/sourcegraph/conc/pool"
	"golang.org/x/sync/errgroup"

	"github.com/magpie-go/magpie/forkjoin"
)

// Tasks submitted from outside any pool: the event-style use where nobody
// forks, a producer hands out many tiny independent jobs and waits for all
// of them. Work stealing has little to offer here; the question is what one
// submission costs.

const (
	tasksN       = 1_000_000
	tasksChanCap = 1024 // the channel pool's buffer: producers rarely block
)

// tinyTask is the job: a store of a value computed from its index.
func tinyTask(out []int, i int) { out[i] = i*i + 1 }

// channelPool is the classic worker pool: GOMAXPROCS goroutines draining
// one shared channel, started once, like a pool that outlives the batch.
type channelPool struct {
	jobs chan func()
	done sync.WaitGroup
}

func newChannelPool(b *testing.B) *channelPool {
	cp := &channelPool{jobs: make(chan func(), tasksChanCap)}
	for range runtime.GOMAXPROCS(0) {
		cp.done.Go(func() {
			for f := range cp.jobs {
				f()
			}
		})
	}
	b.Cleanup(func() { close(cp.jobs); cp.done.Wait() })
	return cp
}

// runTaskBatch times batch, which runs tinyTask for every index of out (n
// of them) and returns once all have run, checks that the tasks ran, and
// reports ns/task.
func runTaskBatch(b *testing.B, n int, batch func(out []int)) {
	b.ReportAllocs()
	out := make([]int, n)
	b.ResetTimer()
	for range b.N {
		batch(out)
	}
	b.StopTimer()
	for _, i := range []int{0, n / 2, n - 1} {
		if out[i] != i*i+1 {
			b.Fatalf("out[%d] = %d: task not run", i, out[i])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/task")
}

// BenchmarkSubmit1M submits one million tiny tasks from the benchmark
// goroutine and waits for all of them; ns/task is the cost of one.
func BenchmarkSubmit1M(b *testing.B) {
	run := func(b *testing.B, batch func(out []int)) { runTaskBatch(b, tasksN, batch) }
	// Every implementation but seq allocates a closure per task (32 MB per
	// batch): grow the heap to that size before the first measurement.
	warm := make([]int, tasksN)
	for range 3 {
		fs := make([]func(), tasksN)
		for i := range fs {
			fs[i] = func() { tinyTask(warm, i) }
		}
		fs[tasksN-1]()
	}
	b.Run("impl=seq", func(b *testing.B) {
		run(b, func(out []int) {
			for i := range tasksN {
				f := func() { tinyTask(out, i) }
				f()
			}
		})
	})
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		run(b, func(out []int) {
			var wg sync.WaitGroup
			wg.Add(tasksN)
			for i := range tasksN {
				if err := p.Execute(func(*forkjoin.Worker) { tinyTask(out, i); wg.Done() }); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
		})
	})
	b.Run("impl=channel", func(b *testing.B) {
		cp := newChannelPool(b)
		run(b, func(out []int) {
			var wg sync.WaitGroup
			wg.Add(tasksN)
			for i := range tasksN {
				cp.jobs <- func() { tinyTask(out, i); wg.Done() }
			}
			wg.Wait()
		})
	})
	b.Run("impl=waitgroup", func(b *testing.B) {
		run(b, func(out []int) {
			var wg sync.WaitGroup
			for i := range tasksN {
				wg.Go(func() { tinyTask(out, i) })
			}
			wg.Wait()
		})
	})
	b.Run("impl=errgroup", func(b *testing.B) {
		run(b, func(out []int) {
			var g errgroup.Group
			for i := range tasksN {
				g.Go(func() error { tinyTask(out, i); return nil })
			}
			_ = g.Wait()
		})
	})
	b.Run("impl=conc", func(b *testing.B) {
		run(b, func(out []int) {
			p := pool.New().WithMaxGoroutines(runtime.GOMAXPROCS(0))
			for i := range tasksN {
				p.Go(func() { tinyTask(out, i) })
			}
			p.Wait()
		})
	})
}

// submitFromN is how many tasks one operation of BenchmarkSubmitFrom
// submits, shared out between the producers.
const submitFromN = 128 << 10

// submitFrom starts producers goroutines, gives each an equal share of
// [0, n) to hand to submit one index at a time, and waits for them: the
// caller's submit arranges for the task to run and to be counted done.
func submitFrom(producers, n int, submit func(i int)) {
	var wg sync.WaitGroup
	for k := range producers {
		wg.Go(func() {
			for i := n * k / producers; i < n*(k+1)/producers; i++ {
				submit(i)
			}
		})
	}
	wg.Wait()
}

// BenchmarkSubmitFrom submits 128K tiny tasks from 1, 4 and 16 goroutines
// outside any pool and waits for all of them: the request-handler shape,
// where several goroutines feed one pool. magpie is Pool.Execute, channel
// the channel pool (every producer sends on its one channel), waitgroup a
// goroutine per task; seq runs the tasks on one goroutine. ns/task is the
// cost of one task, submission included.
func BenchmarkSubmitFrom(b *testing.B) {
	for _, producers := range []int{1, 4, 16} {
		run := func(b *testing.B, batch func(out []int)) { runTaskBatch(b, submitFromN, batch) }
		name := fmt.Sprintf("producers=%d/impl=", producers)
		b.Run(name+"seq", func(b *testing.B) {
			run(b, func(out []int) {
				for i := range submitFromN {
					f := func() { tinyTask(out, i) }
					f()
				}
			})
		})
		b.Run(name+"magpie", func(b *testing.B) {
			p := benchPool(b)
			run(b, func(out []int) {
				var done sync.WaitGroup
				done.Add(submitFromN)
				submitFrom(producers, submitFromN, func(i int) {
					if err := p.Execute(func(*forkjoin.Worker) { tinyTask(out, i); done.Done() }); err != nil {
						panic(err) // the pool is open and unbounded: Execute cannot fail
					}
				})
				done.Wait()
			})
		})
		b.Run(name+"channel", func(b *testing.B) {
			cp := newChannelPool(b)
			run(b, func(out []int) {
				var done sync.WaitGroup
				done.Add(submitFromN)
				submitFrom(producers, submitFromN, func(i int) { cp.jobs <- func() { tinyTask(out, i); done.Done() } })
				done.Wait()
			})
		})
		b.Run(name+"waitgroup", func(b *testing.B) {
			run(b, func(out []int) {
				var done sync.WaitGroup
				submitFrom(producers, submitFromN, func(i int) { done.Go(func() { tinyTask(out, i) }) })
				done.Wait()
			})
		})
	}
}
