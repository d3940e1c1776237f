package predictive

import (
	"math"
	"strings"
	"testing"

	"scpipe/gibbs"
	"scpipe/internal/rundir"
)

// TestUncovered checks the coverage product against its definition over
// every code: codes a cell does not use (ẑ = 0) are left out, and the
// housekeeping code counts for every cell.
func TestUncovered(t *testing.T) {
	t.Parallel()
	m := Means{L: 3, Z: []float64{0.5, 0, 1, 0, 0, 0}, U: []float64{0.2, 0.9, 0.4, 1, 1, 1}}
	for _, hk := range [][]float64{nil, {0.1, 0.3}} {
		m.Housekeeping = hk
		for n := range 2 {
			used := m.Used(n, nil)
			if want := []int{0, 2}; n == 0 && (len(used) != 2 || used[0] != want[0] || used[1] != want[1]) || n == 1 && len(used) != 0 {
				t.Errorf("cell %d uses %v", n, used)
			}
			for d := range 2 {
				want := 1.0
				if hk != nil {
					want = 1 - hk[d]
				}
				for l := range m.L {
					want *= 1 - m.Z[n*m.L+l]*m.U[d*m.L+l]
				}
				if got := m.Uncovered(n, d, used); math.Abs(got-want) > 1e-15 {
					t.Errorf("housekeeping %v, cell %d, gene %d: %v, want %v", hk, n, d, got, want)
				}
			}
		}
	}
}

// TestPlugInGeneLift checks the plug-in predictive with per-gene offsets:
// offset 0 is the cell's own rates; a covered entry is a one with
// probability 1 − ρ(1 − β) under the cell's ρ; a negative offset raises
// the background and a positive one lowers it.
func TestPlugInGeneLift(t *testing.T) {
	t.Parallel()
	const dropout, background = 0.4, 0.05
	rho := dropout / (1 - background)
	cells := PlugIn{lambda: math.NaN(), cellDropout: []float64{dropout}, cellBackground: []float64{background}}
	genes := cells
	genes.genes = newGeneLifts([]float64{0, -1, 1})
	for _, prod := range []float64{0, 0.3, 1} {
		if got, want := genes.P(0, 0, prod), cells.P(0, 0, prod); math.Abs(got-want) > 1e-12 {
			t.Errorf("offset 0, ∏ = %v: %v, the cell's own %v", prod, got, want)
		}
	}
	for d := range 3 {
		off, on := genes.P(0, d, 1), genes.P(0, d, 0)
		if want := 1 - rho*(1-off); math.Abs(on-want) > 1e-12 {
			t.Errorf("gene %d: covered %v, want 1 − ρ(1 − β) = %v", d, on, want)
		}
	}
	if !(genes.P(0, 1, 1) > background && genes.P(0, 2, 1) < background) {
		t.Errorf("backgrounds at offsets −1, 0, 1: %v, %v, %v; want falling", genes.P(0, 1, 1), genes.P(0, 0, 1), genes.P(0, 2, 1))
	}
}

// TestCellMatchesPlugIn checks that a Cell's predictive equals PlugIn.P bit
// for bit, under every likelihood a fit writes: symmetric noise, shared
// and per-cell rates, per-gene offsets of a few levels (worked out once
// per level) and of more values than a Cell keeps apart (per entry).
func TestCellMatchesPlugIn(t *testing.T) {
	t.Parallel()
	const genes = 300
	levels, spread := make([]float64, genes), make([]float64, genes)
	for d := range genes {
		levels[d] = -0.75 + 0.25*float64(d%7)
		spread[d] = -1 + float64(d)/genes
	}
	cells := rundir.Cells{Dropout: []float64{0.4, 0.7}, Background: []float64{0.05, 0.2}}
	for _, tc := range []struct {
		name  string
		last  rundir.TraceRow
		cells rundir.Cells
		lift  []float64
	}{
		{"symmetric", rundir.TraceRow{Lambda: 1.7}, rundir.Cells{}, nil},
		{"shared rates", rundir.TraceRow{Lambda: math.NaN(), Dropout: 0.5, Background: 0.03}, rundir.Cells{}, nil},
		{"cell rates", rundir.TraceRow{Lambda: math.NaN()}, cells, nil},
		{"gene levels", rundir.TraceRow{Lambda: math.NaN()}, cells, levels},
		{"gene offsets", rundir.TraceRow{Lambda: math.NaN()}, cells, spread},
		{"samples' levels", rundir.TraceRow{Lambda: math.NaN()}, cells, levels},
	} {
		codes := rundir.Codes{GeneLift: tc.lift}
		if tc.name == "samples' levels" {
			tc.cells.Samples = []string{"b", "a"}
			codes.Samples, codes.SampleGeneLift = []string{"a", "b"}, [][]float64{spread, levels}
		}
		q := NewPlugIn(tc.last, tc.cells, codes)
		if want := strings.HasSuffix(tc.name, "levels"); (q.genes != nil && q.genes.of != nil) != want {
			t.Errorf("%s: offsets kept apart per level: %v, want %v", tc.name, !want, want)
		}
		var c Cell
		for n := range 2 {
			q.Cell(n, &c)
			for d := range genes {
				for _, u := range []float64{0, 0.013, 0.5, 0.99, 1} {
					if got, want := c.P(d, u), q.P(n, d, u); math.Float64bits(got) != math.Float64bits(want) {
						t.Fatalf("%s: cell %d, gene %d, ∏ = %v: %v, PlugIn.P %v", tc.name, n, d, u, got, want)
					}
				}
			}
		}
	}
}

// TestPlugInSampleLifts checks that with the samples' own gene levels
// each cell's entries take its sample's offsets, matched by name (the
// tables list the samples in their own orders), and that a cell of a
// sample the codes do not list takes the genes' mean offsets.
func TestPlugInSampleLifts(t *testing.T) {
	t.Parallel()
	mean, a, b := []float64{0, 0.5}, []float64{-1, 0.25}, []float64{1, 0.75}
	cells := rundir.Cells{Samples: []string{"b", "a", "c"}, Dropout: []float64{0.4, 0.4, 0.4}, Background: []float64{0.05, 0.05, 0.05}}
	codes := rundir.Codes{GeneLift: mean, Samples: []string{"a", "b"}, SampleGeneLift: [][]float64{a, b}}
	q := NewPlugIn(rundir.TraceRow{Lambda: math.NaN()}, cells, codes)
	for n, lift := range [][]float64{b, a, mean} {
		for d := range 2 {
			for _, u := range []float64{0, 0.4, 1} {
				on, off := gibbs.EntryRates(0.4, 0.05, lift[d])
				if got, want := q.P(n, d, u), off+(on-off)*(1-u); math.Abs(got-want) > 1e-15 {
					t.Errorf("cell %d (sample %s), gene %d, ∏ = %v: %v, want %v (offset %v)", n, cells.Samples[n], d, u, got, want, lift[d])
				}
			}
		}
	}
}
