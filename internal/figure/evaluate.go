package figure

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"scpipe/internal/stats/evaluate"
)

// ROC draws the ROC curve of every series, its AUC in the legend.
func ROC(title string, ss []evaluate.Series) ([]byte, error) {
	p := unitPlot(title, "false-positive rate", "true-positive rate")
	var legend []legendEntry
	for _, s := range ss {
		roc := s.Tally.ROC()
		if roc == nil {
			continue
		}
		xs, ys := make([]float64, len(roc)), make([]float64, len(roc))
		for j, pt := range roc {
			xs[j], ys[j] = pt.FPR, pt.TPR
		}
		style := chainStyle(len(legend))
		xs, ys = thin(xs, ys)
		if err := addSeries(p, xs, ys, style, false); err != nil {
			return nil, err
		}
		legend = append(legend, legendEntry{label: fmt.Sprintf("%s (AUC %.3f)", s.Name, s.Tally.Scores().AUC), style: style})
	}
	return unitFigure(p, legend)
}

// Calibration draws the calibration curve of every series: observed
// frequency against mean predicted probability per bin, with the bins' 95%
// Wilson intervals; a calibrated predictor follows the diagonal.
func Calibration(title string, ss []evaluate.Series) ([]byte, error) {
	p := unitPlot(title, "predicted probability (mean in bin)", "observed frequency")
	var legend []legendEntry
	for _, s := range ss {
		var xs, ys []float64
		var bars intervals
		for _, c := range s.Tally.Calibration() {
			if c.N == 0 {
				continue
			}
			xs, ys = append(xs, c.MeanPredicted), append(ys, c.Observed)
			bars = append(bars, interval{c.MeanPredicted, c.Observed, c.ObservedLow, c.ObservedHigh})
		}
		if len(xs) == 0 {
			continue
		}
		style := chainStyle(len(legend))
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return nil, err
		}
		eb.LineStyle, eb.CapWidth = style, 0
		eb.LineStyle.Dashes = nil
		p.Add(eb)
		if err := addSeries(p, xs, ys, style, true); err != nil {
			return nil, err
		}
		legend = append(legend, legendEntry{label: s.Name, style: style, mark: true})
	}
	return unitFigure(p, legend)
}

// unitPlot is a plot of the unit square with ticks every 0.2, light grid
// lines and the dashed diagonal.
func unitPlot(title, x, y string) *plot.Plot {
	p := NewPlot(title, x, y)
	ticks := plot.ConstantTicks{}
	for i := 0; i <= 5; i++ {
		v := float64(i) / 5
		ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprintf("%.1f", v)})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks, ticks
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = gridGrey, gridGrey
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.6), vg.Points(0.6)
	p.Add(g)
	diag, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	diag.LineStyle = draw.LineStyle{Color: color.Gray{Y: 0x99}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}}
	p.Add(diag)
	return p
}

// unitFigure renders a unit-square plot with its legend on the right, or
// a note where nothing was drawn.
func unitFigure(p *plot.Plot, legend []legendEntry) ([]byte, error) {
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	if len(legend) == 0 {
		if err := note(p, "no predictions of both outcomes"); err != nil {
			return nil, err
		}
	}
	return Render(vg.Points(560), vg.Points(380), func(dc draw.Canvas) {
		p.Draw(withLegend(dc, vg.Points(170), legend))
	})
}

// thin leaves out the points of a curve less than 1/800 of the unit
// square from the last one kept (half a pixel of a 400-pixel plot), but
// never the first or the last: an ROC curve of 65 536 bins keeps its shape
// in a few hundred points.
func thin(xs, ys []float64) (txs, tys []float64) {
	const near = 1.0 / 800
	lx, ly := math.Inf(1), math.Inf(1)
	for j := range xs {
		if j != 0 && j != len(xs)-1 && math.Hypot(xs[j]-lx, ys[j]-ly) < near {
			continue
		}
		txs, tys = append(txs, xs[j]), append(tys, ys[j])
		lx, ly = xs[j], ys[j]
	}
	return txs, tys
}

// interval is a value with its interval, for plotter.YErrorBars.
type interval struct{ x, y, lo, hi float64 }

type intervals []interval

func (e intervals) Len() int                        { return len(e) }
func (e intervals) XY(i int) (float64, float64)     { return e[i].x, e[i].y }
func (e intervals) YError(i int) (float64, float64) { return e[i].y - e[i].lo, e[i].hi - e[i].y }
