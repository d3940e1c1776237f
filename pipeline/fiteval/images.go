package fiteval

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"

	"scpipe/internal/figure/imagegrid"
	"scpipe/internal/rundir"
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
		codes.Panels = append(codes.Panels, lay.Panel(fmt.Sprintf("code %d", l+1), func(d int) float64 { return m.U[d*m.L+l] }))
	}
	if m.Housekeeping != nil {
		codes.Panels = append(codes.Panels, lay.Panel("housekeeping", func(d int) float64 { return m.Housekeeping[d] }))
	}
	fig.Rows = append(fig.Rows, codes)
	layers, err := layerRows(f.Dir, lay)
	if err != nil {
		return nil, err
	}
	fig.Rows = append(fig.Rows, layers...)
	r := &cellRow{obs: make([]uint64, in.words)}
	for c := range min(cells, in.src.Manifest().Cells) {
		in.load(r, m, c)
		seen := lay.Panel("data", func(d int) float64 {
			if r.fit[d/64]>>(d%64)&1 == 0 {
				return math.NaN()
			}
			return float64(r.x[d/64] >> (d % 64) & 1)
		})
		mean := lay.Panel("posterior mean", func(d int) float64 { return 1 - m.Uncovered(c, d, r.used) })
		usage := strip("ẑ", m.Z[c*m.L:(c+1)*m.L], fig.Scale)
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

// layerRows draws the prototypes of the layers above the first of a
// multi-layer fit, a row per layer (the paper's Fig. deep_calc): each
// code of the layer fed forward to the pixels. A single-layer fit has none.
func layerRows(fit string, lay imagegrid.Pixels) ([]imagegrid.Row, error) {
	var rows []imagegrid.Row
	for k := 2; ; k++ {
		p, err := rundir.ReadCodes(filepath.Join(rundir.LayerDir(fit, k), rundir.PrototypesFile))
		if errors.Is(err, fs.ErrNotExist) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("evaluate: --images: %w", err)
		}
		row := imagegrid.Row{Label: fmt.Sprintf("layer %d", k)}
		for l := range p.L {
			row.Panels = append(row.Panels, lay.Panel(fmt.Sprintf("code %d", l+1), func(d int) float64 { return p.Mean[d*p.L+l] }))
		}
		rows = append(rows, row)
	}
}
