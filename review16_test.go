package magpie

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestSortByKeyCanceledLeavesPermutation cancels SortByKey and
// SortStableByKey, run under InvokeContext, at random moments after the
// last key call (during the sort of the pairs, the gather and the
// copy-back): when the call has unwound, s must be a permutation of its
// input, as for Sort and SortStableFunc (TestCanceledSortLeavesPermutation
// in internal/sorts), and more: unmodified or sorted, as SortByKey's doc
// says. On main a cancellation during the copy-back left s part copied,
// elements lost and others duplicated.
func TestSortByKeyCanceledLeavesPermutation(t *testing.T) {
	n, rounds := 1<<18, 40
	if testenv.Race {
		n, rounds = 1<<15, 6
	}
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	rng := rand.New(rand.NewPCG(16, 16))
	// Reversed keys: the pairs are reversed, which the quicksort undoes in
	// one pass, and large elements, so that the gather and the copy-back
	// take most of the time after the keys.
	type big struct {
		k, id int
		_     [14]int64
	}
	in := make([]big, n)
	for i := range in {
		in[i] = big{k: n - i, id: i}
	}
	byID := func(a, b big) int { return cmp.Compare(a.id, b.id) }
	// How long an uncanceled call runs after its last key call: the
	// cancellations fall in that window.
	var lastKey atomic.Int64
	keyTimed := func(x big) int {
		lastKey.Store(time.Now().UnixNano())
		return x.k
	}
	window := time.Hour
	for range 3 { // the shortest of three: the first run pays page faults
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int { SortStableByKey(w, slices.Clone(in), keyTimed); return 0 })
		window = min(window, time.Since(time.Unix(0, lastKey.Load())))
	}
	window = max(window, 100*time.Microsecond)
	canceled, broken := 0, 0
	for round := range rounds {
		s := slices.Clone(in)
		ctx, cancel := context.WithCancel(context.Background())
		var calls atomic.Int64
		delay := window/3 + time.Duration(rng.Int64N(int64(window*2/3)))
		key := func(x big) int {
			if calls.Add(1) == int64(n) {
				time.AfterFunc(delay, cancel)
			}
			return x.k
		}
		var err error
		testenv.Within(t, "canceled SortByKey", func() {
			_, err = forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
				if round%2 == 0 {
					SortStableByKey(w, s, key)
				} else {
					SortByKey(w, s, key)
				}
				return 0
			})
		})
		cancel()
		testenv.WaitUntil(t, "the canceled sort to unwind", func() bool { return p.Stats().Idle == p.Parallelism() })
		if err != nil {
			require.ErrorIs(t, err, context.Canceled)
			canceled++
		}
		unmodified := slices.Equal(s, in)
		sorted := slices.IsSortedFunc(s, func(a, b big) int { return cmp.Compare(a.k, b.k) })
		if !unmodified && !sorted {
			t.Errorf("round %d (delay %v, err %v): s is neither unmodified nor sorted", round, delay, err)
		}
		got := slices.Clone(s)
		slices.SortFunc(got, byID)
		if !slices.Equal(got, in) {
			broken++
			t.Errorf("round %d (delay %v, err %v): s is not a permutation of its input", round, delay, err)
		}
	}
	t.Logf("window %v: %d of %d sorts canceled, %d left s broken", window, canceled, rounds, broken)
}

// FuzzScanNonCommutative: Scan with hashOp (associative, not
// commutative: a polynomial hash of the prefix) gives the sequential
// loop's result for any input, pool size (1, 2, 3 and 4 workers on 2
// CPUs) and block size, whether the blocks are scanned in place, reduced
// first or handed over.
func FuzzScanNonCommutative(f *testing.F) {
	pools := []*forkjoin.Pool{
		forkjoin.New(forkjoin.WithParallelism(1)),
		forkjoin.New(forkjoin.WithParallelism(2)),
		forkjoin.New(forkjoin.WithParallelism(3)),
		forkjoin.New(forkjoin.WithParallelism(4)),
	}
	f.Cleanup(func() {
		for _, p := range pools {
			p.Close()
		}
	})
	f.Add([]byte("a scan of bytes, not commutative"), uint8(1), uint8(3), uint16(0))
	f.Add([]byte{1}, uint8(3), uint8(1), uint16(5000))
	f.Add([]byte{7, 0, 255}, uint8(2), uint8(0), uint16(40000))
	f.Fuzz(func(t *testing.T, data []byte, pool, grain uint8, extra uint16) {
		if len(data) == 0 {
			return
		}
		p := pools[int(pool)%len(pools)]
		var opts []Option
		if grain%16 != 0 {
			opts = []Option{Grain(int(grain%16) * int(grain/16+1))}
		}
		n := len(data) + int(extra)
		xs := make([]int, n)
		for i := range xs {
			xs[i] = int(data[i%len(data)]) + i/len(data)
		}
		in := hashInput(xs)
		want := scanWant(in, hashOp)
		got := slices.Clone(in)
		testenv.Within(t, "Scan", func() { Scan(p, got, hashOp, opts...) })
		require.NoError(t, checkEqual("Scan", got, want))
	})
}

