package fiteval

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/gibbs"
	"scpipe/internal/rundir"
	"scpipe/pipeline"
	"scpipe/shard"
	"scpipe/simulate"

	"scpipe/simulate/simtest"

	"scpipe/internal/testkit"
)

// evalPlanted fits a planted dataset with half its entries missing and a
// fifth of the rest held out, keeping the retained states or not, and
// returns the run's configuration, report and the simulation's truth
// folder.
func evalPlanted(t *testing.T, noise gibbs.Noise, keep bool) (pipeline.FitConfig, *pipeline.FitReport, string) {
	t.Helper()
	p := simulate.Params{Cells: 400, Genes: 200, L: 4, CodeDensity: 0.15, UsageDensity: 0.3, FlipOn: 0.1, FlipOff: 0.1, Missing: 0.5, Seed: 1}
	if noise == gibbs.Dropout {
		p.FlipOn, p.FlipOff = 0.03, 0.25
	}
	shards, _ := simtest.Shards(t, p)
	cfg := pipeline.DefaultFitConfig()
	cfg.Shards, cfg.Output = shards, filepath.Join(t.TempDir(), "run")
	cfg.L, cfg.Chains, cfg.BurnIn, cfg.Samples, cfg.Holdout, cfg.Threads = pipeline.LSizes{4}, 1, 50, 50, 0.2, 2
	cfg.Noise, cfg.Housekeeping = pipeline.NoiseSetting{Noise: noise}, pipeline.GivenHousekeeping(false)
	cfg.PriorU, cfg.PriorZ = pipeline.PriorSetting{Prior: gibbs.EmpiricalPrior()}, pipeline.PriorSetting{Prior: gibbs.EmpiricalPrior()}
	cfg.KeepSamples = keep
	rep, err := pipeline.Fit(context.Background(), cfg, pipeline.FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, rep, filepath.Join(filepath.Dir(shards), simulate.TruthDir)
}

// TestEvaluatePlanted scores fits of planted data under both noise models
// and checks what the scores must be: the held-out entries are the run's,
// scored as summary.tsv scores them; the truth covers every entry and the
// unseen ones; the plug-in predictive is calibrated on the held-out
// entries; the output does not depend on the number of workers.
//
// Calibration bounds: in every bin of predicted probability that holds at
// least 5% of the held-out entries, the observed frequency of ones is
// within 4 standard errors (of a binomial at the mean prediction) plus
// 0.01 of the mean prediction; over all entries, the mean prediction is
// within 3 standard errors of the frequency of ones. (Bins of intermediate
// predictions, few here, are less well calibrated: the plug-in predictive
// is overconfident there; see docs/commands.md, "scpipe evaluate".)
func TestEvaluatePlanted(t *testing.T) {
	for _, noise := range []gibbs.Noise{gibbs.Symmetric, gibbs.Dropout} {
		t.Run(noise.String(), func(t *testing.T) {
			cfg, fit, truth := evalPlanted(t, noise, false)
			o := DefaultOptions()
			o.Run, o.Out, o.Truth, o.Workers = cfg.Output, filepath.Join(t.TempDir(), "eval"), truth, 1
			rep, err := Evaluate(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			fm, err := shard.Open(filepath.Join(cfg.Output, rundir.FitMaskDir))
			if err != nil {
				t.Fatal(err)
			}
			seen := fm.Manifest().Ones
			fm.Close()
			byTarget := map[string]Row{}
			for _, r := range rep.Rows {
				byTarget[r.Target] = r
			}
			h, s := byTarget[TargetHeldOut], fit.Summary[0]
			if h.N != fit.HeldOut || h.Accuracy != s.HeldoutAccuracy || h.LogPred != s.HeldoutLogPred {
				t.Errorf("held out: n %d accuracy %v logpred %v; the fit: %d, %v, %v", h.N, h.Accuracy, h.LogPred, fit.HeldOut, s.HeldoutAccuracy, s.HeldoutLogPred)
			}
			if h.AUC < 0.8 {
				t.Errorf("held-out AUC %.3f", h.AUC)
			}
			if tr, un := byTarget[TargetTruth], byTarget[TargetTruthUnseen]; tr.N != 400*200 || un.N != 400*200-seen || tr.Accuracy < 0.99 || un.Accuracy < 0.99 {
				t.Errorf("truth: n %d accuracy %v; unseen: n %d (want %d) accuracy %v", tr.N, tr.Accuracy, un.N, 400*200-seen, un.Accuracy)
			}

			in, err := openEvalInput(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer in.close()
			fits, err := rundir.Fits(cfg.Output)
			if err != nil {
				t.Fatal(err)
			}
			m, err := loadFitModel(fits[0], in.src.Manifest(), PredictPlugIn)
			if err != nil {
				t.Fatal(err)
			}
			ts, err := in.score(context.Background(), m, o)
			if err != nil {
				t.Fatal(err)
			}
			held := ts[0]
			var sumPred float64
			for _, c := range held.Calibration() {
				if c.N == 0 {
					continue
				}
				sumPred += c.MeanPredicted * float64(c.N)
				if float64(c.N) < 0.05*float64(held.N()) {
					continue
				}
				se := math.Sqrt(c.MeanPredicted * (1 - c.MeanPredicted) / float64(c.N))
				if d := math.Abs(c.Observed - c.MeanPredicted); d > 4*se+0.01 {
					t.Errorf("bin [%.1f, %.1f): %d entries predicted %.3f, observed %.3f (%.1f standard errors)", c.Lo, c.Hi, c.N, c.MeanPredicted, c.Observed, d/se)
				}
			}
			n, ones := float64(held.N()), float64(held.Scores().Positives)
			mean := sumPred / n
			if se := math.Sqrt(mean * (1 - mean) / n); math.Abs(mean-ones/n) > 3*se {
				t.Errorf("mean prediction %.4f, frequency of ones %.4f (± %.4f)", mean, ones/n, se)
			}

			// The same with three workers, byte for byte.
			o3 := o
			o3.Out, o3.Workers = filepath.Join(t.TempDir(), "eval3"), 3
			if _, err := Evaluate(context.Background(), o3); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{evalScoresFile, evalROCFile, evalCalibrationFile, evalThresholdsFile, "roc_heldout.svg", "calibration_truth_unseen.svg"} {
				a, err1 := os.ReadFile(filepath.Join(o.Out, f))
				b, err2 := os.ReadFile(filepath.Join(o3.Out, f))
				if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
					t.Errorf("%s differs between 1 and 3 workers (%v, %v)", f, err1, err2)
				}
			}
		})
	}
}

// TestEvaluateRefuses checks the errors a user meets.
func TestEvaluateRefuses(t *testing.T) {
	cfg, _, truth := evalPlanted(t, gibbs.Symmetric, false)
	dir := t.TempDir()
	run := func(edit func(o *Options)) error {
		o := DefaultOptions()
		o.Run, o.Out, o.Workers = cfg.Output, filepath.Join(dir, "eval"), 2
		edit(&o)
		_, err := Evaluate(context.Background(), o)
		return err
	}
	if err := run(func(o *Options) {}); err != nil {
		t.Fatal(err)
	}
	other := simulate.Params{Cells: 300, Genes: 200, L: 4, CodeDensity: 0.15, UsageDensity: 0.3, Seed: 9}
	otherShards, _ := simtest.Shards(t, other)
	moved := filepath.Join(dir, "moved")
	damaged := testkit.Damaged(t, cfg.Shards, "x.000000.bin")
	for _, tc := range []struct {
		name string
		edit func(o *Options)
		want string
	}{
		{"exists", func(o *Options) {}, "already exists (use --force"},
		{"into the run", func(o *Options) { o.Out = cfg.Output }, "is the input " + cfg.Output},
		{"inside the run", func(o *Options) { o.Out = filepath.Join(cfg.Output, "L03") }, "lies inside the input " + cfg.Output},
		{"not pixels", func(o *Options) { o.Out, o.Images = filepath.Join(dir, "img"), true }, `not a pixel r<row>c<col>`},
		{"other truth", func(o *Options) {
			o.Out, o.Truth = filepath.Join(dir, "t"), filepath.Join(filepath.Dir(otherShards), simulate.TruthDir)
		}, "is the truth of a simulation with seed 9, the shards were simulated with seed 1: is it the truth of these data?"},
		{"other shards", func(o *Options) { o.Out, o.Shards = filepath.Join(dir, "s"), otherShards }, "are not the shards"},
		{"damaged shards", func(o *Options) { o.Out, o.Shards = filepath.Join(dir, "d"), damaged }, filepath.Join(damaged, "x.000000.bin") + ": crc32c"},
		{"no fit at L", func(o *Options) { o.Out, o.Ls = filepath.Join(dir, "l"), []int{9} }, "no finished fit at L in [9]"},
		{"negative workers", func(o *Options) { o.Out, o.Workers = filepath.Join(dir, "w"), -1 }, "-1 workers: want 0 (every core) or more"},
		{"bad rate", func(o *Options) { o.Out, o.FPRs = filepath.Join(dir, "r"), []float64{1.5} }, "outside [0, 1]"},
		{"bad predictive", func(o *Options) { o.Out, o.Predictive = filepath.Join(dir, "p"), "mean" }, `predictive "mean"`},
		{"no samples", func(o *Options) { o.Out, o.Predictive = filepath.Join(dir, "p"), PredictSamples }, "fit with --keep-samples"},
	} {
		if err := run(tc.edit); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := run(func(o *Options) { o.Force, o.Truth = true, truth }); err != nil {
		t.Errorf("--force: %v", err)
	}
	// Shards that moved are found again with Shards.
	if err := os.Rename(cfg.Shards, moved); err != nil {
		t.Fatal(err)
	}
	if err := run(func(o *Options) { o.Out = filepath.Join(dir, "m") }); err == nil || !strings.Contains(err.Error(), "--shards") {
		t.Errorf("moved shards: %v", err)
	}
	if err := run(func(o *Options) { o.Out, o.Shards = filepath.Join(dir, "m"), moved }); err != nil {
		t.Errorf("moved shards given: %v", err)
	}
	// A run that holds nothing out has nothing to score without a truth.
	cfg0 := cfg
	cfg0.Output, cfg0.Shards, cfg0.Holdout, cfg0.BurnIn, cfg0.Samples, cfg0.Starts = filepath.Join(dir, "run0"), moved, 0, 2, 2, 1
	if _, err := pipeline.Fit(context.Background(), cfg0, pipeline.FitOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := run(func(o *Options) { o.Run, o.Out = cfg0.Output, filepath.Join(dir, "z") }); err == nil || !strings.Contains(err.Error(), "nothing to score") {
		t.Errorf("no holdout, no truth: %v", err)
	}
}

// TestEvaluateSamples scores the sample-averaged predictive of fits that
// kept their states (FitConfig.KeepSamples) beside the plug-in one: both
// find the truth; the sample average is calibrated on the held-out
// entries (mean prediction within 3 standard errors of the frequency of
// ones, the bound of TestEvaluatePlanted) and differs from the plug-in
// one; its output does not depend on the number of workers.
func TestEvaluateSamples(t *testing.T) {
	for _, noise := range []gibbs.Noise{gibbs.Symmetric, gibbs.Dropout} {
		t.Run(noise.String(), func(t *testing.T) {
			cfg, fit, truth := evalPlanted(t, noise, true)
			fits, err := rundir.Fits(cfg.Output)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(fits[0].Dir, rundir.SamplesFile))
			if err != nil {
				t.Fatal(err)
			}
			s, err := gibbs.UnmarshalSamples(b)
			if err != nil {
				t.Fatal(err)
			}
			if n, d, L := s.Shape(); s.Count() != cfg.Samples || n != 400 || d != 200 || L != 4 {
				t.Fatalf("samples.bin: %d states of %d × %d, L = %d; want %d of 400 × 200, L = 4", s.Count(), n, d, L, cfg.Samples)
			}
			scores := map[string]map[string]Row{}
			for _, w := range []int{1, 3} {
				for _, pred := range []string{PredictPlugIn, PredictSamples} {
					o := DefaultOptions()
					o.Run, o.Truth, o.Workers, o.Predictive = cfg.Output, truth, w, pred
					o.Out = filepath.Join(t.TempDir(), pred)
					rep, err := Evaluate(context.Background(), o)
					if err != nil {
						t.Fatal(err)
					}
					by := map[string]Row{}
					for _, r := range rep.Rows {
						by[r.Target] = r
					}
					if prev, ok := scores[pred]; ok && !equalRows(prev, by) {
						t.Errorf("%s: 1 and 3 workers score differently: %v, %v", pred, prev, by)
					}
					scores[pred] = by
				}
			}
			plug, smp := scores[PredictPlugIn], scores[PredictSamples]
			for _, target := range []string{TargetTruth, TargetTruthUnseen} {
				if r := smp[target]; !(r.Accuracy >= 0.99 && r.AUC >= 0.99) {
					t.Errorf("samples, %s: accuracy %.4f AUC %.4f", target, r.Accuracy, r.AUC)
				}
			}
			h := smp[TargetHeldOut]
			if h.N != fit.HeldOut || !(h.AUC >= 0.8) {
				t.Errorf("samples, held out: n %d (want %d), AUC %.3f", h.N, fit.HeldOut, h.AUC)
			}
			if h.LogPred == plug[TargetHeldOut].LogPred {
				t.Errorf("the sample average scores the held-out entries as the plug-in does (log predictive %v)", h.LogPred)
			}
			o := DefaultOptions()
			o.Run, o.Workers = cfg.Output, 1
			in, err := openEvalInput(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer in.close()
			m, err := loadFitModel(fits[0], in.src.Manifest(), PredictSamples)
			if err != nil {
				t.Fatal(err)
			}
			ts, err := in.score(context.Background(), m, o)
			if err != nil {
				t.Fatal(err)
			}
			var sum float64
			for _, c := range ts[0].Calibration() {
				if c.N > 0 {
					sum += c.MeanPredicted * float64(c.N)
				}
			}
			n, ones := float64(ts[0].N()), float64(ts[0].Scores().Positives)
			if se := math.Sqrt(sum / n * (1 - sum/n) / n); !(math.Abs(sum/n-ones/n) <= 3*se) {
				t.Errorf("samples, held out: mean prediction %.4f, frequency of ones %.4f (± %.4f)", sum/n, ones/n, se)
			}
		})
	}
}

// equalRows reports whether two evaluations scored every target alike.
func equalRows(a, b map[string]Row) bool {
	if len(a) != len(b) {
		return false
	}
	for k, r := range a {
		if b[k] != r {
			return false
		}
	}
	return true
}

// TestEvaluateWarnsUnfinished: a fit of the run that has not finished (an
// interrupted one, or one whose tables were lost) is left out of the
// scores with a warning naming it, as enrich and summarize do, not
// silently; one of an L left out by Ls is not mentioned.
func TestEvaluateWarnsUnfinished(t *testing.T) {
	cfg, _, _ := evalPlanted(t, gibbs.Symmetric, false)
	unfinished := rundir.FitDir(cfg.Output, 5, 1)
	if err := os.MkdirAll(unfinished, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unfinished, rundir.CheckpointFile), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		Ls   []int
		want string
	}{
		{"every L", nil, "evaluate: skipping an unfinished fit\" fit=" + unfinished},
		{"L = 4 only", []int{4}, ""},
	} {
		var log bytes.Buffer
		o := DefaultOptions()
		o.Run, o.Out, o.Workers, o.Ls = cfg.Output, filepath.Join(t.TempDir(), "eval"), 2, tc.Ls
		o.Log = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if _, err := Evaluate(context.Background(), o); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := log.String(); (tc.want == "" && got != "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.want)
		}
	}
}
