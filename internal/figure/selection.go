package figure

import (
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"scpipe/internal/rundir"
)

var (
	markStyle      = draw.LineStyle{Color: color.Gray{Y: 0x33}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	toleranceStyle = draw.LineStyle{Color: color.Gray{Y: 0xaa}, Width: vg.Points(2.5)}
	gapStyle       = draw.LineStyle{Color: color.Black, Width: vg.Points(1.2)}
	askedStyle     = draw.LineStyle{Color: color.Gray{Y: 0x77}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}
)

// Selection draws the model-selection figure of a run from its summary's
// rows (selection.svg, and the report's first figure), against L, one line
// per chain, the recommended L dashed in every panel: the held-out log
// predictive and accuracy with error bars of one standard error over cells
// (the training log-likelihood and accuracy when no entries were held out);
// when an L is recommended, the recommendation's numbers (each L's gap to
// the best L's held-out log predictive with its paired standard error, and
// the tolerance the rule allows it); with two chains or more their
// stability (each chain's agreement with chain 1, minAgreement dotted
// when above 0, and above each L the programs every chain found of chain
// 1's).
func Selection(rows []rundir.SummaryRow, minAgreement float64) ([]byte, error) {
	type panel struct {
		title, y  string
		value, se func(rundir.SummaryRow) float64
	}
	none := func(rundir.SummaryRow) float64 { return math.NaN() }
	scores := []panel{
		{"Held-out log predictive", "mean log p(held-out entry)",
			func(r rundir.SummaryRow) float64 { return r.HeldoutLogPred },
			func(r rundir.SummaryRow) float64 { return r.HeldoutLogPredSE }},
		{"Held-out accuracy", "fraction of held-out entries correct",
			func(r rundir.SummaryRow) float64 { return r.HeldoutAccuracy },
			func(r rundir.SummaryRow) float64 { return r.HeldoutAccuracySE }},
	}
	heldOut := HeldOut(rows)
	if !heldOut {
		scores = []panel{
			{"Training log-likelihood", "log-likelihood", func(r rundir.SummaryRow) float64 { return r.LogLik }, none},
			{"Training accuracy", "fraction of entries reconstructed", func(r rundir.SummaryRow) float64 { return r.TrainAccuracy }, none},
		}
	}
	recommended := Recommended(rows)
	chains := Chains(rows)
	Ls := make([]float64, 0, len(rows))
	for _, r := range rows {
		Ls = append(Ls, float64(r.L))
	}
	xlo, xhi := finiteRange(Ls)
	if xlo > xhi {
		xlo, xhi = 1, 1
	}
	newPanel := func(title, y string) *plot.Plot {
		p := NewPlot(title, "L (number of codes)", y)
		p.X.Tick.Marker, p.Y.Tick.Marker = integerTicks{}, compactTicks{}
		addGrid(p)
		return p
	}
	// finish gives p its ranges (L with half a step beyond the outer
	// fits; values with a margin, or [lo, hi] when fixed) and marks the
	// recommended L up to top (the range's top when NaN).
	finish := func(p *plot.Plot, empty string, top float64) error {
		if !(p.Y.Max >= p.Y.Min) || math.IsInf(p.Y.Min, 0) || math.IsInf(p.Y.Max, 0) {
			p.X.Min, p.X.Max = xlo-0.5, xhi+0.5
			return note(p, empty)
		}
		p.X.Min, p.X.Max = xlo-0.5, xhi+0.5
		if math.IsNaN(top) {
			span := p.Y.Max - p.Y.Min
			if span == 0 {
				span = math.Max(math.Abs(p.Y.Max)*0.1, 0.01)
			}
			p.Y.Min, p.Y.Max = p.Y.Min-0.06*span, p.Y.Max+0.06*span
			top = p.Y.Max
		}
		if recommended == 0 {
			return nil
		}
		l, err := plotter.NewLine(plotter.XYs{{X: float64(recommended), Y: p.Y.Min}, {X: float64(recommended), Y: top}})
		if err != nil {
			return err
		}
		l.LineStyle = markStyle
		p.Add(l)
		return nil
	}

	var plots []*plot.Plot
	for i, pn := range scores {
		p := newPanel(pn.title, pn.y)
		for ci, c := range chains {
			off := 0.07 * (float64(ci) - float64(len(chains)-1)/2) // the bars of chains at one L side by side
			if err := addScores(p, rows, c, off, chainStyle(ci), pn.value, pn.se); err != nil {
				return nil, err
			}
		}
		empty := "no finished fits"
		if len(rows) > 0 {
			empty = "no scores"
		}
		if err := finish(p, empty, math.NaN()); err != nil {
			return nil, err
		}
		plots = append(plots, p)
		if i == 0 && heldOut && recommended > 0 {
			g, err := gapPanel(rows, chains[0], newPanel)
			if err != nil {
				return nil, err
			}
			if err := finish(g, "no held-out entries", math.NaN()); err != nil {
				return nil, err
			}
			plots = append(plots, g)
		}
	}
	if len(chains) > 1 {
		p := newPanel("Stability across chains", "agreement with chain 1")
		if err := stability(p, rows, chains, minAgreement); err != nil {
			return nil, err
		}
		p.Y.Min, p.Y.Max = 0, 1.12 // agreement is a fraction: all of it, and room for the counts above
		if err := finish(p, "", 1); err != nil {
			return nil, err
		}
		plots = append(plots, p)
	}

	legend := chainEntries(chains, true)
	if heldOut {
		legend = append(legend, legendEntry{label: "±1 standard error", style: gapStyle, bar: true})
	}
	if recommended > 0 {
		legend = append(legend, legendEntry{label: "recommended L", style: markStyle})
	}
	if heldOut && recommended > 0 {
		legend = append(legend, legendEntry{label: "tolerance", style: toleranceStyle})
	}
	if len(chains) > 1 && minAgreement > 0 {
		legend = append(legend, legendEntry{label: "agreement asked", style: askedStyle})
	}
	grid := [][]*plot.Plot{plots}
	w, h := vg.Points(float64(120+290*len(plots))), vg.Points(260)
	if len(plots) == 4 {
		grid, w, h = [][]*plot.Plot{plots[:2], plots[2:]}, vg.Points(720), vg.Points(500)
	}
	return Render(w, h, func(dc draw.Canvas) {
		drawGrid(grid, withLegend(dc, vg.Points(100), legend))
	})
}

// HeldOut reports whether any fit of rows was scored on held-out entries
// (Selection then draws the held-out scores, else the training ones).
func HeldOut(rows []rundir.SummaryRow) bool {
	for _, r := range rows {
		if !math.IsNaN(r.HeldoutLogPred) || !math.IsNaN(r.HeldoutAccuracy) {
			return true
		}
	}
	return false
}

// Recommended returns the L that rows recommend, 0 for none.
func Recommended(rows []rundir.SummaryRow) int {
	for _, r := range rows {
		if r.Recommended {
			return r.L
		}
	}
	return 0
}

// Chains returns the chains of rows, ascending.
func Chains(rows []rundir.SummaryRow) []int {
	var chains []int
	for _, r := range rows {
		if !slices.Contains(chains, r.Chain) {
			chains = append(chains, r.Chain)
		}
	}
	slices.Sort(chains)
	return chains
}

// addScores adds the line of chain c's values, moved by off along L, with
// their error bars where the standard error is finite and positive, in
// style.
func addScores(p *plot.Plot, rows []rundir.SummaryRow, c int, off float64, style draw.LineStyle, value, se func(rundir.SummaryRow) float64) error {
	var xs, ys []float64
	var bars errorPoints
	for _, r := range rows {
		if r.Chain != c {
			continue
		}
		x, v, e := float64(r.L)+off, value(r), se(r)
		xs, ys = append(xs, x), append(ys, v)
		if finite(v) && e > 0 && !math.IsInf(e, 0) {
			bars = append(bars, errorPoint{x, v, e})
		}
	}
	if len(bars) > 0 {
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return err
		}
		eb.LineStyle = style
		eb.LineStyle.Dashes = nil
		eb.CapWidth = vg.Points(5)
		p.Add(eb)
	}
	return addSeries(p, xs, ys, style, true)
}

