package magpie

import (
	"cmp"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestNewHelpersPanics: a panic in the function a helper calls (body, f,
// init, cmp, op) reaches the caller as a *forkjoin.PanicError holding the
// value, for every runner kind, on the small path and the parallel one,
// and the pool keeps working.
func TestNewHelpersPanics(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(3))
	defer p.Close()
	single := forkjoin.New(forkjoin.WithParallelism(1))
	defer single.Close()
	boom := errors.New("boom")
	for _, n := range []int{10, 50_000} {
		in := ints(n)
		last := in[n-1]
		calls := map[string]func(r forkjoin.Runner){
			"ForInit": func(r forkjoin.Runner) {
				ForInit(r, n, func() int { return 0 }, func(_ int, i int) {
					if i == n-1 {
						panic(boom)
					}
				})
			},
			"ForInit/init": func(r forkjoin.Runner) {
				ForInit(r, n, func() int { panic(boom) }, func(int, int) {})
			},
			"MapInit": func(r forkjoin.Runner) {
				MapInit(r, in, func() int { return 0 }, func(_ int, x int) int {
					if x == last {
						panic(boom)
					}
					return x
				})
			},
			"MinFunc": func(r forkjoin.Runner) {
				MinFunc(r, in, func(a, b int) int {
					if a == last {
						panic(boom)
					}
					return cmp.Compare(a, b)
				})
			},
			"MaxFunc": func(r forkjoin.Runner) {
				MaxFunc(r, in, func(a, b int) int {
					if a == last {
						panic(boom)
					}
					return cmp.Compare(a, b)
				})
			},
			"Scan": func(r forkjoin.Runner) {
				s := make([]int, n)
				s[n-1] = -1
				Scan(r, s, func(a, b int) int {
					if b < 0 {
						panic(boom)
					}
					return a + b
				})
			},
			"FilterMap": func(r forkjoin.Runner) {
				FilterMap(r, in, func(x int) (int, bool) {
					if x == last {
						panic(boom)
					}
					return x, true
				})
			},
			"Map2": func(r forkjoin.Runner) {
				Map2(r, in, in, func(x, _ int) int {
					if x == last {
						panic(boom)
					}
					return x
				})
			},
			"ForChunks": func(r forkjoin.Runner) {
				ForChunks(r, n, 3, func(lo, hi int) {
					if hi == n {
						panic(boom)
					}
				})
			},
		}
		for _, k := range runnerKinds(p, single) {
			for name, call := range calls {
				var got any
				k.call(func(r forkjoin.Runner) {
					defer func() { got = recover() }()
					call(r)
				})
				pe, ok := got.(*forkjoin.PanicError)
				require.True(t, ok, "%s %s n=%d: recovered %T %v", name, k.name, n, got, got)
				require.ErrorIs(t, pe, boom, "%s %s n=%d", name, k.name, n)
			}
			// op must be associative: a + 1, ignoring b, is not, and gave
			// 4999 only while no block was reduced.
			s := slices.Repeat([]int{1}, 5000)
			k.call(func(r forkjoin.Runner) { Scan(r, s, add[int]) })
			require.Equal(t, 5000, s[4999], "the pool survives")
		}
	}
}
