package bench

import (
	"os"
	"runtime"
	"sync"
	"testing"
)

// The machine's ceiling: what P busy goroutines can get from this machine
// at the moment of measurement. On a shared 2-vCPU VM two busy cores are
// often not two cores (a pure ALU loop pinned to each vCPU takes 33 ms
// alone and 52-57 ms when both run), so no implementation can reach 2x
// then. BenchmarkCeiling times the same embarrassingly parallel ALU loop
// (aluSpin: no memory traffic, no synchronisation) on one goroutine and
// split over GOMAXPROCS goroutines; the ratio of the two is the best
// speedup any implementation of a family could have shown in that round.
// scripts/bench runs one ceiling sample per GOMAXPROCS process before each
// round of every family, and docs/plot reports each family's speedup beside
// the ceiling of its own rounds.

const (
	// ceilingWork is the loop's total iteration count: about 15 ms on one
	// core of the development machine (~0.9 ns per iteration), so that a
	// sample (both implementations) costs a few tens of ms.
	ceilingWork = 8 << 20
	// benchFamilyEnv names the scripts/bench family a ceiling sample
	// belongs to; it becomes the family= part of the benchmark's name.
	benchFamilyEnv = "MAGPIE_BENCH_FAMILY"
)

var aluSink uint64

// aluSpin runs n steps of a xorshift generator from seed: a dependent chain
// of shifts and xors that touches no memory, the pure computation both the
// ceiling and the calibrated leaves of the flat loops are made of.
//
//go:noinline
func aluSpin(n int, seed uint64) uint64 {
	x := seed | 1
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// ceilingParallel runs aluSpin over ceilingWork iterations split into one
// part per GOMAXPROCS, each on its own goroutine, and combines the parts.
func ceilingParallel() uint64 {
	p := runtime.GOMAXPROCS(0)
	parts := make([]uint64, p)
	var wg sync.WaitGroup
	for k := range p {
		wg.Go(func() {
			parts[k] = aluSpin(ceilingWork*(k+1)/p-ceilingWork*k/p, uint64(2*k+1))
		})
	}
	wg.Wait()
	var x uint64
	for _, v := range parts {
		x ^= v
	}
	return x
}

// BenchmarkCeiling: impl=seq is the loop on one goroutine, impl=parallel
// the same iterations over GOMAXPROCS goroutines; seq's time over
// parallel's, in the same process, is the ceiling. Named
// Ceiling/family=NAME/impl=... when scripts/bench sets MAGPIE_BENCH_FAMILY.
func BenchmarkCeiling(b *testing.B) {
	prefix := ""
	if fam := os.Getenv(benchFamilyEnv); fam != "" {
		prefix = "family=" + fam + "/"
	}
	b.Run(prefix+"impl=seq", func(b *testing.B) {
		checkProcs(b)
		for b.Loop() {
			aluSink = aluSpin(ceilingWork, 1)
		}
	})
	b.Run(prefix+"impl=parallel", func(b *testing.B) {
		checkProcs(b)
		for b.Loop() {
			aluSink = ceilingParallel()
		}
	})
}