// Named element types, as the radix sort's reflect switch sees them.
type (
	r16Int8    int8
	r16Uintptr uintptr
	r16Float32 float32
)

// FuzzSortTypes: Sort on int8, uint16, int32, uint, uintptr and named
// int8 equals slices.Sort bit for bit; on float32 (named) and float64 it
// is sorted by cmp.Less and a permutation of the input's bits; at every
// length the fuzzer picks (below and above the radix threshold, past the
// leaf) and with InPlace.
func FuzzSortTypes(f *testing.F) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	f.Cleanup(p.Close)
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 255, 0, 0, 0, 0, 0, 0, 128}, uint32(4095), false)
	f.Add([]byte{0x7f, 0xc0, 0, 1, 0x80, 0, 0, 0, 0xff, 0x80, 0, 0}, uint32(4096), false)
	f.Add([]byte{0x80, 0, 0, 0, 0, 0, 0, 0}, uint32(70000), false)
	f.Add([]byte{9, 200}, uint32(3000), true)
	f.Fuzz(func(t *testing.T, data []byte, n32 uint32, inPlace bool) {
		if len(data) == 0 {
			return
		}
		n := int(n32 % 200_000)
		word := func(i int) uint64 {
			var w uint64
			for j := range 8 {
				w = w<<8 | uint64(data[(8*i+j)%len(data)])
			}
			return w ^ uint64(8*i/len(data))&0x3
		}
		var opts []Option
		if inPlace {
			opts = []Option{InPlace()}
		}
		ws := make([]uint64, n)
		for i := range ws {
			ws[i] = word(i)
		}
		sortExact[int8](t, p, ws, opts)
		sortExact[uint16](t, p, ws, opts)
		sortExact[int32](t, p, ws, opts)
		sortExact[uint](t, p, ws, opts)
		sortExact[r16Uintptr](t, p, ws, opts)
		sortExact[r16Int8](t, p, ws, opts)
		f32 := make([]r16Float32, n)
		f64 := make([]float64, n)
		for i, w := range ws {
			f32[i] = r16Float32(math.Float32frombits(uint32(w)))
			f64[i] = math.Float64frombits(w)
		}
		sortFloats(t, p, f32, func(x r16Float32) uint64 { return uint64(math.Float32bits(float32(x))) }, opts)
		sortFloats(t, p, f64, math.Float64bits, opts)
	})
}

func sortExact[E interface {
	~int8 | ~uint16 | ~int32 | ~uint | ~uintptr
}](t *testing.T, p *forkjoin.Pool, ws []uint64, opts []Option) {
	in := make([]E, len(ws))
	for i, w := range ws {
		in[i] = E(w)
	}
	want := slices.Clone(in)
	slices.Sort(want)
	Sort(p, in, opts...)
	require.Equal(t, want, in, "%T n=%d", in[0], len(in))
}

func sortFloats[E ~float32 | ~float64](t *testing.T, p *forkjoin.Pool, in []E, bits func(E) uint64, opts []Option) {
	want := make([]uint64, len(in))
	for i, x := range in {
		want[i] = bits(x)
	}
	slices.Sort(want)
	Sort(p, in, opts...)
	require.True(t, slices.IsSortedFunc(in, cmp.Compare[E]), "%T n=%d: not sorted", in[0], len(in))
	got := make([]uint64, len(in))
	for i, x := range in {
		got[i] = bits(x)
	}
	slices.Sort(got)
	require.Equal(t, want, got, "%T n=%d: not a permutation of the bits", in[0], len(in))
}

