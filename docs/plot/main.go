// Command plot turns the output of the magpie benchmark suite (the root
// package's bench_*_test.go, standard Go benchmark format) into the plots and
// the markdown tables of docs/benchmarks.md. It lives in its own module so
// that the library never depends on gonum.
//
//	cd docs/plot && go run . -in ../benchdata/latest.txt -out ../img -md ../benchdata/latest.md
//
// It writes speedup.svg (speedup over sequential code per workload and
// implementation at the largest GOMAXPROCS), fork-overhead.svg (ns per fork,
// fib(30)), submit-overhead.svg (ns per submitted task) and, when the input
// has several GOMAXPROCS values, scaling.svg. Every figure is a median of the
// samples in the input file.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	in := flag.String("in", "../benchdata/latest.txt", "benchmark output to read")
	out := flag.String("out", "../img", "directory for the plots")
	md := flag.String("md", "", "write the markdown tables to this file (- for stdout)")
	format := flag.String("format", "svg", "plot format: svg or png")
	caption := flag.String("caption", "", "text added under each plot (say which run it shows)")
	flag.Parse()
	if err := run(*in, *out, *md, *format, *caption); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
}

func run(in, out, md, format, caption string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := parse(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if len(r.Workloads) == 0 {
		return fmt.Errorf("%s: no Workload/impl=NAME benchmark results", in)
	}
	if md != "" {
		w := os.Stdout
		if md != "-" {
			if w, err = os.Create(md); err != nil {
				return err
			}
		}
		writeSummary(w, r)
		if md != "-" {
			if err := w.Close(); err != nil {
				return err
			}
		}
	}
	if out == "" {
		return nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	files, err := writePlots(r, out, format, caption)
	for _, f := range files {
		fmt.Println("wrote", f)
	}
	return err
}
