package report

import (
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"scpipe/internal/figure"
)

// grid is the values of a heat map, rows × cols row-major with row 0 drawn
// at the top, on the integer coordinates 0 … cols-1 and 0 … rows-1. Its
// Min and Max tell plotter.NewHeatMap the range of a posterior mean, so
// that colours mean the same in every figure.
type grid struct {
	rows, cols int
	z          []float64
}

func (g grid) Dims() (c, r int)     { return g.cols, g.rows }
func (g grid) Z(c, r int) float64   { return g.z[(g.rows-1-r)*g.cols+c] }
func (g grid) X(c int) float64      { return float64(c) }
func (g grid) Y(r int) float64      { return float64(r) }
func (g grid) Min() float64         { return 0 }
func (g grid) Max() float64         { return 1 }
func (g grid) rowY(row int) float64 { return float64(g.rows - 1 - row) }

// rasterHeatMap is a heat map drawn as one image, whatever its size: the
// SVG holds one <image> element rather than one rectangle per value. It
// reports no glyph boxes, which plotter.HeatMap gives per value (a
// thousand genes × ten codes would be ten thousand, only to pad the plot).
type rasterHeatMap struct{ *plotter.HeatMap }

func (rasterHeatMap) GlyphBoxes(*plot.Plot) []plot.GlyphBox { return nil }

// probabilityColors maps a posterior mean in [0, 1] to white (0) through
// blue to dark navy (1): ColorBrewer's Blues, interpolated with constant
// steps of luminance.
func probabilityColors() palette.ColorMap {
	hex := []uint32{0x08306b, 0x2171b5, 0x6baed6, 0xc6dbef, 0xffffff} // by rising luminance
	controls := make([]color.Color, len(hex))
	for i, h := range hex {
		controls[i] = color.RGBA{uint8(h >> 16), uint8(h >> 8), uint8(h), 0xff}
	}
	cm, err := moreland.NewLuminance(controls)
	if err != nil {
		panic(err) // the controls above rise in luminance
	}
	cm.SetMin(0)
	cm.SetMax(1)
	return palette.Reverse(cm)
}

// newHeatMap makes the raster heat map of g in the report's colours; NaN
// values are drawn grey.
func newHeatMap(g grid) rasterHeatMap {
	h := plotter.NewHeatMap(g, probabilityColors().Palette(256))
	h.Rasterized = true
	h.NaN = figure.MissingGrey
	return rasterHeatMap{h}
}

// colorBarHeight is the strip under a heat map that holds its colour bar.
const colorBarHeight = 54

// colorBar draws the colour scale of a posterior mean.
func colorBar(label string) *plot.Plot {
	p := figure.NewPlot("", label, "")
	p.Add(&plotter.ColorBar{ColorMap: probabilityColors()})
	p.HideY()
	p.X.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.5, Label: "0.5"}, {Value: 1, Label: "1"}}
	return p
}

// labelTicks puts labels at the integer positions 0 … len(labels)-1.
func labelTicks(labels []string) plot.ConstantTicks {
	t := make(plot.ConstantTicks, len(labels))
	for i, l := range labels {
		t[i] = plot.Tick{Value: float64(i), Label: l}
	}
	return t
}

// maxGeneLabels is the most genes the genes heat map names one by one.
const maxGeneLabels = 80

// genesFigure draws the codes × genes heat map of one L: the posterior mean
// of u of each code (rows, top to bottom in codes, the display order) for
// each gene of some program of the run (columns, in the hierarchy's gene
// order, the same in every L so that the splits line up). Rows of codes
// that are no program (no cell uses them: their genes sit at the prior)
// are grey.
func genesFigure(id string, mean []float64, L int, codes []int, rowLabels []string, program []bool, genes []int, symbols []string) (*pageFigure, error) {
	g := grid{rows: len(codes), cols: len(genes), z: make([]float64, len(codes)*len(genes))}
	for r, k := range codes {
		for c, gene := range genes {
			v := mean[gene*L+k]
			if !program[r] {
				v = nan
			}
			g.z[r*g.cols+c] = v
		}
	}
	p := figure.NewPlot("", "", "")
	p.Add(newHeatMap(g))
	yl := make([]string, len(rowLabels))
	for r := range rowLabels {
		yl[len(rowLabels)-1-r] = rowLabels[r]
	}
	p.Y.Tick.Marker = labelTicks(yl)
	width := vg.Points(720)
	height := vg.Points(float64(40 + colorBarHeight + max(22*len(codes), 90)))
	if len(genes) <= maxGeneLabels {
		names := make([]string, len(genes))
		for i, gene := range genes {
			names[i] = symbols[gene]
		}
		p.X.Tick.Marker = labelTicks(names)
		p.X.Tick.Label.Rotation = 1.5707963267948966
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		height += vg.Points(60)
	} else {
		p.X.Tick.Marker = plot.ConstantTicks{}
		p.X.Label.Text = itoa(len(genes)) + " genes of some program, in the hierarchy's order"
	}
	svg, err := figure.Render(width, height, func(dc draw.Canvas) {
		bar := vg.Points(colorBarHeight)
		main := draw.Crop(dc, 0, 0, bar, 0)
		p.Draw(main)
		legend := draw.Crop(dc, width-vg.Points(230), 0, 0, -(height - bar))
		colorBar("posterior mean of u (gene in code)").Draw(legend)
	})
	if err != nil {
		return nil, err
	}
	return &pageFigure{ID: id, SVG: svg}, nil
}

