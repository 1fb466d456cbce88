package pipeline_test

import (
	"context"
	"flag"
	"fmt"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/pipeline"
)

// The 3-stage pipeline of small items of issue 14: pipeline against the
// same stages written with goroutines and channels (a fixed number of
// goroutines per stage, ordered by a reorder buffer when asked).

// benchItemsFlag sets the items per run; docs/design.md records the peak
// heap of a run of 10M (-pipeline.items=10000000 -benchtime 1x).
var benchItemsFlag = flag.Int("pipeline.items", 1_000_000, "items per run of the 3-stage benchmarks")

var benchItems = 1_000_000

// watchHeap samples the bytes of live heap objects every millisecond until
// stop is called, which returns the largest sample in MiB: the memory a
// run holds, which a bounded pipeline keeps independent of its length.
func watchHeap() (stop func() float64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	exited := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(exited)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		<-exited
		return float64(peak.Load()) / (1 << 20)
	}
}

func small(v int) int { return v*2654435761%1000003 + 1 }

func BenchmarkPipeline3Stages(b *testing.B) {
	benchItems = *benchItemsFlag
	for _, unordered := range []bool{false, true} {
		b.Run(fmt.Sprint("unordered=", unordered), func(b *testing.B) {
			p := forkjoin.New()
			defer p.Close()
			var opts []pipeline.Option
			if unordered {
				opts = append(opts, pipeline.WithUnordered())
			}
			opts = append(opts, pipeline.WithLimit(64))
			stage := func(_ context.Context, _ *forkjoin.Worker, v int) (int, error) { return small(v), nil }
			src := pipeline.From(func(yield func(int) bool) {
				for i := range benchItems {
					if !yield(i) {
						return
					}
				}
			})
			pipe := pipeline.Map(pipeline.Map(pipeline.Map(src, p, stage, opts...), p, stage, opts...), p, stage, opts...)
			b.ReportAllocs()
			stop := watchHeap()
			for b.Loop() {
				n := 0
				if err := pipeline.Run(context.Background(), pipe, func(int) error { n++; return nil }); err != nil || n != benchItems {
					b.Fatal(err, n)
				}
			}
			b.ReportMetric(stop(), "peak-heap-MiB")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchItems), "ns/item")
		})
	}
}

func BenchmarkChannels3Stages(b *testing.B) {
	benchItems = *benchItemsFlag
	for _, unordered := range []bool{false, true} {
		b.Run(fmt.Sprint("unordered=", unordered), func(b *testing.B) {
			b.ReportAllocs()
			stop := watchHeap()
			for b.Loop() {
				n := 0
				for range channelPipeline(benchItems, 3, 4, unordered) {
					n++
				}
				if n != benchItems {
					b.Fatal(n)
				}
			}
			b.ReportMetric(stop(), "peak-heap-MiB")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchItems), "ns/item")
		})
	}
}

type seqItem struct{ seq, v int }

// channelPipeline is the goroutines-and-channels version: workers
// goroutines per stage, channels of capacity 64, items tagged with their
// index and put back in order at the end when ordered.
func channelPipeline(n, stages, workers int, unordered bool) <-chan int {
	src := make(chan seqItem, 64)
	go func() {
		defer close(src)
		for i := range n {
			src <- seqItem{i, i}
		}
	}()
	var next <-chan seqItem = src
	for range stages {
		in := next
		out := make(chan seqItem, 64)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for it := range in {
					out <- seqItem{it.seq, small(it.v)}
				}
			})
		}
		go func() { wg.Wait(); close(out) }()
		next = out
	}
	in := next
	res := make(chan int, 64)
	go func() {
		defer close(res)
		pending := map[int]int{}
		next := 0
		for it := range in {
			if unordered {
				res <- it.v
				continue
			}
			pending[it.seq] = it.v
			for v, ok := pending[next]; ok; v, ok = pending[next] {
				delete(pending, next)
				res <- v
				next++
			}
		}
	}()
	return res
}
