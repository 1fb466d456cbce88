package bench

import (
	"math"
	"math/bits"
	"sync"
	"testing"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// Divide and conquer beyond flat loops: N-Queens, whose subtrees differ in
// size by orders of magnitude (so static chunking fails and stealing earns
// its keep), and a cache-oblivious matrix multiply, whose recursion forks
// four ways per phase.

const (
	queensN      = 12
	queensWant   = 14200 // solutions of 12-Queens
	queensDepth  = 3     // fork for the first rows only (about a thousand tasks)
	queensMinRow = 4     // adaptive: never fork the last rows

	matN    = 1024 // BenchmarkMatMul1024: three 8 MB matrices
	matLeaf = 64   // base case: a 64x64 block product, 96 KB of operands
)

var queensSink int

// queensSeq counts the completions of a board: cols, ld and rd mark the
// columns and diagonals attacked on the next row.
func queensSeq(all, cols, ld, rd uint32) int {
	if cols == all {
		return 1
	}
	n := 0
	for avail := all &^ (cols | ld | rd); avail != 0; {
		bit := avail & -avail
		avail ^= bit
		n += queensSeq(all, cols|bit, (ld|bit)<<1, (rd|bit)>>1)
	}
	return n
}

// queensTask counts the completions that place the next queen on one of
// the columns in cand. It splits cand in two with InvokeBoth until one column
// is left, places it and descends, so forking allocates nothing.
type queensTask struct {
	all, cols, ld, rd, cand uint32
	row                     int
	adaptive                bool // split on Surplus instead of a fixed depth
}

func (t queensTask) Compute(w *forkjoin.Worker) int {
	split := t.row < queensDepth
	if t.adaptive {
		split = t.row < queensN-queensMinRow && w.Surplus() < 3
	}
	if !split {
		n := 0
		for c := t.cand; c != 0; {
			bit := c & -c
			c ^= bit
			n += queensSeq(t.all, t.cols|bit, (t.ld|bit)<<1, (t.rd|bit)>>1)
		}
		return n
	}
	if k := bits.OnesCount32(t.cand); k > 1 {
		lo := t.cand
		for range k - k/2 {
			lo &= lo - 1 // drop the lowest bits: hi part keeps k/2 of them
		}
		lo = t.cand &^ lo
		l, r := t, t
		l.cand, r.cand = lo, t.cand&^lo
		a, b := task.InvokeBoth[int, int](w, l, r)
		return a + b
	}
	if t.cand == 0 {
		return 0
	}
	bit := t.cand
	next := queensTask{all: t.all, cols: t.cols | bit, ld: (t.ld | bit) << 1, rd: (t.rd | bit) >> 1,
		row: t.row + 1, adaptive: t.adaptive}
	if next.cols == t.all {
		return 1
	}
	next.cand = t.all &^ (next.cols | next.ld | next.rd)
	return next.Compute(w)
}

// queensGroup is the goroutine baseline: one goroutine per candidate column
// for the first queensDepth rows, each writing its own slot.
func queensGroup(newGroup func() benchGroup, all, cols, ld, rd uint32, row int) int {
	if row >= queensDepth || cols == all {
		return queensSeq(all, cols, ld, rd)
	}
	avail := all &^ (cols | ld | rd)
	counts := make([]int, bits.OnesCount32(avail))
	g := newGroup()
	for k := 0; avail != 0; k++ {
		bit := avail & -avail
		avail ^= bit
		g.Go(func() {
			counts[k] = queensGroup(newGroup, all, cols|bit, (ld|bit)<<1, (rd|bit)>>1, row+1)
		})
	}
	g.Wait()
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// BenchmarkNQueens12 counts the 14200 solutions of 12-Queens.
func BenchmarkNQueens12(b *testing.B) {
	const all = 1<<queensN - 1
	run := func(b *testing.B, fn func() int) {
		b.ReportAllocs()
		b.ResetTimer()
		var got int
		for range b.N {
			got = fn()
		}
		b.StopTimer()
		if got != queensWant {
			b.Fatalf("%d-Queens: %d solutions, want %d", queensN, got, queensWant)
		}
		queensSink = got
	}
	b.Run("impl=seq", func(b *testing.B) { run(b, func() int { return queensSeq(all, 0, 0, 0) }) })
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		run(b, func() int { return forkjoin.Invoke(p, queensTask{all: all, cand: all}.Compute) })
	})
	b.Run("impl=magpie-adaptive", func(b *testing.B) {
		p := benchPool(b)
		run(b, func() int { return forkjoin.Invoke(p, queensTask{all: all, cand: all, adaptive: true}.Compute) })
	})
	for _, bl := range goroutineBaselines {
		b.Run("impl="+bl.name, func(b *testing.B) {
			run(b, func() int { return queensGroup(bl.newGroup, all, 0, 0, 0, 0) })
		})
	}
}

// A matrix view is the top-left element's offset into a row-major slice of
// stride matN; every implementation multiplies with the same kernel.

// mmKernel adds the product of the s x s blocks a and b to c.
func mmKernel(c, a, b []float64, s int) {
	for i := range s {
		crow := c[i*matN : i*matN+s]
		for k := range s {
			aik := a[i*matN+k]
			brow := b[k*matN : k*matN+s]
			brow = brow[:len(crow)]
			for j := range crow {
				crow[j] += aik * brow[j]
			}
		}
	}
}

