package main

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// speedupImpls are the implementations drawn in the speedup plot, in
// legend order; variants (magpie-join, magpie-task, ...) stay in the tables.
var speedupImpls = []string{"magpie", "waitgroup", "errgroup", "conc"}

// inSpeedupPlot reports whether a workload belongs in the speedup plot:
// the small inputs (where speedup is not the point) and the submission
// benchmark (whose seq is a loop of calls, not a competing implementation)
// have their own tables instead.
func inSpeedupPlot(wl string) bool {
	return !strings.HasPrefix(wl, "Small") && !isOverhead(wl)
}

// overheadUnits maps the families whose workloads measure a per-operation
// cost (not a speedup) to that cost's unit: fib(30) forking at every level
// does almost no work per fork, and the submission benchmarks' seq is a
// loop of calls, not a competing implementation.
var overheadUnits = map[string]string{"Fib30": "ns/fork", "Submit1M": "ns/task", "SubmitFrom": "ns/task"}

// overheadUnit returns the cost unit of wl's family, if it measures a cost.
func overheadUnit(wl string) (string, bool) {
	u, ok := overheadUnits[family(wl)]
	return u, ok
}

func isOverhead(wl string) bool { _, ok := overheadUnit(wl); return ok }

func implColor(impl string) color.Color {
	if i := slices.Index(speedupImpls, impl); i >= 0 {
		return plotutil.Color(i)
	}
	return plotutil.Color(len(speedupImpls) + len(impl)%3)
}

// speedupPlot draws, for one GOMAXPROCS, grouped bars of sequential time
// over each implementation's time per workload, with the sequential level
// (1) and the ideal (procs) as dashed lines and, where the run measured
// it, the machine's ceiling for the workload's family as a solid mark.
func speedupPlot(r *results, procs int, file, caption string) error {
	var wls []string
	for _, wl := range r.Workloads {
		if _, ok := r.seqTime(wl, procs); ok && inSpeedupPlot(wl) {
			wls = append(wls, wl)
		}
	}
	if len(wls) == 0 {
		return fmt.Errorf("no workload with a seq implementation at GOMAXPROCS=%d", procs)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Speedup over sequential code, GOMAXPROCS=%d (higher is better)", procs)
	p.Y.Label.Text = "sequential time / parallel time"
	p.X.Label.Text = caption
	p.Y.Min = 0
	width := vg.Points(12)
	var present []string
	for _, impl := range speedupImpls {
		for _, wl := range wls {
			if _, ok := r.stat(key{wl, impl, procs}, "ns/op"); ok {
				present = append(present, impl)
				break
			}
		}
	}
	for i, impl := range present {
		vals := make(plotter.Values, len(wls))
		for j, wl := range wls {
			seq, _ := r.seqTime(wl, procs)
			if t, ok := r.stat(key{wl, impl, procs}, "ns/op"); ok && t > 0 {
				vals[j] = seq / t
			}
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return err
		}
		bars.Color = implColor(impl)
		bars.LineStyle.Width = 0
		bars.Offset = width * vg.Length(float64(i)-float64(len(present)-1)/2)
		p.Add(bars)
		p.Legend.Add(impl, bars)
	}
	// The machine's ceiling of each workload's family, measured in the
	// same rounds: a solid mark across the workload's group of bars.
	ceilingLegend := false
	for j, wl := range wls {
		c, ok := r.ceiling(wl, procs)
		if !ok {
			continue
		}
		mark, err := plotter.NewLine(plotter.XYs{{X: float64(j) - 0.45, Y: c.Median}, {X: float64(j) + 0.45, Y: c.Median}})
		if err != nil {
			return err
		}
		mark.Width = vg.Points(2)
		mark.Color = color.Black
		p.Add(mark)
		if !ceilingLegend {
			p.Legend.Add("machine ceiling, same rounds", mark)
			ceilingLegend = true
		}
	}
	for _, level := range []float64{1, float64(procs)} {
		line, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: level}, {X: float64(len(wls)) - 0.5, Y: level}})
		if err != nil {
			return err
		}
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		line.Color = color.Gray{Y: 120}
		p.Add(line)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	p.NominalX(shortNames(wls)...)
	p.X.Tick.Label.Rotation = 0.35
	p.X.Tick.Label.XAlign = draw.XRight
	p.Y.Max = max(p.Y.Max, float64(procs)) * 1.35 // headroom for the legend above the bars
	return p.Save(10*vg.Inch, 5*vg.Inch, file)
}

// shortNames drops size suffixes that only repeat the benchmark's name.
func shortNames(wls []string) []string {
	out := make([]string, len(wls))
	for i, wl := range wls {
		out[i] = strings.ReplaceAll(wl, "/", " ")
	}
	return out
}

