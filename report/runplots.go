package report

import (
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
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
// predictive and accuracy against L with error bars of one standard error
// over cells, one line per chain (the training log-likelihood and accuracy
// when no entries were held out), the recommended L marked; and, with two
// chains or more, their stability: each chain's agreement with chain 1 and
// the number of programs every chain found.
func selectionFigure(rows []rundir.SummaryRow) (*figure, error) {
	type panel struct {
		title, y  string
		value, se func(rundir.SummaryRow) float64
	}
	none := func(rundir.SummaryRow) float64 { return math.NaN() }
	panels := []panel{
		{"Held-out log predictive", "mean log p(held-out entry)", func(r rundir.SummaryRow) float64 { return r.HeldoutLogPred },
			func(r rundir.SummaryRow) float64 { return r.HeldoutLogPredSE }},
		{"Held-out accuracy", "fraction of held-out entries correct", func(r rundir.SummaryRow) float64 { return r.HeldoutAccuracy },
			func(r rundir.SummaryRow) float64 { return r.HeldoutAccuracySE }},
	}
	recommended := 0
	for _, r := range rows {
		if r.Recommended {
			recommended = r.L
		}
	}
	caption := "Higher is better in both score panels; bars are ±1 standard error over cells. One line per chain."
	if recommended > 0 {
		caption += " Dashed: the recommended L = " + itoa(recommended) + ", the smallest whose held-out log predictive is within one " +
			"standard error of the best L's (of the paired difference over cells) or within 5% of the gain across L."
	}
	if !heldOut(rows) {
		panels = []panel{
			{"Training log-likelihood", "log-likelihood", func(r rundir.SummaryRow) float64 { return r.LogLik }, none},
			{"Training accuracy", "fraction of entries reconstructed", func(r rundir.SummaryRow) float64 { return r.TrainAccuracy }, none},
		}
		caption = "No entries were held out (scpipe fit --holdout 0), so these are training scores, which rise with L " +
			"whether or not the data support it. One line per chain."
	}
	chains := chainsOf(rows)
	var plots []*plot.Plot
	for i, pn := range panels {
		p := newPlot(pn.title, "L (codes)", pn.y)
		p.X.Tick.Marker = integerTicks{}
		p.Y.Tick.Marker = compactTicks{}
		for ci, c := range chains {
			if err := addChainScores(p, rows, c, ci, len(chains), pn.value, pn.se); err != nil {
				return nil, err
			}
		}
		if err := markL(p, recommended); err != nil {
			return nil, err
		}
		plots = append(plots, p)
		if i == 0 && recommended > 0 {
			g, err := gapPlot(rows, chains[0], recommended)
			if err != nil {
				return nil, err
			}
			plots = append(plots, g)
			caption += " Gap to the best L: the held-out log predictive of each L's chain of highest training log-likelihood below the best L's, " +
				"with the standard error of that difference paired over cells; grey, the tolerance the rule allows each L."
		}
	}
	if len(chains) > 1 {
		p, err := stabilityPlot(rows, chains, recommended)
		if err != nil {
			return nil, err
		}
		plots = append(plots, p)
		caption += " Stability: each chain's agreement with chain 1 (mean Jaccard index of the matched programs' gene sets); " +
			"above each L, the programs every chain found (matched at Jaccard ≥ 0.5) of the programs of chain 1."
	}
	grid := [][]*plot.Plot{plots}
	w, h := vg.Points(720), vg.Points(250)
	if len(plots) == 4 {
		grid, h = [][]*plot.Plot{plots[:2], plots[2:]}, vg.Points(460)
	}
	svg, err := renderSVG(w, h, func(dc draw.Canvas) {
		drawGrid(grid, withChainLegend(dc, chains))
	})
	if err != nil {
		return nil, err
	}
	return &figure{ID: "selection", Title: "Model selection across L", Caption: caption, SVG: svg}, nil
}

// addChainScores adds chain c's line (the ci-th of n chains) to p, with
// error bars where se is finite and positive, moved sideways a little per
// chain so that the bars of chains at one L do not hide each other.
func addChainScores(p *plot.Plot, rows []rundir.SummaryRow, c, ci, n int, value, se func(rundir.SummaryRow) float64) error {
	return addScores(p, rows, c, 0.07*(float64(ci)-float64(n-1)/2), chainStyle(ci), value, se)
}

// addScores adds the line of chain c's values, moved by off along L, with
// their error bars, in style.
func addScores(p *plot.Plot, rows []rundir.SummaryRow, c int, off float64, style draw.LineStyle, value, se func(rundir.SummaryRow) float64) error {
	var xs, ys []float64
	var bars errorPoints
	for _, r := range rows {
		if r.Chain != c {
			continue
		}
		x, v, e := float64(r.L)+off, value(r), se(r)
		xs, ys = append(xs, x), append(ys, v)
		if !math.IsNaN(v) && !math.IsInf(v, 0) && e > 0 && !math.IsInf(e, 0) {
			bars = append(bars, errorPoint{x, v, e})
		}
	}
	if _, err := addSeries(p, xs, ys, style, true); err != nil {
		return err
	}
	if len(bars) == 0 {
		return nil
	}
	eb, err := plotter.NewYErrorBars(bars)
	if err != nil {
		return err
	}
	eb.LineStyle = style
	eb.LineStyle.Dashes = nil
	eb.CapWidth = vg.Points(4)
	p.Add(eb)
	return nil
}

// gapPlot draws the recommendation's numbers (one value per L, on the rows
// of the first chain): each L's gap to the best L's held-out log
// predictive with its paired standard error, and the tolerance the rule
// allows it.
func gapPlot(rows []rundir.SummaryRow, first, recommended int) (*plot.Plot, error) {
	p := newPlot("Gap to the best L", "L (codes)", "log predictive below the best L's")
	p.X.Tick.Marker = integerTicks{}
	p.Y.Tick.Marker = compactTicks{}
	var xs, tol []float64
	for _, r := range rows {
		if r.Chain == first {
			xs, tol = append(xs, float64(r.L)), append(tol, r.LogPredTolerance)
		}
	}
	grey := draw.LineStyle{Color: color.Gray{Y: 0xaa}, Width: vg.Points(2.5)}
	if _, err := addSeries(p, xs, tol, grey, false); err != nil {
		return nil, err
	}
	black := draw.LineStyle{Color: color.Black, Width: vg.Points(1.2)}
	gap := func(r rundir.SummaryRow) float64 { return r.LogPredGap }
	se := func(r rundir.SummaryRow) float64 { return r.LogPredGapSE }
	if err := addScores(p, rows, first, 0, black, gap, se); err != nil {
		return nil, err
	}
	return p, markL(p, recommended)
}

// errorPoint is a score with its standard error, for plotter.YErrorBars.
type errorPoint struct{ x, y, se float64 }

type errorPoints []errorPoint

func (e errorPoints) Len() int                        { return len(e) }
func (e errorPoints) XY(i int) (float64, float64)     { return e[i].x, e[i].y }
func (e errorPoints) YError(i int) (float64, float64) { return e[i].se, e[i].se }

// markL draws a dashed vertical line at L across p's data range (nothing
// when L is 0).
func markL(p *plot.Plot, L int) error {
	if L == 0 {
		return nil
	}
	lo, hi := p.Y.Min, p.Y.Max
	if !(hi > lo) {
		return nil
	}
	l, err := plotter.NewLine(plotter.XYs{{X: float64(L), Y: lo}, {X: float64(L), Y: hi}})
	if err != nil {
		return err
	}
	l.LineStyle = draw.LineStyle{Color: color.Gray{Y: 0x33}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	p.Add(l)
	return nil
}

// stabilityPlot draws each chain's agreement with chain 1 against L
// (chain 1 itself, always 1, left out), the stable programs of each L
// above it as "stable/programs", and the recommended L.
func stabilityPlot(rows []rundir.SummaryRow, chains []int, recommended int) (*plot.Plot, error) {
	p := newPlot("Stability across chains", "L (codes)", "agreement with chain 1")
	p.X.Tick.Marker = integerTicks{}
	p.Y.Tick.Marker = compactTicks{}
	p.Y.Min, p.Y.Max = 0, 1.12
	for ci, c := range chains[1:] {
		var xs, ys []float64
		for _, r := range rows {
			if r.Chain == c {
				xs, ys = append(xs, float64(r.L)), append(ys, r.Agreement)
			}
		}
		if _, err := addSeries(p, xs, ys, chainStyle(ci+1), true); err != nil {
			return nil, err
		}
	}
	var at plotter.XYLabels
	for _, r := range rows {
		if r.Chain == chains[0] && r.StablePrograms >= 0 && r.Programs >= 0 {
			at.XYs = append(at.XYs, plotter.XY{X: float64(r.L), Y: 1.05})
			at.Labels = append(at.Labels, itoa(r.StablePrograms)+"/"+itoa(r.Programs))
		}
	}
	if len(at.XYs) > 0 {
		labels, err := plotter.NewLabels(at)
		if err != nil {
			return nil, err
		}
		for i := range labels.TextStyle {
			labels.TextStyle[i].Font = font.From(sansFont, 7)
			labels.TextStyle[i].XAlign = draw.XCenter
		}
		p.Add(labels)
	}
	p.Y.Min, p.Y.Max = 0, 1.12
	return p, markL(p, recommended)
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