// quadrants returns the four s/2 blocks of the s x s block at m.
func quadrants(m []float64, s int) (q11, q12, q21, q22 []float64) {
	h := s / 2
	return m, m[h:], m[h*matN:], m[h*matN+h:]
}

// mmSeq computes c += a*b recursively: C11 += A11 B11 and the three other
// independent products first, then C11 += A12 B21 and its three siblings.
func mmSeq(c, a, b []float64, s int) {
	if s <= matLeaf {
		mmKernel(c, a, b, s)
		return
	}
	h := s / 2
	c11, c12, c21, c22 := quadrants(c, s)
	a11, a12, a21, a22 := quadrants(a, s)
	b11, b12, b21, b22 := quadrants(b, s)
	mmSeq(c11, a11, b11, h)
	mmSeq(c12, a11, b12, h)
	mmSeq(c21, a21, b11, h)
	mmSeq(c22, a21, b12, h)
	mmSeq(c11, a12, b21, h)
	mmSeq(c12, a12, b22, h)
	mmSeq(c21, a22, b21, h)
	mmSeq(c22, a22, b22, h)
}

// mmTask is c += a*b for s x s blocks as a typed task; mmPair runs two of
// them in parallel, so each phase is InvokeBoth of two pairs.
type mmTask struct {
	c, a, b []float64
	s       int
}

type mmPair struct{ x, y mmTask }

func (p mmPair) Compute(w *forkjoin.Worker) struct{} {
	task.InvokeBoth[struct{}, struct{}](w, p.x, p.y)
	return struct{}{}
}

func (t mmTask) Compute(w *forkjoin.Worker) struct{} {
	if t.s <= matLeaf {
		mmKernel(t.c, t.a, t.b, t.s)
		return struct{}{}
	}
	h := t.s / 2
	c11, c12, c21, c22 := quadrants(t.c, t.s)
	a11, a12, a21, a22 := quadrants(t.a, t.s)
	b11, b12, b21, b22 := quadrants(t.b, t.s)
	task.InvokeBoth[struct{}, struct{}](w,
		mmPair{mmTask{c11, a11, b11, h}, mmTask{c12, a11, b12, h}},
		mmPair{mmTask{c21, a21, b11, h}, mmTask{c22, a21, b12, h}})
	task.InvokeBoth[struct{}, struct{}](w,
		mmPair{mmTask{c11, a12, b21, h}, mmTask{c12, a12, b22, h}},
		mmPair{mmTask{c21, a22, b21, h}, mmTask{c22, a22, b22, h}})
	return struct{}{}
}

// mmGroup is the goroutine baseline: each phase starts four goroutines.
func mmGroup(newGroup func() benchGroup, c, a, b []float64, s int) {
	if s <= matLeaf {
		mmKernel(c, a, b, s)
		return
	}
	h := s / 2
	c11, c12, c21, c22 := quadrants(c, s)
	a11, a12, a21, a22 := quadrants(a, s)
	b11, b12, b21, b22 := quadrants(b, s)
	g := newGroup()
	g.Go(func() { mmGroup(newGroup, c11, a11, b11, h) })
	g.Go(func() { mmGroup(newGroup, c12, a11, b12, h) })
	g.Go(func() { mmGroup(newGroup, c21, a21, b11, h) })
	mmGroup(newGroup, c22, a21, b12, h)
	g.Wait()
	g = newGroup()
	g.Go(func() { mmGroup(newGroup, c11, a12, b21, h) })
	g.Go(func() { mmGroup(newGroup, c12, a12, b22, h) })
	g.Go(func() { mmGroup(newGroup, c21, a22, b21, h) })
	mmGroup(newGroup, c22, a22, b22, h)
	g.Wait()
}

var matInput = sync.OnceValues(func() ([]float64, []float64) {
	return benchFloats(matN*matN, 7), benchFloats(matN*matN, 8)
})

// BenchmarkMatMul1024 multiplies two 1024x1024 float64 matrices by
// recursive quadrant splitting down to 64x64 blocks.
func BenchmarkMatMul1024(b *testing.B) {
	a, m := matInput()
	run := func(b *testing.B, fn func(c []float64)) {
		b.ReportAllocs()
		c := make([]float64, matN*matN)
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			clear(c)
			b.StartTimer()
			fn(c)
		}
		b.StopTimer()
		for _, ij := range [][2]int{{0, 0}, {matN / 3, matN - 1}, {matN - 1, matN / 2}} {
			want := 0.0
			for k := range matN {
				want += a[ij[0]*matN+k] * m[k*matN+ij[1]]
			}
			if got := c[ij[0]*matN+ij[1]]; math.Abs(got-want) > 1e-6*math.Abs(want) {
				b.Fatalf("c[%d][%d] = %v, want %v", ij[0], ij[1], got, want)
			}
		}
		flops := 2 * float64(matN) * matN * matN
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
	b.Run("impl=seq", func(b *testing.B) { run(b, func(c []float64) { mmSeq(c, a, m, matN) }) })
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		run(b, func(c []float64) { forkjoin.Invoke(p, mmTask{c, a, m, matN}.Compute) })
	})
	for _, bl := range goroutineBaselines {
		b.Run("impl="+bl.name, func(b *testing.B) {
			run(b, func(c []float64) { mmGroup(bl.newGroup, c, a, m, matN) })
		})
	}
}
