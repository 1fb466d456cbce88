package bench

import (
	"cmp"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// TestBenchImplementations checks, on small inputs, that every
// implementation the benchmarks time computes the right answer: a fast
// wrong baseline would make every ratio in docs/benchmarks.md meaningless.
// (The benchmarks check their own full-size results too, after timing.)
func TestBenchImplementations(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()

	t.Run("fib", func(t *testing.T) {
		want := benchFibSeq(18)
		require.Equal(t, want, forkjoin.Invoke(p, benchFibTask{18, 0}.Compute))
		require.Equal(t, want, forkjoin.Invoke(p, benchFibTask{18, 10}.Compute))
		require.Equal(t, want, forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return fibJoin(w, 18) }))
		require.Equal(t, want, forkjoin.Invoke(p, fibFuture{18}.Compute))
		require.Equal(t, want, fibWaitGroup(18))
		require.Equal(t, want, fibErrGroup(18))
		require.Equal(t, want, fibConc(18))
		for _, bl := range goroutineBaselines {
			require.Equal(t, want, fibGroup(bl.newGroup, 18, 10), bl.name)
		}
		require.Equal(t, 4180, fibForks(18, 0)) // fib(19)-1 internal nodes
	})

	t.Run("sort", func(t *testing.T) {
		r := benchRand(10)
		src := make([]int64, 50_000)
		for i := range src {
			src[i] = r.Int64N(1000)
		}
		want := slices.Clone(src)
		slices.Sort(want)
		recs := make([]bRec, 50_000)
		for i := range recs {
			recs[i] = bRec{Key: r.Int64N(500), ID: int64(i)}
		}
		wantRecs := slices.Clone(recs)
		slices.SortStableFunc(wantRecs, cmpBRec)
		for _, bl := range goroutineBaselines {
			s := slices.Clone(src)
			mergeSortOrdered(bl.newGroup, s, make([]int64, len(s)), 1000)
			require.Equal(t, want, s, bl.name)
			rs := slices.Clone(recs)
			mergeSortStable(bl.newGroup, rs, make([]bRec, len(rs)), cmpBRec, 1000)
			require.Equal(t, wantRecs, rs, bl.name)
			require.True(t, benchStableSorted(rs))
		}
		require.False(t, benchStableSorted([]bRec{{Key: 1, ID: 2}, {Key: 1, ID: 1}}))
	})

	t.Run("sum", func(t *testing.T) {
		const n = 100_003
		want := benchSumRange(0, n)
		require.Equal(t, want, forkjoin.Invoke(p, sumTask{0, n, task.Adaptive()}.Compute))
		var got int64
		for _, c := range benchChunks(n) {
			got += benchSumRange(c[0], c[1])
		}
		require.Equal(t, want, got)
		require.Equal(t, sumWant(), closedFormCheck()) // the closed form used at 1e8
	})

	t.Run("queens", func(t *testing.T) {
		const all = 1<<8 - 1 // 8-Queens: 92 solutions
		require.Equal(t, 92, queensSeq(all, 0, 0, 0))
		require.Equal(t, 92, forkjoin.Invoke(p, queensTask{all: all, cand: all}.Compute))
		require.Equal(t, 92, forkjoin.Invoke(p, queensTask{all: all, cand: all, adaptive: true}.Compute))
		for _, bl := range goroutineBaselines {
			require.Equal(t, 92, queensGroup(bl.newGroup, all, 0, 0, 0, 0), bl.name)
		}
	})

	t.Run("matmul", func(t *testing.T) {
		// The implementations work on blocks of a matN-stride matrix; check
		// them on the top-left 256x256 block against the textbook loop.
		const s = 256
		a, b := benchFloats(matN*matN, 11), benchFloats(matN*matN, 12)
		want := make([]float64, s*s)
		for i := range s {
			for j := range s {
				for k := range s {
					want[i*s+j] += a[i*matN+k] * b[k*matN+j]
				}
			}
		}
		check := func(name string, c []float64) {
			for i := range s {
				for j := range s {
					require.InDelta(t, want[i*s+j], c[i*matN+j], 1e-6*want[i*s+j], name)
				}
			}
		}
		c := make([]float64, matN*matN)
		mmSeq(c, a, b, s)
		check("seq", c)
		clear(c)
		forkjoin.Invoke(p, mmTask{c, a, b, s}.Compute)
		check("magpie", c)
		for _, bl := range goroutineBaselines {
			clear(c)
			mmGroup(bl.newGroup, c, a, b, s)
			check(bl.name, c)
		}
	})

	t.Run("tree", func(t *testing.T) {
		want := utsSeq(utsRoot)
		require.Equal(t, utsNodes, want.nodes)
		// The shape the docs state: the largest root subtree holds 81.5% of
		// the nodes, the first half of the root's children 93.4%, and the
		// tree is 363 levels deep.
		largest, firstHalf := 0, 0
		for i := range utsRootKids {
			n := utsSeq(utsRoot.child(i)).nodes
			largest = max(largest, n)
			if i < utsRootKids/2 {
				firstHalf += n
			}
		}
		require.InDelta(t, 0.815, float64(largest)/utsNodes, 0.0005)
		require.InDelta(t, 0.934, float64(firstHalf)/utsNodes, 0.0005)
		require.Equal(t, 363, utsLevels(utsRoot))
		require.Equal(t, want, forkjoin.Invoke(p, utsMagpie))
		require.Equal(t, want, utsTopLevel(p))
		require.Equal(t, want, utsStatic(goroutineBaselines[0].newGroup()))
		for _, bl := range goroutineBaselines {
			require.Equal(t, want, utsGroup(bl.newGroup, utsRoot), bl.name)
		}
	})

	t.Run("worklist", func(t *testing.T) {
		const leaves, steps = 100, 16
		want := make([]uint64, leaves)
		for i := range want {
			workListLeaf(want, steps, i)
		}
		out := make([]uint64, leaves)
		workListSpawn(p, out, steps)
		require.Equal(t, want, out)
		out = make([]uint64, leaves)
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int { workListFork(w, out, steps); return 0 })
		require.Equal(t, want, out)
		for _, bl := range goroutineBaselines {
			out = make([]uint64, leaves)
			workListGroup(bl.newGroup(), out, steps)
			require.Equal(t, want, out, bl.name)
		}
	})

	t.Run("submitFrom", func(t *testing.T) {
		for _, producers := range []int{1, 4, 16} {
			seen := make([]atomic.Int32, 1000)
			submitFrom(producers, len(seen), func(i int) { seen[i].Add(1) })
			for i := range seen {
				require.Equal(t, int32(1), seen[i].Load(), "index %d, %d producers", i, producers)
			}
		}
	})

	t.Run("seqBatches", func(t *testing.T) {
		in := make([]int, 3*seqBatch+5)
		for i := range in {
			in[i] = i
		}
		parts := seqBatches(slices.Values(in), func(batch []int) []int { return slices.Clone(batch) })
		require.Len(t, parts, 4)
		require.Equal(t, in, slices.Concat(parts...))
	})

	t.Run("helpers", func(t *testing.T) {
		// BenchmarkReduceWith's waitgroup merges per-chunk histograms; the
		// merge must equal the one sequential fold.
		in := benchFloats(10_001, 7)
		want := seqReduce(in, new(histBuckets), histAdd)
		hs := chunkResults(len(in), func(lo, hi int) *histBuckets { return seqReduce(in[lo:hi], new(histBuckets), histAdd) })
		require.Equal(t, want, seqReduce(hs, new(histBuckets), histMerge))
		require.Equal(t, want, magpie.ReduceWith(p, in, func() *histBuckets { return new(histBuckets) }, histAdd, histMerge))
		total := 0
		for _, c := range want {
			total += c
		}
		require.Equal(t, len(in), total)
		require.Equal(t, 4, fmtHex(fmtBuf(), 0xbeef))
	})

	t.Run("scan", func(t *testing.T) {
		// BenchmarkScan's implementations against the plain loop, on an
		// input that spans several of Scan's blocks (256 KiB, 32,768
		// int64) and an odd tail.
		in := make([]int64, 3*32_768+12_345)
		for i := range in {
			in[i] = int64(i%7) - 3
		}
		want := slices.Clone(in)
		for i := 1; i < len(want); i++ {
			want[i] += want[i-1]
		}
		for name, scan := range map[string]func(s []int64){
			"seq-func":  func(s []int64) { seqScanFunc(s, addInt64) },
			"magpie":    func(s []int64) { magpie.Scan(p, s, addInt64) },
			"prefixsum": func(s []int64) { magpie.PrefixSum(p, s) },
			"waitgroup": scanWaitGroup,
		} {
			s := slices.Clone(in)
			scan(s)
			i := 0
			for i < len(s) && s[i] == want[i] {
				i++
			}
			require.Equal(t, len(s), i, "%s: first wrong element (of %d)", name, len(s))
		}
	})

	t.Run("ceiling", func(t *testing.T) {
		require.NotZero(t, ceilingParallel()) // distinct seeds per part: the parts cannot cancel out
		require.NotZero(t, aluSpin(10, 0))
	})

	t.Run("benchChunks", func(t *testing.T) {
		for _, n := range []int{0, 1, 7, 1000} {
			covered := 0
			for _, c := range benchChunks(n) {
				require.Equal(t, covered, c[0])
				require.Less(t, c[0], c[1])
				covered = c[1]
			}
			require.Equal(t, n, covered)
		}
	})
}

// closedFormCheck sums i*i%7 over 1e8 indices the slow way, in parallel
// chunks on the test's goroutines, to validate sumWant once.
func closedFormCheck() int64 {
	parts := make([]int64, len(benchChunks(sumN)))
	forChunks(goroutineBaselines[0].newGroup(), sumN, func(k, lo, hi int) { parts[k] = benchSumRange(lo, hi) })
	return benchSumOf(parts)
}

func benchSumOf[T cmp.Ordered](xs []T) T {
	var s T
	for _, x := range xs {
		s += x
	}
	return s
}

// utsLevels is the number of levels of n's subtree.
func utsLevels(n utsNode) int {
	deepest := 0
	for i := range n.kids() {
		deepest = max(deepest, utsLevels(n.child(i)))
	}
	return 1 + deepest
}