// TestCanceledSortsAndScansStopWritingBeforeUnwinding: each sort and scan,
// called by a task whose InvokeContext is canceled at a random moment,
// writes nothing into its slice once it has returned or unwound on the
// task's goroutine: a copy of the slice taken there equals the slice once
// the pool is idle.
func TestCanceledSortsAndScansStopWritingBeforeUnwinding(t *testing.T) {
	n, rounds := 1<<18, 8
	if testenv.Race {
		n, rounds = 1<<15, 3
	}
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	rng := rand.New(rand.NewPCG(7, 16))
	in := make([]int64, n)
	for i := range in {
		in[i] = rng.Int64N(1 << 40)
	}
	byValue := func(a, b int64) int { return cmp.Compare(a, b) }
	helpers := []struct {
		name string
		fn   func(w *forkjoin.Worker, s []int64)
	}{
		{"Sort radix", func(w *forkjoin.Worker, s []int64) { Sort(w, s) }},
		{"Sort InPlace", func(w *forkjoin.Worker, s []int64) { Sort(w, s, InPlace()) }},
		{"SortFunc", func(w *forkjoin.Worker, s []int64) { SortFunc(w, s, byValue) }},
		{"SortStableFunc", func(w *forkjoin.Worker, s []int64) { SortStableFunc(w, s, byValue) }},
		{"SortByKey", func(w *forkjoin.Worker, s []int64) { SortByKey(w, s, func(x int64) int64 { return -x }) }},
		{"SortStableByKey", func(w *forkjoin.Worker, s []int64) { SortStableByKey(w, s, func(x int64) int64 { return x >> 20 }) }},
		{"Scan", func(w *forkjoin.Worker, s []int64) { Scan(w, s, func(a, b int64) int64 { return a ^ (b + 1) }) }},
		{"PrefixSum", func(w *forkjoin.Worker, s []int64) { PrefixSum(w, s) }},
	}
	for _, h := range helpers {
		// How long it takes uncanceled: the cancellations fall within.
		start := time.Now()
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int { h.fn(w, slices.Clone(in)); return 0 })
		took := max(time.Since(start), 100*time.Microsecond)
		for range rounds {
			s := slices.Clone(in)
			var snapshot []int64
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Duration(rng.Int64N(int64(took))), cancel)
			testenv.Within(t, h.name, func() {
				_, _ = forkjoin.InvokeContext(ctx, p, func(w *forkjoin.Worker) int {
					defer func() { snapshot = slices.Clone(s) }()
					h.fn(w, s)
					return 0
				})
			})
			cancel()
			testenv.WaitUntil(t, "the pool to go idle", func() bool { return p.Stats().Idle == p.Parallelism() })
			if snapshot == nil {
				continue // canceled before the task started
			}
			require.True(t, slices.Equal(snapshot, s), "%s: the slice changed after the call unwound", h.name)
		}
	}
}

// TestSortSignedZerosWhereDocumented: Sort puts every -0.0 before every
// +0.0 when the radix sort runs (from 4096 elements, without InPlace), as
// README and Sort's doc say; below that, and with InPlace, the quicksort
// leaves equal-comparing zeros in either order (slices.Sort's freedom),
// which is all the docs promise there.
func TestSortSignedZerosWhereDocumented(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, n := range []int{4095, 4096, 70_000} {
		for _, inPlace := range []bool{false, true} {
			s := make([]float64, n)
			for i := range s {
				if i%2 == 0 {
					s[i] = negZero
				}
			}
			var opts []Option
			if inPlace {
				opts = []Option{InPlace()}
			}
			Sort(nil, s, opts...)
			negFirst := slices.IsSortedFunc(s, func(a, b float64) int {
				return cmp.Compare(math.Float64bits(b)>>63, math.Float64bits(a)>>63)
			})
			if n >= 4096 && !inPlace {
				require.True(t, negFirst, "n=%d: radix sort left +0.0 before -0.0", n)
			}
			require.True(t, slices.IsSorted(s))
		}
	}
}

// TestSortFuncInconsistentCmpKeepsPermutation: a comparator that is no
// ordering at all (random answers) voids the order, but SortFunc (with its
// parallel partition), SortStableFunc and SortByKey's pair sort must still
// neither panic nor lose or duplicate an element.
func TestSortFuncInconsistentCmpKeepsPermutation(t *testing.T) {
	n := 300_000 // past the parallel partition's threshold (1<<18)
	if testenv.Race {
		n = 1 << 15
	}
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	in := make([]int, n)
	for i := range in {
		in[i] = i
	}
	random := func(a, b int) int { return rand.IntN(3) - 1 }
	for _, name := range []string{"SortFunc", "SortStableFunc"} {
		for _, grain := range []int{0, 16, 5000} {
			s := slices.Clone(in)
			rand.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
			var opts []Option
			if grain > 0 {
				opts = []Option{Grain(grain)}
			}
			testenv.Within(t, name, func() {
				if name == "SortFunc" {
					SortFunc(p, s, random, opts...)
				} else {
					SortStableFunc(p, s, random, opts...)
				}
			})
			slices.Sort(s)
			require.Equal(t, in, s, "%s grain %d: not a permutation", name, grain)
		}
	}
}
