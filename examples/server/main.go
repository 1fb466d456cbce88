// Command server uses a forkjoin pool as the executor of a server: many
// goroutines (the requests) submit request-sized tasks at three priorities
// while a batch job floods the pool with background work, and the latency
// of each class, from submission to completion, is printed beside the same
// load on a channel worker pool (a channel drained by GOMAXPROCS
// goroutines, FIFO, one class for all).
//
//	go run ./examples/server
//	go run ./examples/server -clients 64 -requests 40 -batch 4000 -work 20us
//
// On the pool, urgent requests overtake the queued batch work (Urgent is
// taken before Normal before Background, with aging so that the batch
// still progresses: see forkjoin.WithPriorityAging); on the channel pool
// every request waits behind the whole backlog. Pool.Stats, here printed at
// the end, is what an operator would export (package forkjoin/statsvar).
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
)

var (
	clients  = flag.Int("clients", 32, "request goroutines")
	requests = flag.Int("requests", 50, "requests per client")
	batch    = flag.Int("batch", 3000, "background tasks submitted at once by the batch job")
	work     = flag.Duration("work", 20*time.Microsecond, "CPU time of one task, about")
	think    = flag.Duration("think", 200*time.Microsecond, "pause of a client between two requests")
)

// class is the kind of a request.
type class int

const (
	urgent class = iota
	normal
	background
)

var classNames = [...]string{"urgent", "normal", "background"}

var priorities = [...]forkjoin.Priority{forkjoin.Urgent, forkjoin.Normal, forkjoin.Background}

// executor is what a server needs of a pool: run fn at some priority.
// The channel pool ignores the priority.
type executor interface {
	execute(c class, fn func()) error
	close()
}

type magpiePool struct{ p *forkjoin.Pool }

func (m magpiePool) execute(c class, fn func()) error {
	return m.p.ExecutePriority(priorities[c], func(*forkjoin.Worker) { fn() })
}
func (m magpiePool) close() { m.p.Close() }

// chanPool is the worker pool a Go server would write by hand.
type chanPool struct {
	ch chan func()
	wg sync.WaitGroup
}

func newChanPool(workers int) *chanPool {
	c := &chanPool{ch: make(chan func(), 1<<16)}
	for range workers {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			for f := range c.ch {
				f()
			}
		}()
	}
	return c
}

func (c *chanPool) execute(_ class, fn func()) error { c.ch <- fn; return nil }
func (c *chanPool) close()                           { close(c.ch); c.wg.Wait() }

// unitsPerWork is the number of hash rounds that take about *work.
var unitsPerWork int

// spin does about n rounds of hashing: the request's CPU work.
func spin(n int) byte {
	var buf [64]byte
	for range n {
		s := sha256.Sum256(buf[:])
		copy(buf[:], s[:])
	}
	return buf[0]
}

func calibrate() {
	const probe = 2000
	t0 := time.Now()
	spin(probe)
	per := time.Since(t0) / probe
	unitsPerWork = max(int(*work/max(per, 1)), 1)
}

// sink keeps the hashing from being optimized away.
var sink atomic.Int64

// run drives the load through e and returns the latencies of each class.
func run(e executor) [3][]time.Duration {
	var mu sync.Mutex
	var lat [3][]time.Duration
	record := func(c class, d time.Duration) {
		mu.Lock()
		lat[c] = append(lat[c], d)
		mu.Unlock()
	}
	submit := func(c class, done func()) {
		t0 := time.Now()
		err := e.execute(c, func() {
			sink.Add(int64(spin(unitsPerWork)))
			record(c, time.Since(t0))
			done()
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "submit:", err)
			os.Exit(1)
		}
	}

	var all sync.WaitGroup
	// The batch job: a backlog of background work, submitted at once.
	all.Add(*batch)
	for range *batch {
		submit(background, all.Done)
	}
	// The requests: every tenth urgent, the others normal; each client
	// waits for its response before the next request.
	for g := range *clients {
		all.Add(1)
		go func() {
			defer all.Done()
			for i := range *requests {
				c := normal
				if (g+i)%10 == 0 {
					c = urgent
				}
				done := make(chan struct{})
				submit(c, func() { close(done) })
				<-done
				time.Sleep(*think)
			}
		}()
	}
	all.Wait()
	return lat
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(int(p*float64(len(d))), len(d)-1)]
}

func report(name string, lat [3][]time.Duration) {
	for c, d := range lat {
		slices.Sort(d)
		fmt.Printf("%-7s %-10s %6d %10v %10v %10v %10v\n", name, classNames[c], len(d),
			percentile(d, 0.5).Round(time.Microsecond), percentile(d, 0.9).Round(time.Microsecond),
			percentile(d, 0.99).Round(time.Microsecond), d[len(d)-1].Round(time.Microsecond))
	}
}

func main() {
	flag.Parse()
	calibrate()
	workers := runtime.GOMAXPROCS(0)
	fmt.Printf("%d workers, %d clients x %d requests (1 in 10 urgent), batch of %d background tasks, ~%v per task\n\n",
		workers, *clients, *requests, *batch, *work)
	fmt.Printf("%-7s %-10s %6s %10s %10s %10s %10s\n", "pool", "class", "n", "p50", "p90", "p99", "max")

	p := forkjoin.New(forkjoin.WithParallelism(workers), forkjoin.WithName("server"))
	report("magpie", run(magpiePool{p}))
	st := p.Stats()
	_ = p.Shutdown(context.Background())

	c := newChanPool(workers)
	report("chan", run(c))
	c.close()

	fmt.Printf("\npool stats: completed=%d submitted=%d queue waits timed=%d mean=%v max=%v\n",
		st.Completed, st.Submitted, st.QueueWaits,
		(st.QueueWaitTotal / time.Duration(max(st.QueueWaits, 1))).Round(time.Microsecond),
		st.QueueWaitMax.Round(time.Microsecond))
}
