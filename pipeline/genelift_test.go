package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"scpipe/gibbs"
)

// TestGeneLevelsSetting checks gene_levels: 1, 2, 4 and 8 are taken and
// reach the sampler as they are (which ignores them under symmetric noise
// or without cell levels: gibbs.TestLevelsNeedTheirLikelihood), other
// values are refused, and a run's config.toml written before the key
// existed reads as none, while a fresh run's default is 8.
func TestGeneLevelsSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		genes, cells int
		ok           bool
	}{
		{1, 8, true}, {2, 8, true}, {4, 8, true}, {8, 8, true}, {8, 2, true},
		{0, 8, true}, {8, 1, true}, {3, 8, false}, {16, 8, false}, {-1, 8, false},
	} {
		c := DefaultFitConfig().Resolve(CountData)
		c.Shards, c.Output = "s", "o"
		c.GeneLevels, c.CellLevels = tc.genes, tc.cells
		_, err := c.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("gene_levels %d, cell_levels %d: error %v, want ok %v", tc.genes, tc.cells, err, tc.ok)
		}
		if !tc.ok {
			continue
		}
		if got := samplerConfig(c, 5, 1); got.GeneLevels != tc.genes || got.CellLevels != tc.cells {
			t.Errorf("gene_levels %d, cell_levels %d: the sampler's %d and %d", tc.genes, tc.cells, got.GeneLevels, got.CellLevels)
		}
	}
	p := filepath.Join(t.TempDir(), "old.toml")
	if err := os.WriteFile(p, []byte("cell_levels = 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _, err := LoadFitConfig(p, FitConfig{}) // as --resume reads a run's
	if err != nil {
		t.Fatal(err)
	}
	c.Shards, c.Output, c.Noise = "s", "o", givenNoise(gibbs.Dropout)
	if got := samplerConfig(c, 5, 1).GeneLevels; got > 1 {
		t.Errorf("a run's config without gene_levels fits with %d gene levels, want none", got)
	}
	if d := DefaultFitConfig().GeneLevels; d != 8 {
		t.Errorf("default gene_levels %d, want 8", d)
	}
}
