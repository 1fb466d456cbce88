package magpie

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// rec is an element with a key and an identity, so that a stable order is
// observable and a permutation checkable.
type rec struct {
	k  int
	id int
}

// keyShapes generate the keys of n records: random, sorted, reversed, all
// equal, and a few distinct values (many ties, where stability shows).
var keyShapes = []struct {
	name string
	key  func(r *rand.Rand, i, n int) int
}{
	{"random", func(r *rand.Rand, _, _ int) int { return r.IntN(1 << 30) }},
	{"sorted", func(_ *rand.Rand, i, _ int) int { return i }},
	{"reversed", func(_ *rand.Rand, i, n int) int { return n - i }},
	{"equal", func(*rand.Rand, int, int) int { return 7 }},
	{"fewDistinct", func(r *rand.Rand, _, _ int) int { return r.IntN(5) }},
}

// checkSortByKey sorts recs of one shape with both functions on r and
// compares them with the standard library, counting the calls of key.
func checkSortByKey(r forkjoin.Runner, in []rec, opts []Option) error {
	var calls atomic.Int64
	key := func(x rec) int { calls.Add(1); return x.k }
	byKey := func(a, b rec) int { return cmp.Compare(a.k, b.k) }
	want := slices.Clone(in)
	slices.SortStableFunc(want, byKey)

	stable := slices.Clone(in)
	SortStableByKey(r, stable, key, opts...)
	if !slices.Equal(stable, want) {
		return fmt.Errorf("SortStableByKey differs from slices.SortStableFunc")
	}
	if c := calls.Swap(0); c != int64(len(in)) {
		return fmt.Errorf("SortStableByKey called key %d times for %d elements", c, len(in))
	}

	unstable := slices.Clone(in)
	SortByKey(r, unstable, key, opts...)
	if c := calls.Load(); c != int64(len(in)) {
		return fmt.Errorf("SortByKey called key %d times for %d elements", c, len(in))
	}
	if !slices.IsSortedFunc(unstable, byKey) {
		return fmt.Errorf("SortByKey: not sorted by key")
	}
	// A permutation of the input: the same records once sorted by (key, id).
	full := func(a, b rec) int { return cmp.Or(cmp.Compare(a.k, b.k), cmp.Compare(a.id, b.id)) }
	slices.SortFunc(unstable, full)
	if !slices.Equal(unstable, want) { // want is sorted by (key, id): ids ascend in input order
		return fmt.Errorf("SortByKey: not a permutation of the input")
	}
	return nil
}

func makeRecs(r *rand.Rand, n int, key func(r *rand.Rand, i, n int) int) []rec {
	in := make([]rec, n)
	for i := range in {
		in[i] = rec{key(r, i, n), i}
	}
	return in
}

// TestSortByKeySmall: every size 0..300, every shape, every runner kind
// and grain.
func TestSortByKeySmall(t *testing.T) {
	p, single := testPools(t)
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, k := range runnerKinds(p, single) {
		for _, g := range grainOpts {
			for _, sh := range keyShapes {
				for n := 0; n <= 300; n++ {
					in := makeRecs(rnd, n, sh.key)
					var err error
					k.call(func(r forkjoin.Runner) { err = checkSortByKey(r, in, g.opts) })
					require.NoError(t, err, "%s/%s/%s/n=%d", k.name, g.name, sh.name, n)
				}
			}
		}
	}
}

// TestSortByKeyLarge: random large inputs of every shape (smaller under
// -race), with the adaptive leaves and a small grain.
func TestSortByKeyLarge(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(4))
	defer p.Close()
	sizes := []int{5000, 100_000}
	if testenv.Race || testing.Short() {
		sizes = []int{5000, 20_000}
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, n := range sizes {
		for _, sh := range keyShapes {
			for _, opts := range [][]Option{nil, {Grain(500)}} {
				in := makeRecs(rnd, n, sh.key)
				testenv.Within(t, "SortByKey", func() {
					require.NoError(t, checkSortByKey(p, in, opts), "%s/n=%d", sh.name, n)
				})
			}
		}
	}
}

// TestSortByKeyFloatKeys: NaN keys come first and -0/+0 tie, as with
// cmp.Compare in slices.SortStableFunc.
func TestSortByKeyFloatKeys(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	type frec struct {
		k  float64
		id int
	}
	vals := []float64{math.NaN(), math.Inf(-1), math.Inf(1), 0, math.Copysign(0, -1), 1.5, -2}
	in := make([]frec, 20_000)
	for i := range in {
		in[i] = frec{vals[rnd.IntN(len(vals))], i}
	}
	key := func(x frec) float64 { return x.k }
	want := slices.Clone(in)
	slices.SortStableFunc(want, func(a, b frec) int { return cmp.Compare(a.k, b.k) })
	got := slices.Clone(in)
	SortStableByKey(nil, got, key, Grain(100))
	for i := range got {
		require.Equal(t, want[i].id, got[i].id, "index %d", i)
	}
}

// TestSortByKeyPanics: a panic in key arrives as a *PanicError holding the
// value, and s is left as it was (a permutation, trivially), on the small
// and the parallel path.
func TestSortByKeyPanics(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	for _, n := range []int{1, 10, 5000} {
		for _, stable := range []bool{false, true} {
			in := makeRecs(rand.New(rand.NewPCG(7, 8)), n, keyShapes[0].key)
			s := slices.Clone(in)
			key := func(x rec) int {
				if x.id == n/2 {
					panic("bad key")
				}
				return x.k
			}
			var v any
			testenv.Within(t, "SortByKey", func() {
				defer func() { v = recover() }()
				if stable {
					SortStableByKey(p, s, key, Grain(64))
				} else {
					SortByKey(p, s, key, Grain(64))
				}
			})
			pe, ok := v.(*forkjoin.PanicError)
			require.True(t, ok, "n=%d: recovered %#v", n, v)
			require.Equal(t, "bad key", pe.Value)
			require.Equal(t, in, s, "n=%d: s modified", n)
		}
	}
	require.PanicsWithValue(t, "magpie: SortByKey called with a nil key", func() { SortByKey[[]int, int, int](nil, []int{1}, nil) })
	require.PanicsWithValue(t, "magpie: SortStableByKey called with a nil key", func() { SortStableByKey[[]int, int, int](nil, nil, nil) })
}
