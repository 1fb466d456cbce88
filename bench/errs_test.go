package bench

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/magpie-go/magpie"
)

// Errors and early exit: ForErr over a compute-bound body that either never
// fails (the whole loop: the price of the error plumbing) or fails at one
// index (how fast the others stop), and IndexFunc on a cheap predicate with
// the match three quarters in or absent.

const (
	errN    = 1_000_000  // BenchmarkForErr: ~50 ns per index
	searchN = 10_000_000 // BenchmarkIndexFunc: 80 MB of int64
)

var (
	errInput    = sync.OnceValue(func() []float64 { return benchFloats(errN, 7) })
	errSink     float64
	searchInput = sync.OnceValue(func() []int64 {
		s := make([]int64, searchN)
		for i := range s {
			s[i] = int64(i % 1000)
		}
		return s
	})
	errBench = errors.New("bench: failed")
)

// BenchmarkForErr runs body(i) = benchMathFn(in[i]) over 1M indices, with
// fail=none (every call returns nil) or fail=mid (index n/2 fails: the
// sequential loop stops there, the parallel ones stop all workers).
// impl=errgroup is one errgroup goroutine per GOMAXPROCS chunk, each chunk
// returning at its first error (errgroup cancels nothing without a
// context; a chunk that does not fail runs to its end); impl=waitgroup is
// the same with sync.WaitGroup, the first chunk's error returned.
func BenchmarkForErr(b *testing.B) {
	in := errInput()
	out := make([]float64, len(in))
	for _, fail := range []struct {
		name string
		at   int
	}{{"none", -1}, {"mid", errN / 2}} {
		body := func(i int) error {
			if i == fail.at {
				return errBench
			}
			out[i] = benchMathFn(in[i])
			return nil
		}
		run := func(b *testing.B, fn func() error) {
			b.ReportAllocs()
			b.ResetTimer()
			var err error
			for range b.N {
				err = fn()
			}
			b.StopTimer()
			if (err != nil) != (fail.at >= 0) {
				b.Fatalf("err = %v", err)
			}
			errSink = out[len(out)-1]
		}
		b.Run(fmt.Sprintf("fail=%s/impl=seq", fail.name), func(b *testing.B) {
			run(b, func() error {
				for i := range len(in) {
					if err := body(i); err != nil {
						return err
					}
				}
				return nil
			})
		})
		b.Run(fmt.Sprintf("fail=%s/impl=magpie", fail.name), func(b *testing.B) {
			p := benchPool(b)
			run(b, func() error { return magpie.ForErr(p, len(in), body) })
		})
		b.Run(fmt.Sprintf("fail=%s/impl=waitgroup", fail.name), func(b *testing.B) {
			run(b, func() error {
				errs := chunkResults(len(in), func(lo, hi int) error {
					for i := lo; i < hi; i++ {
						if err := body(i); err != nil {
							return err
						}
					}
					return nil
				})
				for _, err := range errs {
					if err != nil {
						return err
					}
				}
				return nil
			})
		})
		b.Run(fmt.Sprintf("fail=%s/impl=errgroup", fail.name), func(b *testing.B) {
			run(b, func() error {
				var g errgroup.Group
				for _, c := range benchChunks(len(in)) {
					g.Go(func() error {
						for i := c[0]; i < c[1]; i++ {
							if err := body(i); err != nil {
								return err
							}
						}
						return nil
					})
				}
				return g.Wait()
			})
		})
	}
}

// BenchmarkIndexFunc looks for the first element equal to a value over 10M
// int64, with at=3/4 (the first match three quarters in: the sequential
// scan reads 7.5M elements, the parallel one stops the upper pieces) or
// at=none (a full scan). impl=waitgroup scans one chunk per GOMAXPROCS to
// its first match (no chunk stops another) and takes the first chunk's.
func BenchmarkIndexFunc(b *testing.B) {
	s := searchInput()
	for _, at := range []struct {
		name string
		i    int
	}{{"3/4", searchN * 3 / 4}, {"none", -1}} {
		target := int64(-1)
		if at.i >= 0 {
			s = slices.Clone(s)
			s[at.i] = -2 // unique
			target = -2
		}
		pred := func(x int64) bool { return x == target }
		run := func(b *testing.B, fn func() int) {
			b.ReportAllocs()
			b.ResetTimer()
			var got int
			for range b.N {
				got = fn()
			}
			b.StopTimer()
			if got != at.i {
				b.Fatalf("index = %d, want %d", got, at.i)
			}
		}
		name := "at=" + map[string]string{"3/4": "3q", "none": "none"}[at.name]
		b.Run(name+"/impl=seq", func(b *testing.B) {
			run(b, func() int { return slices.IndexFunc(s, pred) })
		})
		b.Run(name+"/impl=magpie", func(b *testing.B) {
			p := benchPool(b)
			run(b, func() int { return magpie.IndexFunc(p, s, pred) })
		})
		b.Run(name+"/impl=waitgroup", func(b *testing.B) {
			run(b, func() int {
				firsts := chunkResults(len(s), func(lo, hi int) int {
					if i := slices.IndexFunc(s[lo:hi], pred); i >= 0 {
						return lo + i
					}
					return -1
				})
				for _, i := range firsts {
					if i >= 0 {
						return i
					}
				}
				return -1
			})
		})
	}
}
