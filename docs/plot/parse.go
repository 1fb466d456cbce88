package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A result set is the content of one benchmark output file, grouped the way
// the suite names its benchmarks: Family[/key=value...]/impl=NAME[-procs].

// key identifies one measured configuration.
type key struct {
	Workload string // benchmark name without "Benchmark", the impl part and the procs suffix
	Impl     string // value of the impl= key
	Procs    int    // GOMAXPROCS (the -N suffix; 1 when absent)
}

// results holds every sample of every metric, and the order in which
// workloads and implementations first appeared (the suite's own order,
// which puts seq first).
type results struct {
	Samples   map[key]map[string][]float64 // unit -> samples
	Workloads []string
	Impls     map[string][]string // workload -> impls in order of appearance
	Procs     []int               // ascending
	Config    map[string]string   // goos, goarch, cpu, pkg ... from the header
}

// parse reads the standard Go benchmark format: configuration lines
// "key: value" and result lines "BenchmarkName N value unit [value unit...]".
// Lines it does not understand (PASS, ok, log output) are skipped.
func parse(r io.Reader) (*results, error) {
	res := &results{
		Samples: map[key]map[string][]float64{},
		Impls:   map[string][]string{},
		Config:  map[string]string{},
	}
	seenProcs := map[int]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if k, v, ok := strings.Cut(text, ":"); ok && !strings.HasPrefix(text, "Benchmark") &&
			!strings.ContainsAny(k, " \t") {
			res.Config[k] = strings.TrimSpace(v)
			continue
		}
		f := strings.Fields(text)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue // "BenchmarkX" log line, not a result
		}
		k, ok := splitName(f[0])
		if !ok {
			continue // not a Workload/impl=NAME benchmark
		}
		m := res.Samples[k]
		if m == nil {
			m = map[string][]float64{}
			res.Samples[k] = m
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: bad value %q: %v", line, f[i], err)
			}
			m[f[i+1]] = append(m[f[i+1]], v)
		}
		if isCeiling(k.Workload) {
			continue // the machine's ceiling, not a workload: see ceiling
		}
		if !slices.Contains(res.Workloads, k.Workload) {
			res.Workloads = append(res.Workloads, k.Workload)
		}
		if !slices.Contains(res.Impls[k.Workload], k.Impl) {
			res.Impls[k.Workload] = append(res.Impls[k.Workload], k.Impl)
		}
		if !seenProcs[k.Procs] {
			seenProcs[k.Procs] = true
			res.Procs = append(res.Procs, k.Procs)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	sort.Ints(res.Procs)
	return res, nil
}

// splitName turns "BenchmarkSmall/op=map/n=10/impl=magpie-2" into
// {Workload: "Small/op=map/n=10", Impl: "magpie", Procs: 2}.
func splitName(name string) (key, bool) {
	name = strings.TrimPrefix(name, "Benchmark")
	procs := 1
	if i := strings.LastIndexByte(name, '-'); i >= 0 {
		if n, err := strconv.Atoi(name[i+1:]); err == nil && n > 0 {
			procs, name = n, name[:i]
		}
	}
	var parts []string
	impl := ""
	for _, p := range strings.Split(name, "/") {
		if v, ok := strings.CutPrefix(p, "impl="); ok {
			impl = v
			continue
		}
		parts = append(parts, p)
	}
	if impl == "" || len(parts) == 0 {
		return key{}, false
	}
	return key{Workload: strings.Join(parts, "/"), Impl: impl, Procs: procs}, true
}