// overheadPlot draws horizontal bars of one metric (ns/fork, ns/task) per
// implementation of one workload, one bar per GOMAXPROCS, each labelled
// with its value: the values span three orders of magnitude, so the labels
// carry the small ones.
func overheadPlot(r *results, wl, unit, title, file, caption string) error {
	impls := r.Impls[wl]
	if len(impls) == 0 {
		return fmt.Errorf("no %s results", wl)
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = unit + " (lower is better); " + caption
	p.X.Min = 0
	height := vg.Points(9)
	var labels plotter.XYLabels
	for i, procs := range r.Procs {
		vals := make(plotter.Values, len(impls))
		for j, impl := range impls {
			if v, ok := r.stat(key{wl, impl, procs}, unit); ok {
				vals[j] = v
				off := (float64(i) - float64(len(r.Procs)-1)/2) * 0.8 / float64(len(r.Procs))
				labels.XYs = append(labels.XYs, plotter.XY{X: v, Y: float64(j) + off})
				labels.Labels = append(labels.Labels, " "+fmtValue(v))
			}
		}
		bars, err := plotter.NewBarChart(vals, height)
		if err != nil {
			return err
		}
		bars.Horizontal = true
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = height * vg.Length(float64(i)-float64(len(r.Procs)-1)/2)
		p.Add(bars)
		p.Legend.Add(fmt.Sprintf("GOMAXPROCS=%d", procs), bars)
	}
	if len(labels.XYs) > 0 {
		lab, err := plotter.NewLabels(labels)
		if err != nil {
			return err
		}
		for i := range lab.TextStyle {
			lab.TextStyle[i].YAlign = draw.YCenter
		}
		p.Add(lab)
	}
	p.NominalY(impls...)
	p.Legend.Top = false // the cheapest implementations, at the bottom, leave the lower right free
	p.X.Max *= 1.2       // room for the labels
	h := max(3, 0.25*float64(len(impls)*len(r.Procs))+1.2)
	return p.Save(9*vg.Inch, vg.Length(h)*vg.Inch, file)
}

// scalingPlot draws magpie's speedup over sequential code against
// GOMAXPROCS for every workload, with the ideal diagonal: the scaling run.
func scalingPlot(r *results, file, caption string) error {
	if len(r.Procs) < 2 {
		return fmt.Errorf("scaling needs results at two or more GOMAXPROCS values")
	}
	p := plot.New()
	p.Title.Text = "magpie speedup over sequential code by GOMAXPROCS"
	if caption != "" {
		p.Title.Text += "\n" + caption
	}
	p.X.Label.Text = "GOMAXPROCS (-cpu)"
	p.Y.Label.Text = "speedup"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = powersOfTwo{}, powersOfTwo{}
	top := float64(r.Procs[len(r.Procs)-1])
	ideal, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: top, Y: top}})
	if err != nil {
		return err
	}
	ideal.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	ideal.Color = color.Gray{Y: 120}
	p.Add(ideal)
	p.Legend.Add("ideal", ideal)
	n := 0
	for _, wl := range r.Workloads {
		if !inSpeedupPlot(wl) {
			continue
		}
		var pts plotter.XYs
		for _, procs := range r.Procs {
			seq, ok1 := r.seqTime(wl, procs)
			mag, ok2 := r.stat(key{wl, magpieImpl, procs}, "ns/op")
			if ok1 && ok2 && mag > 0 {
				pts = append(pts, plotter.XY{X: float64(procs), Y: seq / mag})
			}
		}
		if len(pts) < 2 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color, points.Color = plotutil.Color(n), plotutil.Color(n)
		points.Shape = plotutil.Shape(n)
		p.Add(line, points)
		p.Legend.Add(wl, line, points)
		n++
	}
	if n == 0 {
		return errNoData
	}
	// Upper left: at GOMAXPROCS=1 every speedup is about 1, so the corner
	// above the lines' starting points is empty in any real run.
	p.Legend.Top, p.Legend.Left = true, true
	p.Y.Min = min(p.Y.Min, 0.5)
	return p.Save(8*vg.Inch, 6*vg.Inch, file)
}

// errNoData says a plot was skipped because the input cannot fill it.
var errNoData = errors.New("no workload has seq and magpie at two GOMAXPROCS values")

// powersOfTwo puts ticks at 1, 2, 4, ... on a log axis.
type powersOfTwo struct{}

func (powersOfTwo) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for v := 0.25; v <= hi*1.01; v *= 2 {
		if v >= lo*0.99 {
			ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
		}
	}
	return ts
}

// writePlots writes every plot the data supports into dir and returns the
// files written.
func writePlots(r *results, dir, ext, caption string) ([]string, error) {
	var out []string
	top := r.Procs[len(r.Procs)-1]
	f := filepath.Join(dir, "speedup."+ext)
	if err := speedupPlot(r, top, f, caption); err != nil {
		return out, fmt.Errorf("speedup: %w", err)
	}
	out = append(out, f)
	if slices.Contains(r.Workloads, "Fib30") {
		f := filepath.Join(dir, "fork-overhead."+ext)
		if err := overheadPlot(r, "Fib30", "ns/fork",
			"Cost per fork: fib(30) forking at every level", f, caption); err != nil {
			return out, fmt.Errorf("fork overhead: %w", err)
		}
		out = append(out, f)
	}
	if slices.Contains(r.Workloads, "Submit1M") {
		f := filepath.Join(dir, "submit-overhead."+ext)
		if err := overheadPlot(r, "Submit1M", "ns/task",
			"Cost per task: 1M tiny tasks submitted from outside", f, caption); err != nil {
			return out, fmt.Errorf("submit overhead: %w", err)
		}
		out = append(out, f)
	}
	if len(r.Procs) > 1 {
		f := filepath.Join(dir, "scaling."+ext)
		switch err := scalingPlot(r, f, caption); {
		case errors.Is(err, errNoData):
			fmt.Fprintln(os.Stderr, "plot: scaling skipped:", err)
		case err != nil:
			return out, fmt.Errorf("scaling: %w", err)
		default:
			out = append(out, f)
		}
	}
	return out, nil
}

// fmtValue prints a metric with three significant digits and no exponent.
func fmtValue(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
