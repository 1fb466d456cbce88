package magpie_test

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

func ExampleSort() {
	s := []int{5, 2, 8, 1, 9, 3}
	magpie.Sort(nil, s) // nil: the default pool
	fmt.Println(s)
	// Output: [1 2 3 5 8 9]
}

func ExampleSort_pool() {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	s := make([]int, 100_000)
	for i := range s {
		s[i] = (i * 7919) % len(s) // a permutation of 0..n-1
	}
	magpie.Sort(p, s) // ints: a radix sort with a buffer of len(s)
	fmt.Println(s[0], s[1], s[len(s)-1])
	// Output: 0 1 99999
}

// ExampleInPlace sorts without the radix sort's buffer: InPlace keeps the
// in-place quicksort, and Grain sets its sequential leaves.
func ExampleInPlace() {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	s := make([]int64, 100_000)
	for i := range s {
		s[i] = int64(len(s) - i)
	}
	magpie.Sort(p, s, magpie.InPlace(), magpie.Grain(4096))
	fmt.Println(s[0], s[1], s[len(s)-1])
	// Output: 1 2 100000
}

func ExampleSortFunc() {
	words := []string{"Magpie", "crow", "Jay", "raven"}
	magpie.SortFunc(nil, words, func(a, b string) int {
		return cmp.Compare(strings.ToLower(a), strings.ToLower(b))
	})
	fmt.Println(words)
	// Output: [crow Jay Magpie raven]
}

func ExampleSortStableFunc() {
	type bird struct {
		name  string
		wings int
	}
	birds := []bird{{"magpie", 2}, {"kiwi", 0}, {"crow", 2}, {"emu", 0}, {"jay", 2}}
	magpie.SortStableFunc(nil, birds, func(a, b bird) int { return cmp.Compare(a.wings, b.wings) })
	fmt.Println(birds) // equal keys keep their input order
	// Output: [{kiwi 0} {emu 0} {magpie 2} {crow 2} {jay 2}]
}

// Inside a task, pass the task's worker: the sort runs as part of the same
// computation instead of submitting to the pool and waiting.
func ExampleSort_insideTask() {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	a, b := []int{3, 1, 2}, []float64{2.5, -1, 0}
	forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
		forkjoin.Join(w,
			func(w *forkjoin.Worker) struct{} { magpie.Sort(w, a); return struct{}{} },
			func(w *forkjoin.Worker) struct{} { magpie.Sort(w, b); return struct{}{} })
		return struct{}{}
	})
	fmt.Println(a, b)
	// Output: [1 2 3] [-1 0 2.5]
}