// median returns the median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread returns the largest distance of a sample from the median, as a
// fraction of the median: the "±" beside a figure.
func spread(xs []float64) float64 {
	m := median(xs)
	if m == 0 {
		return 0
	}
	d := 0.0
	for _, x := range xs {
		d = max(d, abs(x-m))
	}
	return d / m
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// seqTime returns the sequential time of a workload that speedups at procs
// are computed against. Sequential code runs one goroutine, so its time
// does not depend on GOMAXPROCS; on a shared VM it still varies with the
// vCPU it lands on and with neighbours, which can only slow it down. So
// seqTime is the smallest of its medians over all GOMAXPROCS measured: the
// conservative base, which never inflates a speedup. The small-input
// workloads, which compare overheads at each GOMAXPROCS, use their own.
func (r *results) seqTime(wl string, procs int) (float64, bool) {
	if strings.HasPrefix(wl, "Small/") {
		return r.stat(key{wl, seqImpl, procs}, "ns/op")
	}
	best, found := 0.0, false
	for _, p := range r.Procs {
		if t, ok := r.stat(key{wl, seqImpl, p}, "ns/op"); ok && (!found || t < best) {
			best, found = t, true
		}
	}
	return best, found
}

// stat returns the median of unit for k, and whether it was measured.
func (r *results) stat(k key, unit string) (float64, bool) {
	xs := r.Samples[k][unit]
	if len(xs) == 0 {
		return 0, false
	}
	return median(xs), true
}

// The machine's ceiling (BenchmarkCeiling in bench/ceiling_test.go): the
// same pure ALU loop timed on one goroutine (impl=seq) and split over
// GOMAXPROCS goroutines (impl=parallel) in one process. scripts/bench runs
// one such process per GOMAXPROCS before every round of every family, named
// Ceiling/family=NAME/impl=...; by hand it is Ceiling/impl=....

const (
	ceilingName     = "Ceiling"
	ceilingSeq      = "seq"
	ceilingParallel = "parallel"
)

func isCeiling(wl string) bool {
	return wl == ceilingName || strings.HasPrefix(wl, ceilingName+"/")
}

// family is the schedule family a workload belongs to: the first part of
// its name, which is its benchmark function's ("SubmitFrom/producers=4" is
// in SubmitFrom).
func family(wl string) string {
	f, _, _ := strings.Cut(wl, "/")
	return f
}

// ceilingStat is the machine's ceiling for one family at one GOMAXPROCS.
type ceilingStat struct {
	Median float64 // median over rounds of one-goroutine time / P-goroutine time
	Spread float64 // the largest distance of a round's ratio from Median, as a fraction of it
	Rounds int
}

// ceiling returns the ceiling measured in the rounds of wl's family at
// procs, or, in a run that does not label its ceiling samples by family
// (a run by hand), the run's unlabelled Ceiling samples. Each round's
// ratio is taken within its process (the k-th seq sample over the k-th
// parallel one: the two ran back to back), so the ceiling follows the
// machine's state round by round; the median is over rounds.
func (r *results) ceiling(wl string, procs int) (ceilingStat, bool) {
	for _, name := range []string{ceilingName + "/family=" + family(wl), ceilingName} {
		seq := r.Samples[key{name, ceilingSeq, procs}]["ns/op"]
		par := r.Samples[key{name, ceilingParallel, procs}]["ns/op"]
		n := min(len(seq), len(par))
		if n == 0 {
			continue
		}
		ratios := make([]float64, 0, n)
		for i := range n {
			if par[i] > 0 {
				ratios = append(ratios, seq[i]/par[i])
			}
		}
		if len(ratios) == 0 {
			continue
		}
		return ceilingStat{median(ratios), spread(ratios), len(ratios)}, true
	}
	return ceilingStat{}, false
}

// ceilingFamilies lists the families that have ceiling samples of their
// own, in the order of the run.
func (r *results) ceilingFamilies() []string {
	var out []string
	for _, wl := range r.Workloads {
		f := family(wl)
		if slices.Contains(out, f) {
			continue
		}
		for _, procs := range r.Procs {
			if _, ok := r.Samples[key{ceilingName + "/family=" + f, ceilingSeq, procs}]; ok {
				out = append(out, f)
				break
			}
		}
	}
	return out
}
