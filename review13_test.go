package magpie

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

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
		"For":      func(r forkjoin.Runner, k int, c *lateChecker) { For(r, n, func(i int) { at(c, i, k) }) },
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
			ForSeq(r, func(yield func(int) bool) {
				for i := range n {
					if !yield(i) {
						return
					}
				}
			}, func(i int) { at(c, i, k) })
		},
		"MapSeq": func(r forkjoin.Runner, k int, c *lateChecker) {
			seq := MapSeq(r, func(yield func(int) bool) {
				for i := range n {
					if !yield(i) {
						return
					}
				}
			}, func(i int) int { c.visit(func() { spin13(i) }); return i })
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