// maxBands is the number of bands of cells in the cell usage heat map: a
// million cells are drawn in this many rows of equal numbers of cells.
const maxBands = 400

// cellsFigure draws the cell usage heat map of one L: cells (rows) ordered
// by usage pattern, in at most maxBands bands of equal numbers of cells,
// against codes (columns, in the display order codes); each band shows its
// cells' mean posterior usage. Patterns of at least 2% of the cells are
// named on the right with their share.
func cellsFigure(id string, u *usage, codes []int, colLabels []string) (*pageFigure, error) {
	z, rows, order, start := u.bands(codes, maxBands)
	g := grid{rows: rows, cols: len(codes), z: z}
	p := figure.NewPlot("", "code", "cells, ordered by usage pattern ("+thousands(u.Cells)+")")
	p.Add(newHeatMap(g))
	p.X.Tick.Marker = labelTicks(colLabels)
	p.Y.Tick.Marker = cellTicks{cells: u.Cells, rows: rows}
	var xys plotter.XYs
	var labels []string
	pos := make(map[int]int, len(codes)) // code → column
	for j, k := range codes {
		pos[k] = j
	}
	for i, pi := range order {
		share := float64(u.Count[pi]) / float64(u.Cells)
		if share < 0.02 {
			continue
		}
		mid := start[i] + share*float64(rows)/2 // in bands from the top
		xys = append(xys, plotter.XY{X: float64(len(codes)) - 0.5, Y: float64(rows) - 0.5 - mid})
		labels = append(labels, patternLabel(u.Patterns[pi], codes, colLabels, pos)+" · "+percent(share))
	}
	if len(labels) > 0 {
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return nil, err
		}
		st := text.Style{Font: figure.Font(8), Color: color.Black, XAlign: draw.XLeft, YAlign: draw.YCenter,
			Handler: plot.DefaultTextHandler}
		for i := range l.TextStyle {
			l.TextStyle[i] = st
		}
		l.Offset = vg.Point{X: vg.Points(4)}
		p.Add(l)
	}
	width, height := vg.Points(float64(200+22*len(codes))), vg.Points(420)
	svg, err := figure.Render(width, height, func(dc draw.Canvas) {
		bar := vg.Points(colorBarHeight)
		p.Draw(draw.Crop(dc, 0, 0, bar, 0))
		colorBar("posterior mean of z (cell uses code)").Draw(draw.Crop(dc, 0, 0, 0, -(height - bar)))
	})
	if err != nil {
		return nil, err
	}
	return &pageFigure{ID: id, SVG: svg}, nil
}

// patternLabel names a usage pattern by the labels of its codes, in
// display order: "1+3", or "none".
func patternLabel(pattern string, codes []int, labels []string, pos map[int]int) string {
	var used []string
	for _, k := range codes {
		if pattern[k] == 1 {
			used = append(used, labels[pos[k]])
		}
	}
	if len(used) == 0 {
		return "none"
	}
	return strings.Join(used, "+")
}

// cellTicks marks the cell axis in cells counted from the top.
type cellTicks struct{ cells, rows int }

func (t cellTicks) Ticks(lo, hi float64) []plot.Tick {
	perRow := float64(t.cells) / float64(t.rows)
	top := float64(t.rows) - 0.5 // y of the first cell's edge
	var ticks []plot.Tick
	for _, tk := range (plot.DefaultTicks{}).Ticks(0, float64(t.cells)) {
		if tk.Label == "" || tk.Value < 0 || tk.Value > float64(t.cells) {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: top - tk.Value/perRow, Label: figure.Compact(tk.Value, 3)})
	}
	return ticks
}
