package magpie

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// hashPair is a polynomial hash with its power, h(s) and 31^len(s): its op
// is associative but not commutative, so a block combined in the wrong
// order, or an offset applied on the wrong side, changes the result.
type hashPair struct{ h, pow uint64 }

func hashOp(a, b hashPair) hashPair { return hashPair{a.h*b.pow + b.h, a.pow * b.pow} }

func hashInput(xs []int) []hashPair {
	s := make([]hashPair, len(xs))
	for i, x := range xs {
		s[i] = hashPair{uint64(x), 31}
	}
	return s
}

// scanWant is the sequential loop Scan's doc names.
func scanWant[E any](s []E, op func(E, E) E) []E {
	s = slices.Clone(s)
	for i := 1; i < len(s); i++ {
		s[i] = op(s[i-1], s[i])
	}
	return s
}

func TestScan(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		in := hashInput(ints(n))
		want := scanWant(in, hashOp)
		Scan(r, in, hashOp, opts...)
		for i := range want {
			if in[i] != want[i] {
				return fmt.Errorf("index %d: %v, want %v", i, in[i], want[i])
			}
		}
		// Integer addition, the common case, and a named slice type.
		type series []int64
		sums := make(series, n)
		for i := range sums {
			sums[i] = int64(i%7) - 3
		}
		wantSums := scanWant(sums, add[int64])
		Scan(r, sums, add[int64], opts...)
		if !slices.Equal(sums, wantSums) {
			return fmt.Errorf("sums differ")
		}
		return nil
	})
}

func TestScanRandom(t *testing.T) {
	rng := testRand(t)
	for _, workers := range []int{2, 3, 8} {
		p := forkjoin.New(forkjoin.WithParallelism(workers))
		for _, n := range randomSizes() {
			xs := make([]int, n)
			for i := range xs {
				xs[i] = rng.IntN(1 << 20)
			}
			want := scanWant(hashInput(xs), hashOp)
			for _, g := range append(grainOpts[:1], grainOpts[2:4]...) {
				s := hashInput(xs)
				Scan(p, s, hashOp, g.opts...)
				require.Equal(t, want, s, "workers %d n=%d %s", workers, n, g.name)
			}
		}
		p.Close()
	}
}

// TestScanWork: the op count Scan's doc gives, from n - 1 (every block
// scanned in place, as the sequential loop) to under 2n (every block after
// the first reduced, then scanned), on 2 and 4 workers with the default
// blocks and with small ones (more blocks, more of them reduced), and
// n - 1 exactly for a slice scanned on the caller.
func TestScanWork(t *testing.T) {
	const n = 300_000
	rounds := 5
	if testenv.Race {
		rounds = 1
	}
	for _, par := range []int{2, 4} {
		p := forkjoin.New(forkjoin.WithParallelism(par))
		for _, opts := range [][]Option{nil, {Grain(1)}, {Grain(64)}, {Grain(1000)}} {
			for range rounds {
				var calls atomic.Int64
				op := func(a, b int64) int64 { calls.Add(1); return a + b }
				s := make([]int64, n)
				Scan(p, s, op, opts...)
				got := calls.Load()
				t.Logf("P=%d %v: %d op calls for n = %d (%.2f n)", par, opts != nil, got, n, float64(got)/n)
				require.GreaterOrEqual(t, got, int64(n-1), "fewer calls than the sequential loop")
				require.Less(t, got, int64(2*n), "an element is reduced at most once and scanned once")
			}
		}
		p.Close()
	}
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	var calls atomic.Int64
	s := make([]int64, 1000)
	Scan(p, s, func(a, b int64) int64 { calls.Add(1); return a + b })
	require.Equal(t, int64(999), calls.Load())
}

// checkEqual returns an error naming the first index where got differs
// from want.
func checkEqual[E comparable](what string, got, want []E) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: len %d, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			return fmt.Errorf("%s: index %d: %v, want %v", what, i, got[i], want[i])
		}
	}
	return nil
}

// prefixWant is the sequential loop PrefixSum's doc names.
func prefixWant[E Number](s []E) []E {
	s = slices.Clone(s)
	for i := 1; i < len(s); i++ {
		s[i] += s[i-1]
	}
	return s
}

