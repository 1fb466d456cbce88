package magpie_test

import (
	"fmt"
	"strings"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

func ExampleFor() {
	squares := make([]int, 10)
	magpie.For(nil, len(squares), func(i int) { squares[i] = i * i })
	fmt.Println(squares)
	// Output: [0 1 4 9 16 25 36 49 64 81]
}

func ExampleFor_expensiveIterations() {
	// Ten expensive iterations: without options For would start them on
	// the caller and hand the rest to the pool after about 50 µs;
	// Grain(1) makes each iteration a task from the start.
	results := make([]int, 10)
	magpie.For(nil, len(results), func(i int) {
		n := 0
		for j := range 100_000 {
			n += (i + j) % 3
		}
		results[i] = n
	}, magpie.Grain(1))
	fmt.Println(results[0], results[9])
	// Output: 99999 99999
}

func ExampleForRange() {
	// Sum 0..999999 with one partial sum per piece.
	const n = 1_000_000
	partial := make([]int, n/1000)
	magpie.ForRange(nil, n/1000, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			for i := b * 1000; i < (b+1)*1000; i++ {
				partial[b] += i
			}
		}
	})
	fmt.Println(magpie.Sum(nil, partial))
	// Output: 499999500000
}

func ExampleMap() {
	words := strings.Fields("fork join steal help park")
	upper := magpie.Map(nil, words, strings.ToUpper)
	fmt.Println(upper)
	// Output: [FORK JOIN STEAL HELP PARK]
}

func ExampleMapInPlace() {
	xs := []float64{1, 2, 3, 4}
	magpie.MapInPlace(nil, xs, func(x float64) float64 { return x*1.5 + 1 })
	fmt.Println(xs)
	// Output: [2.5 4 5.5 7]
}

func ExampleReduce() {
	// Longest word and its length: combine keeps the leftmost on ties,
	// as the sequential fold does.
	type best struct {
		word string
	}
	words := strings.Fields("a fork join pool steals tasks from busy workers")
	longest := magpie.Reduce(nil, words, best{},
		func(b best, w string) best {
			if len(w) > len(b.word) {
				return best{w}
			}
			return b
		},
		func(a, b best) best {
			if len(b.word) > len(a.word) {
				return b
			}
			return a
		})
	fmt.Println(longest.word)
	// Output: workers
}

func ExampleReduceRange() {
	// The first index where f is largest over [0, n). The leaf's loop
	// computes f inline, with nothing called per index; combine keeps the
	// left piece's best on ties, as the sequential loop does.
	f := func(i int) int { return i * 7919 % 1000 }
	type best struct{ i, v int }
	b := magpie.ReduceRange(nil, 100_000, best{-1, -1},
		func(acc best, lo, hi int) best {
			for i := lo; i < hi; i++ {
				if v := f(i); v > acc.v {
					acc = best{i, v}
				}
			}
			return acc
		},
		func(a, b best) best {
			if b.v > a.v {
				return b
			}
			return a
		})
	fmt.Println(b.i, b.v)
	// Output: 321 999
}

func ExampleFilter() {
	xs := []int{5, 8, 13, 21, 34, 55, 89, 144}
	even := magpie.Filter(nil, xs, func(x int) bool { return x%2 == 0 })
	fmt.Println(even)
	// Output: [8 34 144]
}

func ExampleCount() {
	xs := []int{5, 8, 13, 21, 34, 55, 89, 144}
	fmt.Println(magpie.Count(nil, xs, func(x int) bool { return x > 20 }))
	// Output: 5
}

func ExampleSum() {
	fmt.Println(magpie.Sum(nil, []float64{0.5, 1.5, 2}))
	// Output: 4
}

func ExampleMin() {
	fmt.Println(magpie.Min(nil, []int{4, -2, 7}), magpie.Max(nil, []int{4, -2, 7}))
	// Output: -2 7
}

func ExampleMax() {
	fmt.Println(magpie.Max(nil, []string{"pear", "apple", "quince"}))
	// Output: quince
}

func ExampleDo() {
	var a, b int
	magpie.Do(nil,
		func() { a = 6 * 7 },
		func() { b = 7 * 8 })
	fmt.Println(a, b)
	// Output: 42 56
}

func ExampleGrain() {
	// A fixed cutoff: pieces of at most 250 indices.
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	pieces := make([]int, 1000)
	magpie.ForRange(p, len(pieces), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			pieces[i] = hi - lo
		}
	}, magpie.Grain(250))
	fmt.Println(magpie.Max(p, pieces) <= 250)
	// Output: true
}

// A helper called from inside a task takes the task's worker and runs as
// part of the same computation.
func Example_insideATask() {
	p := forkjoin.New()
	defer p.Close()
	total := forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
		xs := magpie.Map(w, []int{1, 2, 3, 4}, func(x int) int { return x * x })
		return magpie.Sum(w, xs)
	})
	fmt.Println(total)
	// Output: 30
}

func ExampleReduceWith() {
	// Word counts in a map per piece: a map given to Reduce as its zero
	// would be shared by every piece.
	words := strings.Fields("to be or not to be that is the question to ask")
	counts := magpie.ReduceWith(nil, words, func() map[string]int { return map[string]int{} },
		func(m map[string]int, w string) map[string]int { m[w]++; return m },
		func(a, b map[string]int) map[string]int {
			for w, n := range b {
				a[w] += n
			}
			return a
		})
	fmt.Println(counts["to"], counts["be"], counts["question"])
	// Output: 3 2 1
}
