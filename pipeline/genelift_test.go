package pipeline

import (
	"math"
	"testing"
)

// TestPlugInGeneLift checks the plug-in predictive with per-gene offsets:
// offset 0 is the cell's own rates; a covered entry is a one with
// probability 1 − ρ(1 − β) under the cell's ρ; a negative offset raises
// the background and a positive one lowers it.
func TestPlugInGeneLift(t *testing.T) {
	t.Parallel()
	const dropout, background = 0.4, 0.05
	rho := dropout / (1 - background)
	cells := plugIn{lambda: math.NaN(), cellDropout: []float64{dropout}, cellBackground: []float64{background}}
	genes := cells
	genes.geneLift = []float64{0, -1, 1}
	for _, prod := range []float64{0, 0.3, 1} {
		if got, want := genes.p(0, 0, prod), cells.p(0, 0, prod); math.Abs(got-want) > 1e-12 {
			t.Errorf("offset 0, ∏ = %v: %v, the cell's own %v", prod, got, want)
		}
	}
	for d := range 3 {
		off, on := genes.p(0, d, 1), genes.p(0, d, 0)
		if want := 1 - rho*(1-off); math.Abs(on-want) > 1e-12 {
			t.Errorf("gene %d: covered %v, want 1 − ρ(1 − β) = %v", d, on, want)
		}
	}
	if !(genes.p(0, 1, 1) > background && genes.p(0, 2, 1) < background) {
		t.Errorf("backgrounds at offsets −1, 0, 1: %v, %v, %v; want falling", genes.p(0, 1, 1), genes.p(0, 0, 1), genes.p(0, 2, 1))
	}
}
