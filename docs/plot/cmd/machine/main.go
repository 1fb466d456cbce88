// Command machine prints the facts about this machine that benchmark
// figures depend on: CPU model, physical and logical cores and caches (from
// cpuid), the cores Go can use, the Go version and the memory size.
//
//	cd docs/plot && go run ./cmd/machine
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

func main() {
	c := cpuid.CPU
	fmt.Printf("cpu:            %s (%s, family %d model %d)\n", strings.TrimSpace(c.BrandName), c.VendorString, c.Family, c.Model)
	fmt.Printf("cores:          %d physical, %d logical (%d threads per core), per cpuid\n", c.PhysicalCores, c.LogicalCores, c.ThreadsPerCore)
	fmt.Printf("usable by Go:   runtime.NumCPU() = %d, GOMAXPROCS = %d\n", runtime.NumCPU(), runtime.GOMAXPROCS(0))
	if runtime.NumCPU() < c.LogicalCores {
		// In a VM or a container cpuid describes the host's package; the
		// benchmarks can use only what the OS gives this process.
		fmt.Printf("note:           cpuid sees the host package; this process may use %d CPUs\n", runtime.NumCPU())
	}
	fmt.Printf("caches:         L1d %s, L2 %s, L3 %s, line %d B\n", size(c.Cache.L1D), size(c.Cache.L2), size(c.Cache.L3), c.CacheLine)
	fmt.Printf("memory:         %s\n", memTotal())
	fmt.Printf("go:             %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func size(b int) string {
	switch {
	case b <= 0:
		return "unknown"
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	default:
		return fmt.Sprintf("%d KiB", b>>10)
	}
}

// memTotal reads MemTotal from /proc/meminfo (Linux); elsewhere it says so.
func memTotal() string {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return "unknown (no /proc/meminfo)"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			var kb int64
			if _, err := fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb); err == nil {
				return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
	}
	return "unknown"
}
