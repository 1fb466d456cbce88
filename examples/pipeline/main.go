// Command pipeline runs the same three-stage pipeline twice, with package
// pipeline on forkjoin pools and with goroutines and channels: read
// records, a CPU-heavy transform on the default pool, and a slow sink (it
// sleeps, as I/O would) on a small pool of its own. It prints the items
// in flight at their peak (bounded by the stages' limits and queues) and
// the throughput of each.
//
//	go run ./examples/pipeline            # 2000 records, 1 ms per write
//	go run ./examples/pipeline -n 5000 -write 200us
package main

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/pipeline"
)

// transform is the CPU-heavy stage: a few thousand rounds of hashing.
func transform(rec []byte) uint64 {
	h := fnv.New64a()
	var sum uint64
	for i := range 2000 {
		h.Write(rec)
		h.Write([]byte{byte(i)})
		sum ^= h.Sum64()
	}
	return sum
}

// records yields n records, counting those in flight.
func records(n int, inFlight *gauge) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for i := range n {
			inFlight.add(1)
			if !yield(fmt.Appendf(nil, "record %d", i)) {
				return
			}
		}
	}
}

// gauge counts items in flight and keeps the peak.
type gauge struct{ now, peak atomic.Int64 }

func (g *gauge) add(d int64) {
	v := g.now.Add(d)
	for p := g.peak.Load(); v > p && !g.peak.CompareAndSwap(p, v); p = g.peak.Load() {
	}
}

func main() {
	n := flag.Int("n", 2000, "records")
	write := flag.Duration("write", time.Millisecond, "time per write in the sink stage")
	writers := flag.Int("writers", 4, "parallel writes")
	flag.Parse()

	io := forkjoin.New(forkjoin.WithParallelism(*writers), forkjoin.WithName("io"))
	defer io.Close()

	// With package pipeline.
	var g1 gauge
	start := time.Now()
	src := pipeline.From(records(*n, &g1))
	hashed := pipeline.Map(src, nil, func(_ context.Context, _ *forkjoin.Worker, rec []byte) (uint64, error) {
		return transform(rec), nil
	}, pipeline.WithLimit(8), pipeline.WithBuffer(8))
	written := pipeline.Map(hashed, io, func(_ context.Context, _ *forkjoin.Worker, h uint64) (uint64, error) {
		time.Sleep(*write) // the slow device; a blocking stage belongs on a pool of its own
		return h, nil
	}, pipeline.WithLimit(*writers), pipeline.WithBuffer(4))
	var check1 uint64
	err := pipeline.Run(context.Background(), written, func(h uint64) error {
		check1 ^= h
		g1.add(-1)
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	d1 := time.Since(start)

	// With goroutines and channels: the same stages, limits and queues.
	var g2 gauge
	start = time.Now()
	recs := make(chan []byte)
	go func() {
		defer close(recs)
		for r := range records(*n, &g2) {
			recs <- r
		}
	}()
	hashes := make(chan uint64, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for r := range recs {
				hashes <- transform(r)
			}
		})
	}
	go func() { wg.Wait(); close(hashes) }()
	done := make(chan uint64, 4)
	var wg2 sync.WaitGroup
	for range *writers {
		wg2.Go(func() {
			for h := range hashes {
				time.Sleep(*write)
				done <- h
			}
		})
	}
	go func() { wg2.Wait(); close(done) }()
	var check2 uint64
	for h := range done {
		check2 ^= h
		g2.add(-1)
	}
	d2 := time.Since(start)

	fmt.Printf("%d records, %v per write, %d writers\n", *n, *write, *writers)
	fmt.Printf("%-22s %10s %14s %16s\n", "", "time", "records/s", "peak in flight")
	fmt.Printf("%-22s %10v %14.0f %16d (bound 2+(8+8)+(%d+4) = %d; input order kept)\n", "pipeline",
		d1.Round(time.Millisecond), float64(*n)/d1.Seconds(), g1.peak.Load(), *writers, 2+16+*writers+4)
	fmt.Printf("%-22s %10v %14.0f %16d (unordered)\n", "goroutines+channels",
		d2.Round(time.Millisecond), float64(*n)/d2.Seconds(), g2.peak.Load())
	if check1 != check2 {
		fmt.Fprintln(os.Stderr, "the two pipelines disagree")
		os.Exit(1)
	}
}
