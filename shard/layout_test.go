package shard

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataBytes: DataBytes is the sum of the data files Create writes,
// masked or not, with a last block and a last tile cut short, and refuses
// what Create refuses.
func TestDataBytes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	for _, tc := range []struct {
		cells, genes int
		l            Layout
		masked       bool
	}{
		{150, 70, Layout{RowsPerBlock: 64, GenesPerTile: 30}, true},
		{150, 70, Layout{RowsPerBlock: 64, GenesPerTile: 30}, false},
		{1, 1, Layout{}, false},
		{300, 129, Layout{}, true},
		{640, 64, Layout{RowsPerBlock: 128}, false},
	} {
		x := randomDense(rng, tc.cells, tc.genes, 0.1)
		var mask *dense
		if tc.masked {
			mask = randomDense(rng, tc.cells, tc.genes, 0.9)
		}
		dst := filepath.Join(t.TempDir(), "s")
		m := Manifest{GeneIDs: names("ENSG", tc.genes), GeneNames: names("G", tc.genes), Barcodes: names("AAAC-", tc.cells)}
		writeShard(t, dst, tc.l, x, mask, m, 1)
		var files int64
		bins, err := filepath.Glob(filepath.Join(dst, "*.bin"))
		if err != nil || len(bins) == 0 {
			t.Fatalf("no data files in %s: %v", dst, err)
		}
		for _, p := range bins {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			files += fi.Size()
		}
		l := tc.l
		l.Cells, l.Genes, l.Masked = tc.cells, tc.genes, tc.masked
		if got, err := l.DataBytes(); err != nil || got != files {
			t.Errorf("%d × %d %+v: DataBytes = %d, %v; the files hold %d", tc.cells, tc.genes, tc.l, got, err, files)
		}
	}
	if _, err := (Layout{Cells: MaxDim + 1, Genes: 10}).DataBytes(); err == nil || !strings.Contains(err.Error(), "cells") {
		t.Errorf("DataBytes of %d cells: %v, want Create's refusal", MaxDim+1, err)
	}
	// The largest layout sums without overflow or a loop per block.
	if n, err := (Layout{Cells: MaxDim, Genes: MaxDim}).DataBytes(); err != nil || n < int64(MaxDim)*(MaxDim/64)*8 {
		t.Errorf("DataBytes of %d × %d: %d, %v", MaxDim, MaxDim, n, err)
	}
}
