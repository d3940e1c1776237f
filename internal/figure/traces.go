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
}

// traceColumns returns the columns of the traces figure: the
// log-likelihood, λ when some fit has it (symmetric noise), and the dropout
// and background rates.
func traceColumns(traces []Trace) []traceColumn {
	cols := []traceColumn{{"log-likelihood", func(r rundir.TraceRow) float64 { return r.LogLik }}}
	lambda := false
	for _, t := range traces {
		for _, r := range t.Rows {
			lambda = lambda || finite(r.Lambda)
		}
	}
	if lambda {
		cols = append(cols, traceColumn{"λ (dispersion)", func(r rundir.TraceRow) float64 { return r.Lambda }})
	}
	return append(cols,
		traceColumn{"dropout P(x=0 | covered)", func(r rundir.TraceRow) float64 { return r.Dropout }},
		traceColumn{"background P(x=1 | not covered)", func(r rundir.TraceRow) float64 { return r.Background }})
}

// Traces draws, for each L (a row of panels), the log-likelihood and the
// noise parameters against sweep, one line per chain, burn-in shaded.
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
	w, h := vg.Points(720), vg.Points(float64(40+120*len(Ls)))
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
		step := max(1, (len(t.Rows)+maxTracePoints-1)/maxTracePoints)
		for j, r := range t.Rows {
			if r.Phase == rundir.PhaseBurnIn {
				burnIn = max(burnIn, int(r.Sweep))
			}
			if j%step == 0 || j == len(t.Rows)-1 {
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
