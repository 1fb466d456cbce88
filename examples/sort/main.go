// Command sort sorts N random int64 with magpie.Sort, checks the result
// against slices.Sort on a copy of the same input, and prints both times,
// measured in the same run, and the speedup.
//
//	go run ./examples/sort                 # 10M elements, all cores
//	go run ./examples/sort -n 1000000 -p 2 -rounds 5
//
// With -rounds > 1 the two sorts alternate on fresh copies and the medians
// are reported, which steadies the figures on a busy machine.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

func main() {
	n := flag.Int("n", 10_000_000, "number of int64 to sort")
	par := flag.Int("p", 0, "workers (0: GOMAXPROCS)")
	rounds := flag.Int("rounds", 1, "alternating rounds of both sorts; medians are reported")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *n < 0 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "sort: -n must be >= 0 and -rounds >= 1")
		os.Exit(2)
	}

	pool := forkjoin.New(forkjoin.WithParallelism(*par))
	defer pool.Close()

	rng := rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15))
	input := make([]int64, *n)
	for i := range input {
		input[i] = rng.Int64()
	}
	want := make([]int64, *n)
	got := make([]int64, *n)

	var seqTimes, parTimes []time.Duration
	for r := range *rounds {
		copy(want, input)
		runtime.GC()
		start := time.Now()
		slices.Sort(want)
		seqTimes = append(seqTimes, time.Since(start))

		copy(got, input)
		runtime.GC()
		start = time.Now()
		magpie.Sort(pool, got)
		parTimes = append(parTimes, time.Since(start))

		if !slices.Equal(got, want) {
			fmt.Fprintf(os.Stderr, "sort: round %d: magpie.Sort differs from slices.Sort\n", r)
			os.Exit(1)
		}
	}
	seq, par_ := median(seqTimes), median(parTimes)
	fmt.Printf("sorted %d int64 on %d workers (GOMAXPROCS %d), result checked against slices.Sort\n",
		*n, pool.Parallelism(), runtime.GOMAXPROCS(0))
	fmt.Printf("slices.Sort  %v\n", seq.Round(time.Microsecond))
	fmt.Printf("magpie.Sort  %v\n", par_.Round(time.Microsecond))
	if par_ > 0 {
		fmt.Printf("speedup      %.2fx\n", float64(seq)/float64(par_))
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
