# Benchmarks and their plots; see docs/benchmarks.md.
# make bench   runs the suite (about 15 minutes on 2 cores), writes the tables and plots
# make plots   redraws the plots and tables from docs/benchdata/latest.txt without running anything
.PHONY: bench bench-quick plots

bench:
	scripts/bench

bench-quick:
	BENCH_QUICK=1 scripts/bench

plots:
	BENCH_REPLOT=1 scripts/bench