// gapPanel draws the recommendation's numbers (one value per L, on the
// rows of the first chain): each L's gap to the best L's held-out log
// predictive with its paired standard error, and the tolerance the rule
// allows it.
func gapPanel(rows []rundir.SummaryRow, first int, newPanel func(title, y string) *plot.Plot) (*plot.Plot, error) {
	p := newPanel("Gap to the best L", "log predictive below the best L's")
	var xs, tol []float64
	for _, r := range rows {
		if r.Chain == first {
			xs, tol = append(xs, float64(r.L)), append(tol, r.LogPredTolerance)
		}
	}
	if err := addSeries(p, xs, tol, toleranceStyle, false); err != nil {
		return nil, err
	}
	gap := func(r rundir.SummaryRow) float64 { return r.LogPredGap }
	se := func(r rundir.SummaryRow) float64 { return r.LogPredGapSE }
	return p, addScores(p, rows, first, 0, gapStyle, gap, se)
}

// stability draws each chain's agreement with chain 1 against L (chain 1
// itself, always 1, left out), the agreement asked for, and above each L
// the stable programs of chain 1's as "stable/programs".
func stability(p *plot.Plot, rows []rundir.SummaryRow, chains []int, minAgreement float64) error {
	if minAgreement > 0 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range rows {
			lo, hi = math.Min(lo, float64(r.L)), math.Max(hi, float64(r.L))
		}
		l, err := plotter.NewLine(plotter.XYs{{X: lo - 0.5, Y: minAgreement}, {X: hi + 0.5, Y: minAgreement}})
		if err != nil {
			return err
		}
		l.LineStyle = askedStyle
		p.Add(l)
	}
	for ci, c := range chains[1:] {
		var xs, ys []float64
		for _, r := range rows {
			if r.Chain == c {
				xs, ys = append(xs, float64(r.L)), append(ys, r.Agreement)
			}
		}
		if err := addSeries(p, xs, ys, chainStyle(ci+1), true); err != nil {
			return err
		}
	}
	var at plotter.XYLabels
	for _, r := range rows {
		if r.Chain == chains[0] && r.StablePrograms >= 0 && r.Programs >= 0 {
			at.XYs = append(at.XYs, plotter.XY{X: float64(r.L), Y: 1.06})
			at.Labels = append(at.Labels, strconv.Itoa(r.StablePrograms)+"/"+strconv.Itoa(r.Programs))
		}
	}
	if len(at.XYs) == 0 {
		return nil
	}
	labels, err := plotter.NewLabels(at)
	if err != nil {
		return err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].Font = Font(7)
		labels.TextStyle[i].XAlign, labels.TextStyle[i].YAlign = draw.XCenter, draw.YCenter
	}
	p.Add(labels)
	return nil
}

// errorPoint is a score with its standard error, for plotter.YErrorBars.
type errorPoint struct{ x, y, se float64 }

type errorPoints []errorPoint

func (e errorPoints) Len() int                        { return len(e) }
func (e errorPoints) XY(i int) (float64, float64)     { return e[i].x, e[i].y }
func (e errorPoints) YError(i int) (float64, float64) { return e[i].se, e[i].se }
