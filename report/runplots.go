package report

import (
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"scpipe/rundir"
)

// chainsOf returns the chains of rows, ascending.
func chainsOf(rows []rundir.SummaryRow) []int {
	var chains []int
	for _, r := range rows {
		if !slices.Contains(chains, r.Chain) {
			chains = append(chains, r.Chain)
		}
	}
	slices.Sort(chains)
	return chains
}

// heldOut reports whether any fit of rows was scored on held-out entries.
func heldOut(rows []rundir.SummaryRow) bool {
	for _, r := range rows {
		if !math.IsNaN(r.HeldoutLogPred) || !math.IsNaN(r.HeldoutAccuracy) {
			return true
		}
	}
	return false
}

// selectionFigure draws the model-selection plot: the held-out log
// predictive and accuracy against L, one line per chain (the training
// log-likelihood and accuracy when no entries were held out).
func selectionFigure(rows []rundir.SummaryRow) (*figure, error) {
	type panel struct {
		title, y string
		value    func(rundir.SummaryRow) float64
	}
	panels := []panel{
		{"Held-out log predictive", "mean log p(held-out entry)", func(r rundir.SummaryRow) float64 { return r.HeldoutLogPred }},
		{"Held-out accuracy", "fraction of held-out entries correct", func(r rundir.SummaryRow) float64 { return r.HeldoutAccuracy }},
	}
	caption := "Higher is better in both panels; the L where the held-out log predictive stops rising is the " +
		"largest the data support. One line per chain."
	if !heldOut(rows) {
		panels = []panel{
			{"Training log-likelihood", "log-likelihood", func(r rundir.SummaryRow) float64 { return r.LogLik }},
			{"Training accuracy", "fraction of entries reconstructed", func(r rundir.SummaryRow) float64 { return r.TrainAccuracy }},
		}
		caption = "No entries were held out (scpipe fit --holdout 0), so these are training scores, which rise with L " +
			"whether or not the data support it. One line per chain."
	}
	chains := chainsOf(rows)
	plots := make([]*plot.Plot, len(panels))
	for i, pn := range panels {
		p := newPlot(pn.title, "L (codes)", pn.y)
		p.X.Tick.Marker = integerTicks{}
		p.Y.Tick.Marker = compactTicks{}
		for ci, c := range chains {
			var xs, ys []float64
			for _, r := range rows {
				if r.Chain == c {
					xs, ys = append(xs, float64(r.L)), append(ys, pn.value(r))
				}
			}
			if _, err := addSeries(p, xs, ys, chainStyle(ci), true); err != nil {
				return nil, err
			}
		}
		plots[i] = p
	}
	w, h := vg.Points(720), vg.Points(250)
	svg, err := renderSVG(w, h, func(dc draw.Canvas) {
		drawGrid([][]*plot.Plot{plots}, withChainLegend(dc, chains))
	})
	if err != nil {
		return nil, err
	}
	return &figure{ID: "selection", Title: "Model selection across L", Caption: caption, SVG: svg}, nil
}

// drawGrid draws rows of plots with their axes aligned.
func drawGrid(grid [][]*plot.Plot, dc draw.Canvas) {
	t := draw.Tiles{Rows: len(grid), Cols: len(grid[0]), PadX: vg.Points(20), PadY: vg.Points(8),
		PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(grid, t, dc)
	for i := range grid {
		for j, p := range grid[i] {
			p.Draw(canvases[i][j])
		}
	}
}

// legendWidth is the strip on the right of a figure that names the chains.
const legendWidth = 64

// withChainLegend draws the legend of the chains' lines in a strip on the
// right of dc, where it covers no data, and returns the rest of dc. With
// one chain there is no legend.
func withChainLegend(dc draw.Canvas, chains []int) draw.Canvas {
	if len(chains) < 2 {
		return dc
	}
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(sansFont, 9)
	l.Top, l.Left = true, true
	for i, c := range chains {
		l.Add("chain "+itoa(c), &legendLine{chainStyle(i)})
	}
	l.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-vg.Points(legendWidth), 0, 0, -vg.Points(24)))
	return draw.Crop(dc, 0, -vg.Points(legendWidth), 0, 0)
}

// fitTrace is the trace of one fit.
type fitTrace struct {
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
func traceColumns(traces []fitTrace) []traceColumn {
	cols := []traceColumn{{"log-likelihood", func(r rundir.TraceRow) float64 { return r.LogLik }}}
	lambda := false
	for _, t := range traces {
		for _, r := range t.Rows {
			lambda = lambda || !math.IsNaN(r.Lambda)
		}
	}
	if lambda {
		cols = append(cols, traceColumn{"λ (dispersion)", func(r rundir.TraceRow) float64 { return r.Lambda }})
	}
	return append(cols,
		traceColumn{"dropout P(x=0 | covered)", func(r rundir.TraceRow) float64 { return r.Dropout }},
		traceColumn{"background P(x=1 | not covered)", func(r rundir.TraceRow) float64 { return r.Background }})
}

// tracesFigure draws, for each L (a row of panels), the log-likelihood and
// the noise parameters against sweep, one line per chain, burn-in shaded.
func tracesFigure(traces []fitTrace) (*figure, error) {
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
		var mine []fitTrace
		for _, t := range traces {
			if t.L == L {
				mine = append(mine, t)
			}
		}
		grid[i] = make([]*plot.Plot, len(cols))
		for j, col := range cols {
			p, err := tracePanel(mine, chains, col, i == 0, j == 0, L)
			if err != nil {
				return nil, err
			}
			grid[i][j] = p
		}
	}
	w, h := vg.Points(720), vg.Points(float64(40+120*len(Ls)))
	svg, err := renderSVG(w, h, func(dc draw.Canvas) { drawGrid(grid, withChainLegend(dc, chains)) })
	if err != nil {
		return nil, err
	}
	return &figure{ID: "traces", Title: "Traces",
		Caption: "Each row is one L, each line one chain, against sweep; burn-in sweeps (shaded) do not enter the posterior means. " +
			"A chain has mixed when its sampling sweeps wander around a level without trend, and chains agree when they share it.",
		SVG: svg}, nil
}

// legendLine is a legend entry's line.
type legendLine struct{ style draw.LineStyle }

func (l *legendLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.style, c.Min.X, y, c.Max.X, y)
}

// tracePanel draws one quantity of the chains of one L.
func tracePanel(traces []fitTrace, chains []int, col traceColumn, top, left bool, L int) (*plot.Plot, error) {
	title, ylabel := "", ""
	if top {
		title = col.title
	}
	if left {
		ylabel = "L = " + itoa(L)
	}
	p := newPlot(title, "", ylabel)
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
		if _, err := addSeries(p, series[i][0], series[i][1], chainStyle(slices.Index(chains, t.Chain)), false); err != nil {
			return nil, err
		}
	}
	if lo > hi { // no finite value: an empty panel still needs a range
		p.Y.Min, p.Y.Max = 0, 1
	}
	return p, nil
}
