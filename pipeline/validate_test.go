package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/gibbs"
	"scpipe/simulate"

	"scpipe/simulate/simtest"
)

// countShards simulates single-cell-like counts into shards: the auto
// model fits them with a housekeeping code.
func countShards(t *testing.T) string {
	t.Helper()
	p := simulate.DefaultParams()
	p.Kind, p.CodeDensity, p.UsageDensity, p.FlipOn, p.FlipOff = simulate.SingleCell, 0, 0, 0, 0
	p.Cells, p.Genes, p.SingleCell = 300, 150, simulate.DefaultSingleCell()
	shards, _ := simtest.Shards(t, p)
	return shards
}

// TestPerProgramPriors: per-program priors for the L programs fit with the
// auto model of counts, whose housekeeping code keeps its own prior
// (`scpipe fit --L 4 --prior-u 0.1,0.1,0.2,0.2` was refused by the sampler
// after the run was written: "PriorU has 4 probabilities, want 1 or L = 5").
func TestPerProgramPriors(t *testing.T) {
	t.Parallel()
	cfg := DefaultFitConfig()
	cfg.Shards, cfg.Output = countShards(t), filepath.Join(t.TempDir(), "run")
	cfg.L, cfg.Chains, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Threads = LSizes{4}, 1, 4, 4, 1, 2
	if err := cfg.PriorU.UnmarshalText([]byte("0.1,0.1,0.2,0.2")); err != nil {
		t.Fatal(err)
	}
	rep, err := Fit(context.Background(), cfg, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fitted != 1 {
		t.Errorf("fitted %d, want 1", rep.Fitted)
	}
	stored, err := storedConfig(cfg.Output)
	if err != nil || !stored.Housekeeping.On {
		t.Errorf("the run's model: %+v, %v; want a housekeeping code", stored, err)
	}
}

// TestRefusedSettingsWriteNothing: a fit refused for its settings names
// the setting by its key, in the sampler's words (the one check of them),
// and leaves nothing: no run folder, no lock beside it.
func TestRefusedSettingsWriteNothing(t *testing.T) {
	t.Parallel()
	shards := countShards(t)
	for _, tc := range []struct {
		key string
		mod func(c *FitConfig)
	}{
		{"prior_u", func(c *FitConfig) { c.PriorU = givenPrior(gibbs.FixedPrior(0.1, 0.2, 0.3)) }},
		{"prior_z", func(c *FitConfig) { c.PriorZ = givenPrior(gibbs.FixedPrior(1.5)) }},
		{"thin", func(c *FitConfig) { c.Thin = c.Samples + 1 }},
		{"burn_in", func(c *FitConfig) { c.BurnIn = -1 }},
		{"samples", func(c *FitConfig) { c.Samples = gibbs.MaxSweeps + 1 }},
		{"cell_levels", func(c *FitConfig) { c.CellLevels = 3 }},
		{"gene_levels", func(c *FitConfig) { c.GeneLevels = 16 }},
		{"init", func(c *FitConfig) { c.Init = 9 }},
		{"start_sweeps", func(c *FitConfig) { c.Starts, c.StartSweeps = 2, c.BurnIn+1 }},
		{"noise", func(c *FitConfig) { c.Noise = givenNoise(gibbs.Noise(7)) }},
	} {
		parent := t.TempDir()
		cfg := DefaultFitConfig()
		cfg.Shards, cfg.Output = shards, filepath.Join(parent, "runs", "run")
		cfg.L, cfg.Chains, cfg.BurnIn, cfg.Samples, cfg.Threads = LSizes{4}, 1, 6, 4, 2
		tc.mod(&cfg)
		_, err := Fit(context.Background(), cfg, FitOptions{})
		var se *SettingError
		if !errors.As(err, &se) || se.Key != tc.key || !strings.HasPrefix(se.Msg, tc.key+" ") || !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want a refusal naming %s", tc.key, err, tc.key)
		}
		if left, _ := os.ReadDir(parent); len(left) > 0 {
			t.Errorf("%s: refused, left %s", tc.key, left[0].Name())
		}
	}
}

// TestRefusedSourceWritesNothing: a fit refused once it holds the run's
// lock (its fixed codes' source missing or unreadable, found only then)
// leaves nothing either: not the folders it made for the lock.
func TestRefusedSourceWritesNothing(t *testing.T) {
	t.Parallel()
	shards := countShards(t)
	for _, tc := range []struct {
		name, fixed string
	}{
		{"missing source", "missing.gmt"},
		{"source without sets", "empty.gmt"},
	} {
		parent := t.TempDir()
		src := filepath.Join(t.TempDir(), tc.fixed)
		if tc.fixed == "empty.gmt" {
			if err := os.WriteFile(src, nil, 0o666); err != nil {
				t.Fatal(err)
			}
		}
		cfg := DefaultFitConfig()
		cfg.Shards, cfg.Output = shards, filepath.Join(parent, "runs", "new", "run")
		cfg.L, cfg.Chains, cfg.BurnIn, cfg.Samples, cfg.Threads = LSizes{4}, 1, 6, 4, 2
		cfg.FixedCodes = src
		if _, err := Fit(context.Background(), cfg, FitOptions{}); err == nil || !strings.Contains(err.Error(), tc.fixed) {
			t.Errorf("%s: %v, want a refusal naming %s", tc.name, err, tc.fixed)
		}
		if left, _ := os.ReadDir(parent); len(left) > 0 {
			t.Errorf("%s: refused, left %s", tc.name, left[0].Name())
		}
	}
}
