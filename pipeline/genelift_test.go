package pipeline

import (
	"context"
	"errors"
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

// TestHoldSetting checks how hold_from and max_burn_in reach the sampler:
// under dropout noise only (symmetric noise keeps the paper's λ update),
// the hold at most burn_in, a longer burn-in only with a hold, and every
// combination the sampler accepts.
func TestHoldSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		noise                   gibbs.Noise
		burnIn, hold, maxBurnIn int
		wantHold, wantMax       int
		ok                      bool
	}{
		{gibbs.Dropout, 25, 0, 0, 0, 0, true},
		{gibbs.Dropout, 25, 15, 0, 15, 0, true},
		{gibbs.Dropout, 25, 40, 0, 25, 0, true},
		{gibbs.Dropout, 25, 15, 200, 15, 200, true},
		{gibbs.Dropout, 25, 0, 200, 0, 0, true},
		{gibbs.Dropout, 250, 15, 200, 15, 0, true},
		{gibbs.Symmetric, 25, 15, 200, 0, 0, true},
		{gibbs.Dropout, 25, -1, 0, 0, 0, false},
		{gibbs.Dropout, 25, 10, -5, 0, 0, false},
	} {
		c := DefaultFitConfig().Resolve(CountData)
		c.Shards, c.Output, c.Noise = "s", "o", givenNoise(tc.noise)
		c.BurnIn, c.HoldFrom, c.MaxBurnIn = tc.burnIn, tc.hold, tc.maxBurnIn
		if _, err := c.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: error %v, want ok %v", tc, err, tc.ok)
		}
		if !tc.ok {
			continue
		}
		sc := samplerConfig(c, 4, 1)
		if sc.HoldFrom != tc.wantHold || sc.MaxBurnIn != tc.wantMax {
			t.Errorf("%+v: the sampler holds from %d with a burn-in of at most %d, want %d and %d", tc, sc.HoldFrom, sc.MaxBurnIn, tc.wantHold, tc.wantMax)
		}
		if _, err := gibbs.NewSampler(context.Background(), gibbs.Data{}, sc); err != nil && errors.Is(err, gibbs.ErrConfig) {
			t.Errorf("%+v: the sampler refuses its configuration: %v", tc, err)
		}
	}
}
