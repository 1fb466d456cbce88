package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/magpie-go/magpie
cpu: Some CPU @ 2.00GHz
# go test -run '^$' -bench '^BenchmarkFib30$' -benchmem -benchtime 1x -count 2 -cpu 1,2 -timeout 0 .
BenchmarkFib30/impl=seq         	       1	   4000000 ns/op	 3.0 ns/fork	       0 B/op	       0 allocs/op
BenchmarkFib30/impl=seq         	       1	   4200000 ns/op	 3.1 ns/fork	       0 B/op	       0 allocs/op
BenchmarkFib30/impl=magpie-join 	       1	  60000000 ns/op	 44 ns/fork	    5672 B/op	      62 allocs/op
BenchmarkFib30/impl=magpie-join-2	       1	  30000000 ns/op	 22 ns/fork	    5672 B/op	      62 allocs/op
BenchmarkFib30/impl=seq-2       	       1	   4100000 ns/op	 3.0 ns/fork	       0 B/op	       0 allocs/op
BenchmarkFib30/impl=magpie-2    	       1	  20000000 ns/op	 15 ns/fork	    5672 B/op	      62 allocs/op
BenchmarkFib30/impl=waitgroup-2 	       1	1400000000 ns/op	 1040 ns/fork	    5672 B/op	      62 allocs/op
BenchmarkSortInt64/impl=seq   	       1	 900000000 ns/op	       0 B/op	       0 allocs/op
BenchmarkSortInt64/impl=magpie	       1	 800000000 ns/op	       0 B/op	       0 allocs/op
BenchmarkSortInt64/impl=seq-2   	       1	 900000000 ns/op	       0 B/op	       0 allocs/op
BenchmarkSortInt64/impl=magpie-2	       1	 450000000 ns/op	       0 B/op	       0 allocs/op
BenchmarkSortInt64/impl=conc-2  	       1	 500000000 ns/op	       0 B/op	       0 allocs/op
BenchmarkSortInt64/impl=waitgroup-2	   1	 400000000 ns/op	       0 B/op	       0 allocs/op
BenchmarkSmall/op=map/n=10/impl=seq-2	 1000	 20 ns/op	       0 B/op	       0 allocs/op
BenchmarkSmall/op=map/n=10/impl=seq-func-2	 1000	 25 ns/op	       0 B/op	       0 allocs/op
BenchmarkSmall/op=map/n=10/impl=magpie-2	 1000	 30 ns/op	       0 B/op	       0 allocs/op
BenchmarkTuneSum/seq-2          	       1	  96513595 ns/op
--- BENCH: BenchmarkX
PASS
ok  	github.com/magpie-go/magpie	1.0s
`

func TestSplitName(t *testing.T) {
	for name, want := range map[string]key{
		"BenchmarkFib30/impl=seq":                  {"Fib30", "seq", 1},
		"BenchmarkFib30/impl=magpie-join-64":       {"Fib30", "magpie-join", 64},
		"BenchmarkSmall/op=map/n=10/impl=magpie-2": {"Small/op=map/n=10", "magpie", 2},
		"BenchmarkSmall/n=10/impl=seq-func-2":      {"Small/n=10", "seq-func", 2},
		"BenchmarkSmall/n=10/impl=seq":             {"Small/n=10", "seq", 1},
	} {
		got, ok := splitName(name)
		if !ok || got != want {
			t.Errorf("splitName(%q) = %+v, %v; want %+v", name, got, ok, want)
		}
	}
	if _, ok := splitName("BenchmarkTuneSum/seq-2"); ok {
		t.Error("a benchmark without impl= must be skipped")
	}
}

func TestParseAndMedian(t *testing.T) {
	r, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Workloads, ","); got != "Fib30,SortInt64,Small/op=map/n=10" {
		t.Errorf("workloads %s", got)
	}
	if got := strings.Join(r.Impls["Fib30"], ","); got != "seq,magpie-join,magpie,waitgroup" {
		t.Errorf("Fib30 impls %s", got)
	}
	if len(r.Procs) != 2 || r.Procs[0] != 1 || r.Procs[1] != 2 {
		t.Errorf("procs %v", r.Procs)
	}
	if r.Config["cpu"] != "Some CPU @ 2.00GHz" {
		t.Errorf("cpu %q", r.Config["cpu"])
	}
	if v, _ := r.stat(key{"Fib30", "seq", 1}, "ns/op"); v != 4100000 {
		t.Errorf("median of two samples = %v, want 4100000", v)
	}
	if v, _ := r.stat(key{"Fib30", "magpie", 2}, "ns/fork"); v != 15 {
		t.Errorf("ns/fork %v", v)
	}
	if median([]float64{3, 1, 2}) != 2 || median(nil) != 0 {
		t.Error("median")
	}
	if s := spread([]float64{90, 100, 110}); s < 0.099 || s > 0.101 {
		t.Errorf("spread %v", s)
	}
}

func TestSummaryMarksLosses(t *testing.T) {
	r, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeSummary(&b, r)
	md := b.String()
	// waitgroup beats magpie on SortInt64 (400 vs 450 ms): the table must say so.
	for _, want := range []string{
		"| SortInt64 | 900 ms | 450 ms | 2.00x | — | — | waitgroup | 2.25x | **0.89x (magpie slower)** |",
		"| waitgroup | 2 | 1.4 s |",
		"| Fib30 | ns/fork | 3 | 15 | waitgroup | 1040 | 69.33x (magpie faster) |",
		"| map | 10 | 20 ns | 25 ns | 30 ns | **1.50 (slower)** | 1.20 | 0 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
}

func TestPlotsWritten(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, dir, filepath.Join(dir, "out.md"), "svg", "test"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"speedup.svg", "fork-overhead.svg", "scaling.svg", "out.md"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

func TestSeqTimeIsTheSmallestMedian(t *testing.T) {
	r, err := parse(strings.NewReader(`BenchmarkSum/impl=seq	1	100 ns/op
