package pipeline

import (
	"fmt"
	"math"

	"scpipe/imagegrid"
	"scpipe/rundir"
)

// figureHeight is the screen height an image of a figure comes closest to
// from below: images are drawn at a whole number of screen pixels per image
// pixel (at least one).
const figureHeight = 136

// figure draws a fit of image data like the paper's Fig. calc: its codes
// (posterior means of u) in the first row, then for each of the first
// cells what the fit saw of it (pale blue: not seen), the posterior mean of
// its reconstruction c = 1 − ∏_l(1 − ẑ_l û_l) and its usage ẑ as a strip.
func (in *evalInput) figure(f rundir.Fit, m *fitModel, cells int) (*imagegrid.Figure, error) {
	lay, err := imagegrid.Layout(m.geneNames)
	if err != nil {
		return nil, fmt.Errorf("evaluate: --images: %s: %w", f.Dir, err)
	}
	fig := &imagegrid.Figure{Title: fmt.Sprintf("L = %d, chain %d: codes, and data with posterior means", f.L, f.Chain),
		Scale: max(1, figureHeight/lay.Height)}
	codes := imagegrid.Row{Label: "codes"}
	for l := range m.L {
		codes.Panels = append(codes.Panels, lay.Panel(fmt.Sprintf("code %d", l+1), func(d int) float64 { return m.uMean[d*m.L+l] }))
	}
	if m.hk != nil {
		codes.Panels = append(codes.Panels, lay.Panel("housekeeping", func(d int) float64 { return m.hk[d] }))
	}
	fig.Rows = append(fig.Rows, codes)
	r := &cellRow{obs: make([]uint64, in.words)}
	for c := range min(cells, in.src.Manifest().Cells) {
		in.load(r, m, c)
		seen := lay.Panel("data", func(d int) float64 {
			if r.fit[d/64]>>(d%64)&1 == 0 {
				return math.NaN()
			}
			return float64(r.x[d/64] >> (d % 64) & 1)
		})
		mean := lay.Panel("posterior mean", func(d int) float64 { return 1 - m.prod(r, c, d) })
		usage := strip("ẑ", m.zMean[c*m.L:(c+1)*m.L], fig.Scale)
		fig.Rows = append(fig.Rows, imagegrid.Row{Label: m.barcodes[c], Panels: []imagegrid.Panel{seen, mean, usage}})
	}
	return fig, nil
}

// stripSide is the screen size of a square of a usage strip.
const stripSide = 12

// strip draws values as a row of squares about stripSide screen pixels
// wide at the figure's scale.
func strip(title string, values []float64, scale int) imagegrid.Panel {
	k := max(1, (stripSide+scale-1)/scale)
	p := imagegrid.Panel{Title: title, Width: len(values) * k, Height: k}
	for range k {
		for _, v := range values {
			for range k {
				p.Values = append(p.Values, v)
			}
		}
	}
	return p
}
