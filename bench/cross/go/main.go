// Command crosssort times one Go sort of n random int64 for the
// cross-ecosystem comparison in scripts/crosssort (see its README.md).
//
//	go run ./scripts/crosssort/go <impl> <n> <reps>
//
// impl is magpie2 (magpie.Sort, 2 workers), magpie1 (1 worker),
// magpie2-inplace (magpie.Sort with InPlace, 2 workers) or slices (slices.Sort).
// It prints one line "<impl> <milliseconds>" per timed sort.
package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

// warmup sorts run before the timed ones, as in the Rust and Java programs.
const warmup = 5

func main() {
	if len(os.Args) != 4 {
		fail("usage: crosssort <impl> <n> <reps>")
	}
	impl := os.Args[1]
	n, err1 := strconv.Atoi(os.Args[2])
	reps, err2 := strconv.Atoi(os.Args[3])
	if err1 != nil || err2 != nil {
		fail("n and reps must be integers")
	}
	// Two Ps on the 2-vCPU machine, whatever the environment says.
	runtime.GOMAXPROCS(2)

	var sort func([]int64)
	switch impl {
	case "magpie2", "magpie2-inplace":
		p := forkjoin.New(forkjoin.WithParallelism(2))
		defer p.Close()
		if impl == "magpie2" {
			sort = func(s []int64) { magpie.Sort(p, s) }
		} else {
			sort = func(s []int64) { magpie.Sort(p, s, magpie.InPlace()) }
		}
	case "magpie1":
		p := forkjoin.New(forkjoin.WithParallelism(1))
		defer p.Close()
		sort = func(s []int64) { magpie.Sort(p, s) }
	case "slices":
		sort = slices.Sort[[]int64]
	default:
		fail("unknown impl " + impl)
	}

	input := make([]int64, n)
	seed := uint64(42)
	for i := range input {
		input[i] = int64(splitmix64(&seed))
	}
	s := make([]int64, n)
	for i := 0; i < warmup+reps; i++ {
		copy(s, input) // not timed
		start := time.Now()
		sort(s)
		d := time.Since(start)
		if !slices.IsSorted(s) {
			fail(impl + ": result not sorted")
		}
		if i >= warmup {
			fmt.Printf("%s %.3f\n", impl, float64(d.Nanoseconds())/1e6)
		}
	}
}

// splitmix64 is the generator all three programs use, so that they sort
// the same uniformly random 64-bit values.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(1)
}
