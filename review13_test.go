package magpie

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// lateChecker counts calls of a helper's function that start or end after
// the helper returned to its caller: each is a write into the caller's
// memory the caller can no longer order with its own.
type lateChecker struct {
	returned atomic.Bool
	late     atomic.Int64
	calls    atomic.Int64
}

// visit is what every call of the helper's function does first and last.
func (c *lateChecker) visit(work func()) {
	if c.returned.Load() {
		c.late.Add(1)
	}
	c.calls.Add(1)
	work()
	if c.returned.Load() {
		c.late.Add(1)
	}
}

// spin13 burns a little time, sometimes more, so that calls overlap the
// helper's exit.
func spin13(i int) {
	n := 50
	if i%97 == 0 {
		n = 5000
	}
	x := 0
	for j := range n {
		x += j ^ i
	}
	sink13.Add(int64(x & 1))
}

var sink13 atomic.Int64

// TestHelpersStopWritingBeforeReturn: every helper, ended early by a panic
// in its function (every helper), an error (the Err and Context ones), a
// canceled context (the Context ones), an early answer (IndexFunc, Any,
// All) or an early break (MapSeq), returns only once no call of its
// function runs, on 2 and 4 workers, from outside and from inside a task.
func TestHelpersStopWritingBeforeReturn(t *testing.T) {
	const n = 20_000
	boom := errors.New("boom")
	in := ints(n)
	// source yields 0..n-1 and panics with boom at k (never if k < 0).
	source := func(k int) func(yield func(int) bool) {
		return func(yield func(int) bool) {
			for i := range n {
				if i == k {
					panic(boom)
				}
				if !yield(i) {
					return
				}
			}
		}
	}
	type call func(r forkjoin.Runner, k int, c *lateChecker)
	at := func(c *lateChecker, i, k int) {
		c.visit(func() {
			spin13(i)
			if i == k {
				panic(boom)
			}
		})
	}
	calls := map[string]call{
		"For": func(r forkjoin.Runner, k int, c *lateChecker) { For(r, n, func(i int) { at(c, i, k) }) },
		"ForRange": func(r forkjoin.Runner, k int, c *lateChecker) {
			ForRange(r, n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					at(c, i, k)
				}
			})
		},
		"ForChunks": func(r forkjoin.Runner, k int, c *lateChecker) {
			ForChunks(r, n, 7, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					at(c, i, k)
				}
			})
		},
		"ForInit": func(r forkjoin.Runner, k int, c *lateChecker) {
			ForInit(r, n, func() int { return 0 }, func(_ int, i int) { at(c, i, k) })
		},
		"Map": func(r forkjoin.Runner, k int, c *lateChecker) {
			Map(r, in, func(x int) int { at(c, x, k); return x })
		},
		"MapInPlace": func(r forkjoin.Runner, k int, c *lateChecker) {
			MapInPlace(r, ints(n), func(x int) int { at(c, x, k); return x })
		},
		"Map2": func(r forkjoin.Runner, k int, c *lateChecker) {
			Map2(r, in, in, func(x, _ int) int { at(c, x, k); return x })
		},
		"FilterMap": func(r forkjoin.Runner, k int, c *lateChecker) {
			FilterMap(r, in, func(x int) (int, bool) { at(c, x, k); return x, x%2 == 0 })
		},
		"Filter": func(r forkjoin.Runner, k int, c *lateChecker) {
			Filter(r, in, func(x int) bool { at(c, x, k); return x%2 == 0 })
		},
		"Count": func(r forkjoin.Runner, k int, c *lateChecker) {
			Count(r, in, func(x int) bool { at(c, x, k); return x%2 == 0 })
		},
		"Reduce": func(r forkjoin.Runner, k int, c *lateChecker) {
			Reduce(r, in, 0, func(a, x int) int { at(c, x, k); return a + x }, func(a, b int) int { return a + b })
		},
		"ReduceRange": func(r forkjoin.Runner, k int, c *lateChecker) {
			ReduceRange(r, n, 0, func(a, lo, hi int) int {
				for i := lo; i < hi; i++ {
					at(c, i, k)
					a += i
				}
				return a
			}, func(a, b int) int { return a + b })
		},
		"Scan": func(r forkjoin.Runner, k int, c *lateChecker) {
			s := ints(n)
			Scan(r, s, func(a, b int) int { at(c, b, k); return a + b })
		},
		"SortFunc": func(r forkjoin.Runner, k int, c *lateChecker) {
			s := ints(n)
			rand.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
			SortFunc(r, s, func(a, b int) int { at(c, a*n+b, k*n+k+1); return a - b })
		},
		"SortStableFunc": func(r forkjoin.Runner, k int, c *lateChecker) {
			s := ints(n)
			rand.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
			SortStableFunc(r, s, func(a, b int) int { at(c, a*n+b, k*n+k+1); return a - b })
		},
		"IndexFunc": func(r forkjoin.Runner, k int, c *lateChecker) {
			IndexFunc(r, in, func(x int) bool { c.visit(func() { spin13(x) }); return x == k })
		},
		"Any": func(r forkjoin.Runner, k int, c *lateChecker) {
			Any(r, in, func(x int) bool { c.visit(func() { spin13(x) }); return x == k })
		},
		"All": func(r forkjoin.Runner, k int, c *lateChecker) {
			All(r, in, func(x int) bool { c.visit(func() { spin13(x) }); return x != k })
		},
		"ForErr": func(r forkjoin.Runner, k int, c *lateChecker) {
			_ = ForErr(r, n, func(i int) error {
				var err error
				c.visit(func() {
					spin13(i)
					if i == k {
						err = boom
					}
				})
				return err
			})
		},
		"MapErr": func(r forkjoin.Runner, k int, c *lateChecker) {
			_, _ = MapErr(r, in, func(x int) (int, error) {
				var err error
				c.visit(func() {
					spin13(x)
					if x == k {
						err = boom
					}
				})
				return x, err
			})
		},
		"ForContext": func(r forkjoin.Runner, k int, c *lateChecker) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_ = ForContext(ctx, r, n, func(ctx context.Context, i int) error {
				c.visit(func() {
					spin13(i)
					if i == k {
						cancel()
					}
				})
				return nil
			})
		},
		"MapContext": func(r forkjoin.Runner, k int, c *lateChecker) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, _ = MapContext(ctx, r, in, func(ctx context.Context, x int) (int, error) {
				c.visit(func() {
					spin13(x)
					if x == k {
						cancel()
					}
				})
				return x, nil
			})
		},
		"ForSeq": func(r forkjoin.Runner, k int, c *lateChecker) {
			ForSeq(r, source(-1), func(i int) { at(c, i, k) })
		},
		"Do": func(r forkjoin.Runner, k int, c *lateChecker) {
			fns := make([]func(), 16)
			for j := range fns {
				fns[j] = func() {
					for i := j * n / 16; i < (j+1)*n/16; i++ {
						at(c, i, k)
					}
				}
			}
			Do(r, fns...)
		},
		"MapSeqBodyPanics": func(r forkjoin.Runner, k int, c *lateChecker) {
			seq := MapSeq(r, source(-1), func(i int) int { c.visit(func() { spin13(i) }); return i })
			for v := range seq {
				if v == k {
					panic(boom)
				}
			}
		},
		"MapSeqSourcePanics": func(r forkjoin.Runner, k int, c *lateChecker) {
			seq := MapSeq(r, source(k), func(i int) int { c.visit(func() { spin13(i) }); return i })
			for range seq {
			}
		},
		"ForSeqSourcePanics": func(r forkjoin.Runner, k int, c *lateChecker) {
			ForSeq(r, source(k), func(i int) { c.visit(func() { spin13(i) }) })
		},
		"MapSeq": func(r forkjoin.Runner, k int, c *lateChecker) {
			seq := MapSeq(r, source(-1), func(i int) int { c.visit(func() { spin13(i) }); return i })
			for v := range seq {
				if v == k {
					break
				}
			}
		},
	}
	rounds := 6
	if testenv.Race {
		rounds = 2
	}
	for _, par := range []int{2, 4} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		for name, fn := range calls {
			for _, inside := range []bool{false, true} {
				for round := range rounds {
					k := rand.IntN(n)
					c := &lateChecker{}
					what := fmt.Sprintf("p=%d %s inside=%v k=%d", par, name, inside, k)
					testenv.Within(t, what, func() {
						run := func(r forkjoin.Runner) {
							defer func() {
								c.returned.Store(true)
								_ = recover()
							}()
							fn(r, k, c)
						}
						if inside {
							forkjoin.Invoke(p, func(w *forkjoin.Worker) int { run(w); return 0 })
						} else {
							run(p)
						}
					})
					_ = round
					time.Sleep(200 * time.Microsecond)
					require.Zero(t, c.late.Load(), "%s: calls after the helper returned (of %d)", what, c.calls.Load())
				}
			}
		}
		p.Close()
	}
}

