// Command cross times the Go side of the cross-ecosystem comparison in
// bench/cross (see its README.md): magpie and the plain Go way of doing
// the same, on the workloads the Java and Rust programs beside it run with
// the same parameters and inputs.
//
//	cross <workload> <workers> <warmup> <reps>
//
// workload is fib30, fib40, sort, sum or tasks (workloads.go); workers is
// the pool size and GOMAXPROCS (1 or 2). The sequential implementations
// run only when workers is 1. Every implementation runs warmup untimed
// times, then reps timed times, the implementations taking turns. It prints
// one line "go <workload> <impl> <workers> <milliseconds>" per timed run and
// exits 1 if a result is wrong.
//
// This program imports only the standard library and magpie, so it builds
// in whichever module holds bench/cross.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
)

// impl is one implementation of a workload: run does one timed run and
// returns its time, preparing its input untimed and checking its result.
type impl struct {
	name string
	run  func() time.Duration
	// once: a run takes seconds (a goroutine per fork), so it runs one
	// warmup and one timed run per process whatever warmup and reps say.
	once bool
}

func main() {
	if len(os.Args) != 5 {
		fail("usage: cross <workload> <workers> <warmup> <reps>")
	}
	workload := os.Args[1]
	workers, err1 := strconv.Atoi(os.Args[2])
	warmup, err2 := strconv.Atoi(os.Args[3])
	reps, err3 := strconv.Atoi(os.Args[4])
	if err1 != nil || err2 != nil || err3 != nil || workers < 1 || warmup < 0 || reps < 1 {
		fail("cross: workers, warmup and reps must be integers (workers, reps >= 1)")
	}
	build, ok := workloads[workload]
	if !ok {
		fail("cross: unknown workload " + workload)
	}
	// One GOMAXPROCS per process, the size of the pool.
	runtime.GOMAXPROCS(workers)
	p := forkjoin.New(forkjoin.WithParallelism(workers))
	defer p.Close()

	impls := build(p, workers)
	for _, im := range impls {
		for range im.warmups(warmup) {
			im.run()
		}
	}
	for r := range reps {
		for _, im := range impls {
			if im.once && r > 0 {
				continue
			}
			d := im.run()
			fmt.Printf("go %s %s %d %.3f\n", workload, im.name, workers, float64(d.Nanoseconds())/1e6)
		}
	}
}

// warmups is how many of the warmup runs asked for im makes.
func (im impl) warmups(warmup int) int {
	if im.once {
		return min(warmup, 1)
	}
	return warmup
}

// timed returns the time fn takes.
func timed(fn func()) time.Duration {
	start := time.Now()
	fn()
	return time.Since(start)
}

// splitmix64 is the generator all three programs use, so that they work on
// the same values.
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
