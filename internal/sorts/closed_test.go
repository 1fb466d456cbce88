package sorts

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/sorttest"
)

// TestSortsOnClosedPool: on a closed pool, which refuses the one task a
// sort submits (runSort), every sort runs on the caller and gives the
// result it gives on an open pool: the standard library's for integers,
// strings, the quicksort and the stable merge sort (every shape, sizes
// below and above the leaf and radixMin, with and without a grain), and,
// for the radix sort of floats, the same bits in the same order as on an
// open pool (-0 before +0, NaNs ordered by their bits). On 2bbbbe3 every
// sort that reached runSort panicked with forkjoin.ErrClosed.
func TestSortsOnClosedPool(t *testing.T) {
	closed := forkjoin.New(forkjoin.WithParallelism(2))
	closed.Close()
	open := sorttest.Pool(t, 2)
	rng := rand.New(rand.NewPCG(26, 27))
	for _, sh := range sorttest.Shapes {
		for _, n := range []int{100, 3000, 5000, 20_000} {
			t.Run(fmt.Sprintf("%s/%d", sh.Name, n), func(t *testing.T) {
				keys := sh.Gen(rng, n)
				for _, g := range []int{0, 40} {
					require.NotPanics(t, func() { sorttest.CheckAll(t, algorithms, closed, keys, g) })
				}
			})
		}
	}

	t.Run("radix", func(t *testing.T) {
		for _, n := range []int{radixMin, 20_000} {
			f64 := make([]float64, n)
			f32 := make([]float32, n)
			specials := []float64{0, math.Copysign(0, -1), math.NaN(), -math.NaN(),
				math.Float64frombits(0x7ff8000000000123), math.Float64frombits(0xfff0000000000001),
				math.Inf(1), math.Inf(-1), 1, -1}
			for i := range f64 {
				if rng.IntN(3) == 0 {
					f64[i] = specials[rng.IntN(len(specials))]
				} else {
					f64[i] = float64(rng.IntN(50) - 25)
				}
				f32[i] = float32(f64[i])
			}
			sameOnBoth(t, closed, open, f64)
			sameOnBoth(t, closed, open, f32)
			ints := make([]int64, n)
			for i := range ints {
				ints[i] = rng.Int64() >> rng.IntN(64)
			}
			sameOnBoth(t, closed, open, ints)
			i8 := make([]int8, n)
			u16 := make([]uint16, n)
			for i := range i8 {
				i8[i], u16[i] = int8(rng.Int()), uint16(rng.Int())
			}
			sameOnBoth(t, closed, open, i8)
			sameOnBoth(t, closed, open, u16)
		}
	})
}

// sameOnBoth sorts in with Sort on the closed pool and on the open one and
// requires the same bits in the same order, and a sorted result.
func sameOnBoth[E cmp.Ordered](t *testing.T, closed, open *forkjoin.Pool, in []E) {
	t.Helper()
	a, b := slices.Clone(in), slices.Clone(in)
	require.NotPanics(t, func() { Sort(closed, a, 0, false) })
	Sort(open, b, 0, false)
	require.True(t, slices.IsSorted(a), "%T", in)
	require.True(t, bytes.Equal(asBytes(b), asBytes(a)), "%T: the bits differ", in)
}

// asBytes returns the memory of s.
func asBytes[E any](s []E) []byte {
	var zero E
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}