// affine is x -> a*x + b modulo a prime; composing them is associative and
// not commutative, so a helper that combines pieces out of order, or
// applies op with its arguments swapped, gets a different answer.
type affine struct{ a, b uint64 }

const affMod = 1_000_003

func compose(f, g affine) affine { // f then g
	return affine{f.a * g.a % affMod, (f.b*g.a + g.b) % affMod}
}

// TestOrderSensitiveHelpersMatchSequential: Scan, Reduce, ReduceWith,
// ReduceRange, Filter, FilterMap, MinFunc, MaxFunc and SortStableFunc
// against their sequential equivalents with an associative,
// non-commutative op and with ties, on several sizes, grains and pools,
// from outside and inside a task.
func TestOrderSensitiveHelpersMatchSequential(t *testing.T) {
	pools := []*forkjoin.Pool{forkjoin.New(forkjoin.WithParallelism(2)), forkjoin.New(forkjoin.WithParallelism(3), forkjoin.WithMode(forkjoin.FIFO))}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	for _, p := range pools {
		for _, n := range []int{0, 1, 2, 3, 63, 64, 65, 1000, 4097, 50_000} {
			for _, opts := range [][]Option{nil, {Grain(1)}, {Grain(7)}, {Grain(1000)}} {
				in := make([]affine, n)
				for i := range in {
					in[i] = affine{uint64(rand.IntN(affMod-1) + 1), uint64(rand.IntN(affMod))}
				}
				id := affine{1, 0}
				// sequential answers
				seqScan := slices.Clone(in)
				for i := 1; i < n; i++ {
					seqScan[i] = compose(seqScan[i-1], seqScan[i])
				}
				seqRed := id
				for _, f := range in {
					seqRed = compose(seqRed, f)
				}
				keys := make([]int, n)
				for i := range keys {
					keys[i] = rand.IntN(5)
				}
				check := func(r forkjoin.Runner, where string) {
					what := fmt.Sprintf("n=%d opts=%d %s", n, len(opts), where)
					s := slices.Clone(in)
					Scan(r, s, compose, opts...)
					assert.Equal(t, seqScan, s, "Scan "+what)
					assert.Equal(t, seqRed, Reduce(r, in, id, compose, compose, opts...), "Reduce "+what)
					assert.Equal(t, seqRed, ReduceWith(r, in, func() affine { return id }, compose, compose, opts...), "ReduceWith "+what)
					assert.Equal(t, seqRed, ReduceRange(r, n, id, func(a affine, lo, hi int) affine {
						for _, f := range in[lo:hi] {
							a = compose(a, f)
						}
						return a
					}, compose, opts...), "ReduceRange "+what)
					keep := func(f affine) bool { return f.a%3 == 0 }
					var seqF []affine
					for _, f := range in {
						if keep(f) {
							seqF = append(seqF, f)
						}
					}
					assert.Equal(t, len(seqF), len(Filter(r, in, keep, opts...)), "Filter "+what)
					if len(seqF) > 0 {
						assert.Equal(t, seqF, []affine(Filter(r, in, keep, opts...)), "Filter "+what)
					}
					fm := FilterMap(r, in, func(f affine) (uint64, bool) { return f.b, keep(f) }, opts...)
					assert.Equal(t, len(seqF), len(fm), "FilterMap "+what)
					for i := range min(len(fm), len(seqF)) {
						assert.Equal(t, seqF[i].b, fm[i], "FilterMap "+what)
					}
					if n > 0 {
						idx := make([]int, n)
						for i := range idx {
							idx[i] = i
						}
						byKey := func(a, b int) int { return keys[a] - keys[b] }
						assert.Equal(t, slices.MinFunc(idx, byKey), MinFunc(r, idx, byKey, opts...), "MinFunc "+what)
						assert.Equal(t, slices.MaxFunc(idx, byKey), MaxFunc(r, idx, byKey, opts...), "MaxFunc "+what)
						want := slices.Clone(idx)
						slices.SortStableFunc(want, byKey)
						got := slices.Clone(idx)
						SortStableFunc(r, got, byKey, opts...)
						assert.Equal(t, want, got, "SortStableFunc "+what)
					}
				}
				check(p, "outside")
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int { check(w, "inside"); return 0 })
				if t.Failed() {
					return
				}
			}
		}
	}
}

// TestContextHelpersDoneBeforeCallRunNothing: ForContext and MapContext
// with a context already done run no iteration and return its error, for
// every size (the inline paths included), from outside and inside a task.
func TestContextHelpersDoneBeforeCallRunNothing(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, n := range []int{0, 1, 5, 100, 10_000} {
		for _, inside := range []bool{false, true} {
			var ran atomic.Int64
			var errF, errM error
			var res []int
			do := func(r forkjoin.Runner) {
				errF = ForContext(ctx, r, n, func(context.Context, int) error { ran.Add(1); return nil })
				res, errM = MapContext(ctx, r, ints(n), func(_ context.Context, x int) (int, error) { ran.Add(1); return x, nil })
			}
			if inside {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int { do(w); return 0 })
			} else {
				do(p)
			}
			require.Zero(t, ran.Load(), "n=%d inside=%v", n, inside)
			require.ErrorIs(t, errF, context.Canceled, "n=%d inside=%v", n, inside)
			require.ErrorIs(t, errM, context.Canceled, "n=%d inside=%v", n, inside)
			require.Nil(t, res)
		}
	}
}
