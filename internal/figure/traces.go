package figure

import (
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"scpipe/internal/rundir"
)

// Trace is the trace of one fit.
type Trace struct {
	L, Chain int
	Rows     []rundir.TraceRow
}

// maxTracePoints bounds the points of one line: a trace of a hundred
// thousand sweeps is drawn from every k-th sweep (and the last).
const maxTracePoints = 2000

// traceColumn is one quantity of the traces figure.
type traceColumn struct {
	title string
	value func(rundir.TraceRow) float64
	// samples draws the sampling sweeps alone, on their own scale: beside
	// a burn-in's climb (and, with held parameters, the step where the
	// likelihood becomes the posterior's) their level or slope would be a
	// flat line.
	samples bool
}

// traceColumns returns the columns of the traces figure: the
// log-likelihood, that of the sampling sweeps alone, λ when some fit has
// it (symmetric noise), and the dropout and background rates.
func traceColumns(traces []Trace) []traceColumn {
	logLik := func(r rundir.TraceRow) float64 { return r.LogLik }
	cols := []traceColumn{{title: "log-likelihood", value: logLik}, {title: "log-likelihood, samples", value: logLik, samples: true}}
	lambda := false
	for _, t := range traces {
		for _, r := range t.Rows {
			lambda = lambda || finite(r.Lambda)
		}
	}
	if lambda {
		cols = append(cols, traceColumn{title: "λ (dispersion)", value: func(r rundir.TraceRow) float64 { return r.Lambda }})
	}
	return append(cols,
		traceColumn{title: "dropout P(x=0 | covered)", value: func(r rundir.TraceRow) float64 { return r.Dropout }},
		traceColumn{title: "background P(x=1 | not covered)", value: func(r rundir.TraceRow) float64 { return r.Background }})
}

// Traces draws, for each L (a row of panels), the log-likelihood (and
// that of the sampling sweeps alone) and the noise parameters against
// sweep, one line per chain, burn-in shaded.
func Traces(traces []Trace) ([]byte, error) {
	var Ls, chains []int
	for _, t := range traces {
		if !slices.Contains(Ls, t.L) {
			Ls = append(Ls, t.L)
		}
		if !slices.Contains(chains, t.Chain) {
			chains = append(chains, t.Chain)
		}
	}
	slices.Sort(Ls)
	slices.Sort(chains)
	cols := traceColumns(traces)
	grid := make([][]*plot.Plot, len(Ls))
	for i, L := range Ls {
		var mine []Trace
		for _, t := range traces {
			if t.L == L {
				mine = append(mine, t)
			}
		}
		grid[i] = make([]*plot.Plot, len(cols))
		for j, col := range cols {
			p, err := tracePanel(mine, chains, col, i == 0, j == 0, i == len(Ls)-1, L)
			if err != nil {
				return nil, err
			}
			grid[i][j] = p
		}
	}
	w, h := vg.Points(float64(60+220*len(cols))), vg.Points(float64(40+120*len(Ls)))
	if len(Ls) == 0 {
		p := NewPlot("", "sweep", "")
		if err := note(p, "no traces"); err != nil {
			return nil, err
		}
		grid, h = [][]*plot.Plot{{p}}, vg.Points(160)
	}
	return Render(w, h, func(dc draw.Canvas) { drawGrid(grid, withLegend(dc, vg.Points(64), chainEntries(chains, false))) })
}

// tracePanel draws one quantity of the chains of one L; the panels of the
// top row name the quantity, those of the left column L, those of the
// bottom row the sweep.
func tracePanel(traces []Trace, chains []int, col traceColumn, top, left, bottom bool, L int) (*plot.Plot, error) {
	title, xlabel, ylabel := "", "", ""
	if top {
		title = col.title
	}
	if left {
		ylabel = "L = " + strconv.Itoa(L)
	}
	if bottom {
		xlabel = "sweep"
	}
	p := NewPlot(title, xlabel, ylabel)
	p.Y.Tick.Marker = compactTicks{}
	p.X.Tick.Marker = compactTicks{}
	burnIn := 0
	series := make([][2][]float64, len(traces))
	for i, t := range traces {
		rows := t.Rows
		if col.samples {
			rows = slices.DeleteFunc(slices.Clone(rows), func(r rundir.TraceRow) bool { return r.Phase != rundir.PhaseSample })
		}
		step := max(1, (len(rows)+maxTracePoints-1)/maxTracePoints)
		for j, r := range rows {
			if r.Phase == rundir.PhaseBurnIn {
				burnIn = max(burnIn, int(r.Sweep))
			}
			if j%step == 0 || j == len(rows)-1 {
				series[i][0] = append(series[i][0], float64(r.Sweep))
				series[i][1] = append(series[i][1], col.value(r))
			}
		}
	}
	var ys [][]float64
	for _, s := range series {
		ys = append(ys, s[1])
	}
	lo, hi := finiteRange(ys...)
	if err := shadeBurnIn(p, burnIn, lo, hi); err != nil {
		return nil, err
	}
	for i, t := range traces {
		if err := addSeries(p, series[i][0], series[i][1], chainStyle(slices.Index(chains, t.Chain)), false); err != nil {
			return nil, err
		}
	}
	if lo > hi { // no finite value: an empty panel still needs a range
		p.Y.Min, p.Y.Max = 0, 1
	}
	return p, nil
}

// shadeBurnIn adds a grey band over sweeps 1..burnIn, drawn under what is
// added after it. It spans [lo, hi].
func shadeBurnIn(p *plot.Plot, burnIn int, lo, hi float64) error {
	if burnIn <= 0 || !(hi >= lo) {
		return nil
	}
	if hi == lo {
		lo, hi = lo-0.5, hi+0.5
	}
	poly, err := plotter.NewPolygon(plotter.XYs{{X: 0.5, Y: lo}, {X: float64(burnIn) + 0.5, Y: lo},
		{X: float64(burnIn) + 0.5, Y: hi}, {X: 0.5, Y: hi}})
	if err != nil {
		return err
	}
	poly.Color, poly.LineStyle.Width = burnInShade, 0
	p.Add(poly)
	return nil
}
