// Command table prints the table of a bench/cross run (see its README.md)
// from its raw samples, one per line:
//
//	<lang> <workload> <impl> <workers> <milliseconds> <other>
//
// where other is the CPU that other processes used on average while the
// sample's program ran. A sample is quiet when other < 0.1. Each figure is
// the median of the quiet samples when at least half of the samples are
// quiet, else the median of all of them, marked "*".
//
//	go run ./bench/cross/table out/raw-<time>.txt
//
// It imports only the standard library, so it builds in whichever module
// holds bench/cross.
package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// quietBelow is the CPU other processes may use while a quiet sample runs.
const quietBelow = 0.1

// workload says how a workload's figures are read.
type workload struct {
	name, about string
	unit        string  // "ns/fork", "ns/task" or "" (speedup over sequential instead)
	perUnit     float64 // what one run does of unit: forks or tasks
}

var workloads = []workload{
	{"fib30", "fib(30) forking at every level (1,346,268 forks); ns/fork = time / forks; T1/Ts = 1-worker time / the language's sequential time", "ns/fork", 1346268},
	{"fib40", "fib(40), sequential below n = 20; speedup = the language's sequential time / time", "", 0},
	{"sort", "sort 10M uniformly random int64; speedup = the language's sequential sort's time / time", "", 0},
	{"sum", "sum of 10M int64 (each below 2^32); speedup = the language's sequential loop's time / time", "", 0},
	{"tasks", "1M tiny tasks (out[i] = i*i+1) submitted from one outside thread, then awaited; ns/task = time / 1M", "ns/task", 1e6},
	{"spawn", "1M tiny tasks (out[i] = i*i+1) spawned from inside one pool task, then awaited; ns/task = time / 1M", "ns/task", 1e6},
}

var langs = []string{"go", "java", "rust"}

// sequential names the implementations that use one thread and no pool:
// the base of T1/Ts and of speedups.
var sequential = map[string]bool{"seq": true, "slices": true, "sort": true, "sort_unstable": true}

type row struct{ lang, workload, impl string }

// cell is the samples of one row at one pool size.
type cell struct{ all, quiet []float64 }

// figure returns the cell's median and whether it is of all samples
// (too few quiet ones).
func (c *cell) figure() (ms float64, noisy bool) {
	if 2*len(c.quiet) >= len(c.all) {
		return median(c.quiet), false
	}
	return median(c.all), true
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	m := len(s)
	if m%2 == 1 {
		return s[m/2]
	}
	return (s[m/2-1] + s[m/2]) / 2
}

func main() {
	if len(os.Args) != 2 {
		fail("usage: table <raw file>")
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fail(err.Error())
	}
	defer f.Close()
	cells := map[row]map[int]*cell{}
	var order []row // rows in order of first appearance
	var samples, noisy int
	var other float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 6 {
			fail("table: malformed line: " + sc.Text())
		}
		workers, err1 := strconv.Atoi(fs[3])
		ms, err2 := strconv.ParseFloat(fs[4], 64)
		o, err3 := strconv.ParseFloat(fs[5], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			fail("table: malformed line: " + sc.Text())
		}
		r := row{fs[0], fs[1], fs[2]}
		if cells[r] == nil {
			cells[r] = map[int]*cell{}
			order = append(order, r)
		}
		c := cells[r][workers]
		if c == nil {
			c = &cell{}
			cells[r][workers] = c
		}
		c.all = append(c.all, ms)
		if o < quietBelow {
			c.quiet = append(c.quiet, ms)
		} else {
			noisy++
		}
		samples++
		other += o
	}
	if err := sc.Err(); err != nil {
		fail(err.Error())
	}
	if samples == 0 {
		fail("table: no samples")
	}
	for _, w := range workloads {
		printWorkload(w, order, cells)
	}
	fmt.Printf("load: other processes used %.2f CPU on average per sample; %d of %d samples not quiet\n",
		other/float64(samples), noisy, samples)
}

func printWorkload(w workload, order []row, cells map[row]map[int]*cell) {
	fmt.Printf("%s: %s\n", w.name, w.about)
	derived := "speedup"
	if w.unit != "" {
		derived = w.unit
	}
	fmt.Printf("%-22s %10s %8s %7s   %10s %8s %7s", "impl", "2w ms", derived, "quiet", "1w ms", derived, "quiet")
	if w.name == "fib30" {
		fmt.Printf(" %7s", "T1/Ts")
	}
	fmt.Println()
	for _, lang := range langs {
		var rows []row
		for _, r := range order {
			if r.lang == lang && r.workload == w.name {
				rows = append(rows, r)
			}
		}
		// The sequential row first: the others are read against it.
		slices.SortStableFunc(rows, func(a, b row) int {
			return boolRank(sequential[b.impl]) - boolRank(sequential[a.impl])
		})
		seqMS := 0.0
		for _, r := range rows {
			if sequential[r.impl] && cells[r][1] != nil {
				seqMS, _ = cells[r][1].figure()
			}
		}
		for _, r := range rows {
			fmt.Printf("%-22s", r.lang+":"+r.impl)
			for _, workers := range []int{2, 1} {
				fmt.Print(formatCell(w, cells[r][workers], seqMS))
			}
			if w.name == "fib30" {
				t1 := "-"
				if c := cells[r][1]; c != nil && seqMS > 0 && !sequential[r.impl] {
					ms, _ := c.figure()
					t1 = fmt.Sprintf("%.1f", ms/seqMS)
				}
				fmt.Printf(" %7s", t1)
			}
			fmt.Println()
		}
	}
	fmt.Println()
}

// formatCell is the median, the derived figure (per unit, or speedup over
// seqMS) and quiet/all sample counts of c, or blanks if it has no samples.
func formatCell(w workload, c *cell, seqMS float64) string {
	if c == nil {
		return fmt.Sprintf(" %10s %8s %7s  ", "", "", "")
	}
	ms, noisy := c.figure()
	mark := ""
	if noisy {
		mark = "*"
	}
	derived := "-"
	switch {
	case w.unit != "":
		derived = fmt.Sprintf("%.1f", ms*1e6/w.perUnit)
	case seqMS > 0:
		derived = fmt.Sprintf("%.2fx", seqMS/ms)
	}
	return fmt.Sprintf(" %10s %8s %7s  ", fmt.Sprintf("%.2f%s", ms, mark), derived,
		fmt.Sprintf("%d/%d", len(c.quiet), len(c.all)))
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(1)
}
