package pipeline

import (
	"context"
	"fmt"
	"math/bits"
	"path/filepath"
	"testing"

	"scpipe/gibbs"
	"scpipe/simulate"

	"scpipe/simulate/simtest"
)

// completionParams is the paper's completion experiment (section 4.2):
// 250 × 250, L = 5, noise-free, U and Z of density q = 0.36, so that
// 1 − (1 − q²)⁵ ≈ ½ of the entries are ones.
func completionParams(seed uint64) simulate.Params {
	return simulate.Params{Cells: 250, Genes: 250, L: 5, CodeDensity: 0.36, UsageDensity: 0.36, Seed: seed}
}

// majority returns the accuracy of predicting every entry of the planted
// matrix as its more common value: the chance level of completion.
func majority(tr *simulate.Truth) float64 {
	ones := 0
	for g := range tr.Genes {
		var cov [4]uint64 // 250 cells
		for l := range tr.L {
			if tr.U[l][g/64]>>uint(g%64)&1 != 0 {
				for w := range cov {
					cov[w] |= tr.Z[l][w]
				}
			}
		}
		for _, w := range cov {
			ones += bits.OnesCount64(w)
		}
	}
	f := float64(ones) / float64(tr.Cells*tr.Genes)
	return max(f, 1-f)
}

// TestCompletionThroughDefaults runs matrix completion as a user would,
// through pipeline.Fit with DefaultFitConfig (the auto model, which for
// simulated binary data is symmetric noise without a housekeeping code;
// the auto prior; cluster start, 4 starts, 25 + 100 sweeps) and only the
// data's settings changed: L = 5, one chain, 0.5% or 1% of the entries
// observed (holdout 0.995, 0.99). On three seeds each, the held-out
// accuracy must beat chance (the majority value) by at least 5 points on
// every seed and by 8 (0.5% observed) and 14 (1%) on average, and the
// uniform prior's must not: the auto prior is what makes it so. (Under
// the single-cell model, dropout noise and a housekeeping code, completion
// stays at chance whatever the prior: VALIDATION.md.)
func TestCompletionThroughDefaults(t *testing.T) {
	type key struct {
		holdout float64
		prior   string
	}
	gain := map[key]float64{}
	for seed := uint64(1); seed <= 3; seed++ {
		shards, tr := simtest.Shards(t, completionParams(seed))
		chance := majority(tr)
		for _, holdout := range []float64{0.995, 0.99} {
			for _, prior := range []PriorSetting{DefaultFitConfig().PriorU, givenPrior(gibbs.Prior{})} {
				cfg := DefaultFitConfig()
				cfg.Shards, cfg.Output = shards, filepath.Join(t.TempDir(), "run")
				cfg.L, cfg.Chains, cfg.Holdout, cfg.Seed = LSizes{5}, 1, holdout, seed
				cfg.PriorU, cfg.PriorZ = prior, prior
				rep, err := Fit(context.Background(), cfg, FitOptions{})
				if err != nil {
					t.Fatal(err)
				}
				a := rep.Summary[0].HeldoutAccuracy
				gain[key{holdout, prior.String()}] += (a - chance) / 3
				t.Logf("seed %d, %.1f%% observed, %v prior: held-out accuracy %.3f (chance %.3f)", seed, 100*(1-holdout), prior, a, chance)
				if prior.Auto && a < chance+0.05 {
					t.Errorf("seed %d, %.1f%% observed: held-out accuracy %.3f, chance %.3f", seed, 100*(1-holdout), a, chance)
				}
			}
		}
	}
	for _, tc := range []struct{ holdout, min float64 }{{0.995, 0.08}, {0.99, 0.14}} {
		auto, uniform := gain[key{tc.holdout, "auto"}], gain[key{tc.holdout, "uniform"}]
		t.Logf("%.1f%% observed: mean gain over chance %.3f (auto), %.3f (uniform)", 100*(1-tc.holdout), auto, uniform)
		if auto < tc.min {
			t.Errorf("%.1f%% observed: the defaults beat chance by %.3f on average, want ≥ %.2f", 100*(1-tc.holdout), auto, tc.min)
		}
		if uniform >= tc.min {
			t.Errorf("%.1f%% observed: the uniform prior beats chance by %.3f on average as well: the test no longer shows what the auto prior adds", 100*(1-tc.holdout), uniform)
		}
	}
	if fmt.Sprint(DefaultFitConfig().PriorU, DefaultFitConfig().PriorZ) != "auto auto" {
		t.Errorf("the default priors are %v and %v, want auto", DefaultFitConfig().PriorU, DefaultFitConfig().PriorZ)
	}
}
