package shard

import (
	"slices"
	"strings"
	"testing"
)

// TestManifestSamples checks the samples' rows: they must tile the cells
// in order under distinct names; CellSamples reads them back per cell.
func TestManifestSamples(t *testing.T) {
	t.Parallel()
	two := func() []Sample {
		return []Sample{{Name: "a", FirstCell: 0, CellsBefore: 3, CellsAfter: 2}, {Name: "b", FirstCell: 2, CellsBefore: 3, CellsAfter: 3}}
	}
	cases := []struct {
		name string
		edit func(m *Manifest)
		err  string
	}{
		{"good", func(*Manifest) {}, ""},
		{"none", func(m *Manifest) { m.Samples = nil }, ""},
		{"gap", func(m *Manifest) { m.Samples[1].FirstCell = 3 }, "first cell 3, want 2"},
		{"short", func(m *Manifest) { m.Samples[1].CellsAfter, m.Samples[1].CellsBefore = 2, 2 }, "add up to 4, the shard holds 5"},
		{"repeated name", func(m *Manifest) { m.Samples[1].Name = "a" }, `name "a" repeats`},
		{"tab in name", func(m *Manifest) { m.Samples[0].Name = "a\tb" }, "bad name"},
		{"more after than before", func(m *Manifest) { m.Samples[0].CellsBefore = 1 }, "2 cells after the filter of 1"},
		{"values", func(m *Manifest) { m.SampleColumns = []string{"donor"} }, "0 values for 1 sample columns"},
		{"columns without samples", func(m *Manifest) { m.Samples, m.SampleColumns = nil, []string{"donor"} }, "without samples"},
	}
	for _, tc := range cases {
		m := &Manifest{Cells: 5, Samples: two()}
		tc.edit(m)
		err := m.checkSamples()
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
	m := &Manifest{Cells: 5, Samples: two()}
	if got := m.CellSamples(); !slices.Equal(got, []uint16{0, 0, 1, 1, 1}) {
		t.Errorf("CellSamples = %v", got)
	}
	if (&Manifest{Cells: 5}).CellSamples() != nil {
		t.Error("CellSamples of one input not nil")
	}
}
