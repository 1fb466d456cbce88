package sorts

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/sorttest"
	"github.com/magpie-go/magpie/internal/testenv"
)

// rev30Sizes are lengths at which the number of parallel blocks changes on
// a pool of the given parallelism (radixBlockCount), one either side, all
// above radixLeaf: the read pass's top-byte histograms are the first MSD
// level's only if both cut the slice into the same blocks.
func rev30Sizes(workers int) []int {
	var ns []int
	for _, k := range []int{2, 3, workers * radixBlocksPerWorker, workers*radixBlocksPerWorker + 1} {
		for _, d := range []int{-1, 0, 1} {
			if n := k*radixBlockMin + d; n > radixLeaf {
				ns = append(ns, n)
			}
		}
	}
	slices.Sort(ns)
	return slices.Compact(ns)
}

// TestRev30RadixFirstLevelHistograms (review rev30): full-range random keys,
// so that every block of the read pass is unsorted and counts the top byte
// and the first MSD level reuses those histograms (radixSortKeys), at
// every size where the block count changes, on pools of 1 to 5 workers,
// for 8-, 16-, 32- and 64-bit keys (for 1-byte keys the top byte is the
// only digit: the reused level is the last) and float32 (keys mapped in
// place first). Sort must give slices.Sort's result. Passes on 6d6b6b9:
// radixSortKeys and sortRange both cut [0, n) with
// blockBounds(0, n, radixBlockCount(Parallelism(), n), b).
func TestRev30RadixFirstLevelHistograms(t *testing.T) {
	workerCounts := []int{1, 2, 3, 5}
	if testenv.Race {
		workerCounts = []int{1, 3}
	}
	rng := rand.New(rand.NewPCG(30, 30))
	for _, workers := range workerCounts {
		p := sorttest.Pool(t, workers)
		sizes := rev30Sizes(workers)
		if testenv.Race {
			sizes = sizes[:3]
		}
		for _, n := range sizes {
			raw := make([]uint64, n)
			for i := range raw {
				raw[i] = rng.Uint64()
			}
			name := fmt.Sprintf("workers=%d n=%d", workers, n)
			rev30Check[int8](t, p, raw, "int8 "+name)
			rev30Check[uint16](t, p, raw, "uint16 "+name)
			rev30Check[int32](t, p, raw, "int32 "+name)
			rev30Check[int64](t, p, raw, "int64 "+name)
			f := make([]float32, n)
			for i, v := range raw {
				f[i] = math.Float32frombits(uint32(v))
			}
			rdxRadixFloatOrder(t, p, f, "float32 "+name)
		}
	}
}

func rev30Check[E rdxInt](t *testing.T, p *forkjoin.Pool, raw []uint64, name string) {
	t.Helper()
	in := make([]E, len(raw))
	for i, v := range raw {
		in[i] = E(v)
	}
	want := slices.Clone(in)
	slices.Sort(want)
	Sort(p, in, 0, false)
	require.Equal(t, want, in, name)
}

// TestRev30RadixOrderCheckSeesBlockBoundaries (review rev30): a slice
// ascending (or non-increasing) inside every block of the read pass and
// out of order only across one boundary, where the last element of a
// block and the first of the next are swapped. Only the element each
// block reads before its own (radixScanOrder's prev) sees it; without it
// the pass took the slice for sorted, or reversed it. Also an unsorted
// block next to sorted ones (its histogram counted, theirs not: the first
// MSD level makes its own). Passes on 6d6b6b9.
func TestRev30RadixOrderCheckSeesBlockBoundaries(t *testing.T) {
	const workers = 2
	p := sorttest.Pool(t, workers)
	n := 3*radixBlockMin + 7
	if testenv.Race {
		n = 2*radixBlockMin + 7
	}
	nb := radixBlockCount(workers, n)
	require.Greater(t, nb, 1)
	for b := 1; b < nb; b++ {
		lo, _ := blockBounds(0, n, nb, b)
		asc, desc := make([]int64, n), make([]int64, n)
		for i := range asc {
			asc[i] = int64(i)<<40 - 1<<62 // full range: the top byte differs
			desc[i] = int64(n-i)<<40 - 1<<62
		}
		asc[lo-1], asc[lo] = asc[lo], asc[lo-1]
		desc[lo-1], desc[lo] = desc[lo], desc[lo-1]
		for _, in := range [][]int64{asc, desc} {
			want := slices.Clone(in)
			slices.Sort(want)
			got := slices.Clone(in)
			Sort(p, got, 0, false)
			require.Equal(t, want, got, "boundary of block %d of %d", b, nb)
		}
		// Random keys in block b only.
		mixed := slices.Clone(asc)
		blo, bhi := blockBounds(0, n, nb, b)
		rng := rand.New(rand.NewPCG(uint64(b), 30))
		for i := blo; i < bhi; i++ {
			mixed[i] = int64(rng.Uint64())
		}
		want := slices.Clone(mixed)
		slices.Sort(want)
		Sort(p, mixed, 0, false)
		require.Equal(t, want, mixed, "random block %d of %d", b, nb)
	}
}
