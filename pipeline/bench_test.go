package pipeline_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/pipeline"
)

// The 3-stage pipeline of small items of issue 14: pipeline against the
// same stages written with goroutines and channels (a fixed number of
// goroutines per stage, ordered by a reorder buffer when asked).

const benchItems = 1_000_000

func small(v int) int { return v*2654435761%1000003 + 1 }

func BenchmarkPipeline3Stages(b *testing.B) {
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
			for b.Loop() {
				n := 0
				if err := pipeline.Run(context.Background(), pipe, func(int) error { n++; return nil }); err != nil || n != benchItems {
					b.Fatal(err, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchItems), "ns/item")
		})
	}
}

func BenchmarkChannels3Stages(b *testing.B) {
	for _, unordered := range []bool{false, true} {
		b.Run(fmt.Sprint("unordered=", unordered), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for range channelPipeline(benchItems, 3, 4, unordered) {
					n++
				}
				if n != benchItems {
					b.Fatal(n)
				}
			}
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
