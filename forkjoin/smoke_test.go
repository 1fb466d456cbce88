package forkjoin

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func fibSeq(n int) int {
	if n < 2 {
		return n
	}
	return fibSeq(n-1) + fibSeq(n-2)
}

func fibJoin(w *Worker, n int) int {
	if n < 2 {
		return n
	}
	a, b := Join(w, func(w *Worker) int { return fibJoin(w, n-1) }, func(w *Worker) int { return fibJoin(w, n-2) })
	return a + b
}

type fibTask int

func (t fibTask) Compute(w *Worker) int {
	n := int(t)
	if n < 2 {
		return n
	}
	a, b := JoinTasks[int, int](w, fibTask(n-1), fibTask(n-2))
	return a + b
}

func fibFork(w *Worker, n int) int {
	if n < 2 {
		return n
	}
	f := Fork(w, func(w *Worker) int { return fibFork(w, n-1) })
	return fibFork(w, n-2) + f.Join(w)
}

func TestSmokeFib(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, par := range []int{1, 2, 4} {
		for _, m := range []Mode{LIFO, FIFO} {
			p := New(WithParallelism(par), WithMode(m))
			require.Equal(t, fibSeq(20), Invoke(p, func(w *Worker) int { return fibJoin(w, 20) }))
			require.Equal(t, fibSeq(20), Invoke(p, func(w *Worker) int { return fibTask(20).Compute(w) }))
			require.Equal(t, fibSeq(20), Invoke(p, func(w *Worker) int { return fibFork(w, 20) }))
			p.Close()
			t.Log(p.Stats())
		}
	}
}

func BenchmarkFibSeq(b *testing.B) {
	for i := 0; i < b.N; i++ {
		fibSeq(30)
	}
}

func BenchmarkFibJoin1(b *testing.B) {
	p := New(WithParallelism(1))
	defer p.Close()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Invoke(p, func(w *Worker) int { return fibJoin(w, 30) })
	}
}

func BenchmarkFibTask1(b *testing.B) {
	p := New(WithParallelism(1))
	defer p.Close()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Invoke(p, func(w *Worker) int { return fibTask(30).Compute(w) })
	}
}

func BenchmarkFibFork1(b *testing.B) {
	p := New(WithParallelism(1))
	defer p.Close()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Invoke(p, func(w *Worker) int { return fibFork(w, 30) })
	}
}