BenchmarkSum/impl=seq-2	1	120 ns/op
BenchmarkSum/impl=magpie-2	1	50 ns/op
BenchmarkSmall/op=for/n=10/impl=seq	1	10 ns/op
BenchmarkSmall/op=for/n=10/impl=seq-2	1	12 ns/op
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{1, 2} {
		if v, ok := r.seqTime("Sum", procs); !ok || v != 100 {
			t.Errorf("seqTime(Sum, %d) = %v, %v; want 100: a noisy sequential run must not inflate the speedup", procs, v, ok)
		}
	}
	if v, _ := r.seqTime("Small/op=for/n=10", 2); v != 12 {
		t.Errorf("small inputs compare at their own GOMAXPROCS: got %v, want 12", v)
	}
}

// TestCeilingPerFamily reads testdata/ceiling.txt: three rounds of Fib40,
// each round's ceiling sample (Ceiling/family=Fib40) right before it, a
// cost family (SubmitFrom), and a family run by hand whose ceiling is
// unlabelled.
func TestCeilingPerFamily(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "ceiling.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Workloads, ","); got != "Fib40,SubmitFrom/producers=4,Tree" {
		t.Errorf("workloads %s: the ceiling samples are not a workload", got)
	}
	// P=2 rounds: 30/18.75 = 1.6, 32/16 = 2.0, 34/20 = 1.7, paired within
	// each round: median 1.7, farthest round 0.3 away.
	c, ok := r.ceiling("Fib40", 2)
	if !ok || c.Rounds != 3 || abs(c.Median-1.7) > 1e-9 || abs(c.Spread-0.3/1.7) > 1e-9 {
		t.Errorf("ceiling(Fib40, 2) = %+v, %v; want median 1.7 over 3 rounds, spread 0.3/1.7", c, ok)
	}
	if c, ok := r.ceiling("Fib40", 1); !ok || c.Median != 1 {
		t.Errorf("ceiling(Fib40, 1) = %+v, %v; want 1", c, ok)
	}
	if c, ok := r.ceiling("Tree", 2); !ok || c.Median != 1.5 || c.Rounds != 1 {
		t.Errorf("ceiling(Tree, 2) = %+v, %v; want the unlabelled 1.5", c, ok)
	}
	if got := strings.Join(r.ceilingFamilies(), ","); got != "Fib40" {
		t.Errorf("ceiling families %s", got)
	}
	var b strings.Builder
	writeSummary(&b, r)
	md := b.String()
	// seq: the smaller median of 500 (P=1) and 520 (P=2) ms; magpie at P=2:
	// 290 ms, so 1.72x, 101% of the ceiling.
	for _, want := range []string{
		"| workload | seq | magpie | magpie speedup | ceiling | speedup/ceiling | best baseline | its speedup | magpie vs best baseline |",
		"| Fib40 | 500 ms | 290 ms | 1.72x | 1.70x | 101% | waitgroup | 1.52x | 1.14x (magpie faster) |",
		"| Tree | 40 ms | 30 ms | 1.33x | 1.50x | 89% |",
		"| family | ceiling (P=2) | ± | rounds | ceiling (P=1) | ± | rounds |",
		"| Fib40 | 1.70x | 18% | 3 | 1.00x | 0% | 3 |",
		"| magpie | 2 | 290 ms | 14% | 1.72x | 1.70x | 101% | — |",
		"| waitgroup | 2 | 330 ms | 3% | 1.52x | 1.70x | 89% | 1.14x (magpie faster) |",
		"| seq | 2 | 520 ms | 2% | — | — | — | 1.79x (magpie faster) |",
		"| SubmitFrom/producers=4 | ns/task | 1 | 200 | channel | 100 | **0.50x (magpie slower)** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "#### Ceiling") {
		t.Errorf("the ceiling has a workload table:\n%s", md)
	}
}
