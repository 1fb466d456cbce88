package magpie

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// tiedElem is an element whose order looks only at key, so that equal
// elements are told apart by idx: MinFunc and MaxFunc must return the
// first of the equal extremes, as slices.MinFunc and slices.MaxFunc do.
type tiedElem struct{ key, idx int }

func byKey(a, b tiedElem) int { return cmp.Compare(a.key, b.key) }

func keyedInput(n, keys int) []tiedElem {
	s := make([]tiedElem, n)
	for i, x := range ints(n) {
		s[i] = tiedElem{x % keys, i}
	}
	return s
}

func TestMinMaxFunc(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		if n == 0 {
			return nil
		}
		for _, keys := range []int{1, 17, 1 << 30} { // all equal, many ties, no ties
			s := keyedInput(n, keys)
			if got, want := MinFunc(r, s, byKey, opts...), slices.MinFunc(s, byKey); got != want {
				return fmt.Errorf("keys %d: MinFunc %v, want %v", keys, got, want)
			}
			if got, want := MaxFunc(r, s, byKey, opts...), slices.MaxFunc(s, byKey); got != want {
				return fmt.Errorf("keys %d: MaxFunc %v, want %v", keys, got, want)
			}
		}
		return nil
	})
}

// TestMinMaxFuncRandom: large random inputs with few distinct keys, so
// that the first extreme is rarely in the first piece.
func TestMinMaxFuncRandom(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(3))
	defer p.Close()
	rng := testRand(t)
	for _, n := range randomSizes() {
		s := make([]tiedElem, n)
		for i := range s {
			s[i] = tiedElem{rng.IntN(50), i}
		}
		s[rng.IntN(n)].key = -1 // one minimum somewhere
		for _, g := range grainOpts[:4] {
			require.Equal(t, slices.MinFunc(s, byKey), MinFunc(p, s, byKey, g.opts...), "n=%d %s", n, g.name)
			require.Equal(t, slices.MaxFunc(s, byKey), MaxFunc(p, s, byKey, g.opts...), "n=%d %s", n, g.name)
		}
	}
}

func TestMinMaxFuncInputs(t *testing.T) {
	require.PanicsWithValue(t, "magpie: MinFunc called with an empty list", func() { MinFunc(nil, []int{}, cmp.Compare[int]) })
	require.PanicsWithValue(t, "magpie: MaxFunc called with an empty list", func() { MaxFunc(nil, []int(nil), cmp.Compare[int]) })
	require.PanicsWithValue(t, "magpie: MinFunc called with a nil cmp", func() { MinFunc(nil, []int{1}, nil) })
	require.PanicsWithValue(t, "magpie: MaxFunc called with a nil cmp", func() { MaxFunc(nil, []int{1}, nil) })
}