// prefixCheck runs PrefixSum on a copy of in and compares it with the
// sequential loop.
func prefixCheck[S ~[]E, E Number](r forkjoin.Runner, in S, opts []Option) error {
	want := prefixWant(in)
	got := slices.Clone(in)
	PrefixSum(r, got, opts...)
	return checkEqual(fmt.Sprintf("%T", in), got, want)
}

// TestPrefixSum: PrefixSum equals the sequential loop exactly for integers
// that overflow (int64 every few elements, int8 all the time, wrapping as
// the loop does), for unsigned integers, and for floats whose sums are
// exact in any order (small integers), on every runner kind and grain,
// sizes 0..300 and large.
func TestPrefixSum(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		type series []int64
		wraps := make(series, n)
		small := make([]int8, n)
		unsigned := make([]uint16, n)
		floats := make([]float64, n)
		for i := range n {
			wraps[i] = math.MaxInt64/3 + int64(i%7) - 3
			small[i] = int8(i*37 + 11)
			unsigned[i] = uint16(i * 7919)
			floats[i] = float64(i%5) - 2
		}
		for _, err := range []error{
			prefixCheck(r, wraps, opts),
			prefixCheck(r, small, opts),
			prefixCheck(r, unsigned, opts),
			prefixCheck(r, floats, opts),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// TestPrefixSumRandom: large random inputs on pools of 1, 2 and 4 workers
// and several block sizes: integers exactly, random floats within the
// rounding of a different association (relative to the sum of the
// magnitudes up to each index).
func TestPrefixSumRandom(t *testing.T) {
	rng := testRand(t)
	for _, workers := range []int{1, 2, 4} {
		p := forkjoin.New(forkjoin.WithParallelism(workers))
		for _, n := range randomSizes() {
			ints := make([]int64, n)
			floats := make([]float64, n)
			for i := range n {
				ints[i] = int64(rng.Uint64())
				floats[i] = rng.Float64()*2 - 1
			}
			for _, g := range [][]Option{nil, {Grain(7)}, {Grain(64)}, {Grain(1000)}} {
				require.NoError(t, prefixCheck(p, ints, g), "workers %d n=%d grain %v", workers, n, g)
				want := prefixWant(floats)
				got := slices.Clone(floats)
				PrefixSum(p, got, g...)
				var mag float64
				for i, x := range floats {
					mag += math.Abs(x)
					if math.Abs(got[i]-want[i]) > 1e-12*mag {
						require.InDelta(t, want[i], got[i], 1e-12*mag, "workers %d n=%d index %d", workers, n, i)
					}
				}
			}
		}
		p.Close()
	}
}

// FuzzPrefixSum: any input, pool size and block size give the sequential
// loop's result, for int8 (wrapping) and int64.
func FuzzPrefixSum(f *testing.F) {
	pools := []*forkjoin.Pool{
		forkjoin.New(forkjoin.WithParallelism(1)),
		forkjoin.New(forkjoin.WithParallelism(2)),
		forkjoin.New(forkjoin.WithParallelism(4)),
	}
	f.Cleanup(func() {
		for _, p := range pools {
			p.Close()
		}
	})
	f.Add([]byte("prefix sums of bytes"), uint8(1), uint8(3))
	f.Add(make([]byte, 2000), uint8(2), uint8(0))
	f.Add([]byte{255, 1, 128, 127, 0, 9}, uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, pool, grain uint8) {
		p := pools[int(pool)%len(pools)]
		var opts []Option
		if grain%8 != 0 {
			opts = []Option{Grain(int(grain % 8))}
		}
		small := make([]int8, len(data))
		wide := make([]int64, len(data))
		for i, x := range data {
			small[i] = int8(x)
			wide[i] = int64(x) << 56 // wraps after a few elements
		}
		require.NoError(t, prefixCheck(p, small, opts))
		require.NoError(t, prefixCheck(p, wide, opts))
	})
}

// indexed is an element that carries its index: op keeps the later
// index, so it stays associative (the sum part is +), and the gate in
// TestScanHandOver can tell which block a call scans.
type indexed struct{ sum, idx int }

func indexedOp(a, b indexed) indexed { return indexed{a.sum + b.sum, b.idx} }

// TestScanHandOver drives the hand-over: the participant scanning block 0
// in place is held (op blocks on the call that scans element 1) until the
// other participant has reduced every other block, so that it finds
// nothing left to claim with its blocks not ready and hands them over
// (orphaned); the held participant then prefixes the chain and scans the
// orphans. The result is the sequential one, and nothing hangs.
func TestScanHandOver(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	const block, blocks = 100, 40
	const n = block * blocks
	for round := range 20 {
		in := make([]indexed, n)
		for i := range in {
			in[i] = indexed{i % 13, i}
		}
		want := scanWant(in, indexedOp)
		var reduces atomic.Int64
		release := make(chan struct{})
		op := func(a, b indexed) indexed {
			switch {
			case b.idx == 1:
				<-release // block 0's scan in place, held
			case b.idx >= block:
				// Block 0 is held: any other call before the release is a
				// reduce, block-1 calls for each of blocks-1 blocks.
				if reduces.Add(1) == (block-1)*(blocks-1) {
					close(release)
				}
			}
			return indexedOp(a, b)
		}
		testenv.Within(t, "Scan with a held participant", func() {
			Scan(p, in, op, Grain(block))
		})
		require.NoError(t, checkEqual("round "+fmt.Sprint(round), in, want))
	}
}

// TestScanReducerStopsAhead: with the participant scanning block 0 in
// place held, the other reduces maxAhead blocks and stops (no further
// reduction while the first is held), instead of reducing every block
// ahead of a chain that does not move; once released, the first carries
// the chain on and the scan completes, with the sequential result.
func TestScanReducerStopsAhead(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	const block, blocks = 128, 1500
	ahead := max(scanAheadBytes/(block*elemSize[indexed]()), 2)
	require.Less(t, ahead, blocks/2, "the test needs blocks beyond maxAhead")
	in := make([]indexed, block*blocks)
	for i := range in {
		in[i] = indexed{i % 13, i}
	}
	want := scanWant(in, indexedOp)
	var reduces atomic.Int64
	release := make(chan struct{})
	op := func(a, b indexed) indexed {
		if b.idx == 1 {
			<-release // block 0's scan in place, held
		} else if b.idx >= block {
			reduces.Add(1)
		}
		return indexedOp(a, b)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Scan(p, in, op, Grain(block))
	}()
	stop := int64(ahead * (block - 1))
	testenv.WaitUntil(t, "the reducer to reduce maxAhead blocks", func() bool { return reduces.Load() >= stop })
	time.Sleep(20 * time.Millisecond) // a reducer that did not stop would reduce on
	held := reduces.Load()
	close(release)
	testenv.Within(t, "Scan after the release", func() { <-done })
	require.Equal(t, stop, held, "reductions while the chain was held: %d blocks, maxAhead %d", held/(block-1), ahead)
	require.NoError(t, checkEqual("scan", in, want))
}

// TestScanBlockLen: 64 KiB blocks for a large slice, shorter ones so that
// each participant gets 8, Grain's size when set, and never more blocks
// than the claim word can index, even for Grain(1) on the longest slice.
func TestScanBlockLen(t *testing.T) {
	require.Equal(t, scanBlockBytes/8, scanBlockLen[int64](10_000_000, 2, 0))
	require.Equal(t, scanBlockBytes/2, scanBlockLen[int16](10_000_000, 2, 0))
	require.Equal(t, 10_000/16, scanBlockLen[int64](10_000, 2, 0))
	require.Equal(t, 1, scanBlockLen[int64](10, 2, 0))
	require.Equal(t, 7, scanBlockLen[int64](10_000, 2, 7))
	for _, n := range []int{scanMaxBlocks - 1, scanMaxBlocks, scanMaxBlocks + 1, math.MaxInt} {
		block := scanBlockLen[int8](n, 2, 1)
		blocks := n / block
		if n%block != 0 {
			blocks++
		}
		require.LessOrEqual(t, blocks, scanMaxBlocks, "n=%d block %d", n, block)
	}
}

// TestScanClaimLeavesGap: while a block is scanned in place, a reducer
// claims the block after next (the gap stays for the scanner), and the
// scanner, done, claims the gap in place; once no block is scanned in
// place, claims go in order again.
func TestScanClaimLeavesGap(t *testing.T) {
	s := make([]int, 10)
	b := &blockScan[int]{s: s, block: 1, blocks: len(s), st: make([]scanBlockState[int], len(s))}
	b.claims.Store(packClaims(0, 1))
	c, inPlace, ok := b.claim(true)
	require.True(t, ok)
	require.Equal(t, []any{0, true}, []any{c, inPlace}, "block 0 is scanned in place")
	c, inPlace, _ = b.claim(true)
	require.Equal(t, []any{2, false}, []any{c, inPlace}, "block 1 is left for the scanner")
	c, inPlace, _ = b.claim(true)
	require.Equal(t, []any{3, false}, []any{c, inPlace})
	// Block 0 scanned: prefixed, and the scanner claims block 1 in place.
	b.scanning.Store(false)
	b.st[0].flag.Store(blockPrefixed)
	c, inPlace, _ = b.claim(true)
	require.Equal(t, []any{1, true}, []any{c, inPlace}, "the gap, in place")
	// Blocks 2 and 3 are being reduced, 1 is not prefixed: with nobody
	// scanning in place, a reducer takes the next block, 4.
	b.scanning.Store(false)
	c, inPlace, _ = b.claim(true)
	require.Equal(t, []any{4, false}, []any{c, inPlace}, "no gap without a scan in place")
	for range 5 {
		_, _, ok = b.claim(true)
		require.True(t, ok)
	}
	_, _, ok = b.claim(true)
	require.False(t, ok, "every block claimed")
}

func TestScanInputs(t *testing.T) {
	require.PanicsWithValue(t, "magpie: Scan called with a nil op", func() { Scan[[]int](nil, []int{1}, nil) })
	Scan(nil, []int{}, func(a, b int) int { panic("not called") })
	one := []int{5}
	Scan(nil, one, func(a, b int) int { panic("not called") })
	require.Equal(t, []int{5}, one)
}

var prefixSink int64

// BenchmarkPrefixSumKernels times PrefixSum's per-block loops on one block
// in cache: addAll (one chain of dependent adds, Sum's leaf), addAll4 (the
// reduction, four partial sums) and addFrom (the scan).
func BenchmarkPrefixSumKernels(b *testing.B) {
	s := make([]int64, scanBlockBytes/8)
	for i := range s {
		s[i] = int64(i % 7)
	}
	b.Run("kernel=addAll", func(b *testing.B) {
		b.SetBytes(int64(len(s)) * 8)
		for b.Loop() {
			prefixSink = addAll(0, s)
		}
	})
	b.Run("kernel=addAll4", func(b *testing.B) {
		b.SetBytes(int64(len(s)) * 8)
		for b.Loop() {
			prefixSink = addAll4(s)
		}
	})
	b.Run("kernel=addFrom", func(b *testing.B) {
		b.SetBytes(int64(len(s)) * 8)
		for b.Loop() {
			addFrom(s, 1)
		}
	})
}

// TestScanOnRefusingPool: a pool closed after scanInline looked refuses
// the scan's task having run nothing, and scanOn (called here directly,
// as after that look) scans on the caller: the sequential result, and a
// panic in op as a *forkjoin.PanicError. On 2bbbbe3 scanOn panicked with
// forkjoin.ErrClosed.
func TestScanOnRefusingPool(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	p.Close()
	in := make([]int, 5000)
	for i := range in {
		in[i] = i * 7 % 13
	}
	want := slices.Clone(in)
	for i := 1; i < len(want); i++ {
		want[i] += want[i-1]
	}
	s := slices.Clone(in)
	scanOn(p, s, scanKernels[int]{
		op:     add[int],
		scan:   func(s []int, prefix int) { scanFrom(s, prefix, add[int]) },
		first:  func(s []int) { scanSeq(s, add[int]) },
		reduce: func(s []int) int { return reduceBlock(s, add[int]) },
	}, 0)
	require.Equal(t, want, s, "Scan's kernels")
	s = slices.Clone(in)
	scanOn(p, s, scanKernels[int]{op: add[int], scan: addFrom[int], first: addFirst[int], reduce: addAll4[int]}, 64)
	require.Equal(t, want, s, "PrefixSum's kernels")
	v := recoverValue(func() {
		scanOn(p, slices.Clone(in), scanKernels[int]{first: func([]int) { panic("op") }}, 0)
	})
	var pe *forkjoin.PanicError
	require.ErrorAs(t, v.(error), &pe)
	require.Equal(t, "op", pe.Value)
}
