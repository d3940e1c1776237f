package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvaluateCLI runs the digits experiment a user would: simulate, fit
// with entries held out (keeping the samples), evaluate against the truth
// with images, and with the sample-averaged predictive.
func TestEvaluateCLI(t *testing.T) {
	dir := t.TempDir()
	sim, runDir, out := filepath.Join(dir, "calc"), filepath.Join(dir, "run"), filepath.Join(dir, "eval")
	for _, args := range [][]string{
		{"simulate", "-o", sim, "--kind", "digits", "--cells", "20", "--flip", "0.02", "--missing", "0.3", "--shards", "--quiet"},
		{"fit", filepath.Join(sim, "shards"), "-o", runDir, "--L", "7", "--noise", "symmetric", "--housekeeping", "off", "--init", "random",
			"--prior-u", "0.01", "--prior-z", "0.5", "--holdout", "0.2", "--burn-in", "30", "--samples", "20", "--starts", "1", "--chains", "1", "-j", "2", "--keep-samples", "--quiet"},
		{"evaluate", runDir, "-o", out, "--truth", filepath.Join(sim, "truth"), "--images", "--image-cells", "3", "--fpr", "0.05,0.1", "-j", "2", "--quiet"},
		{"evaluate", runDir, "-o", out + "-samples", "--truth", filepath.Join(sim, "truth"), "--predictive", "samples", "--quiet"},
	} {
		if err := run(t, args...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
	}
	scores, err := os.ReadFile(filepath.Join(out, "scores.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	sampled, err := os.ReadFile(filepath.Join(out+"-samples", "scores.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"\theldout\t", "\ttruth\t", "\ttruth_unseen\t"} {
		if !strings.Contains(string(scores), "7\t1"+target) || !strings.Contains(string(sampled), "7\t1"+target) {
			t.Errorf("scores.tsv has no row for %q:\n%s\nwith --predictive samples:\n%s", target, scores, sampled)
		}
	}
	if string(scores) == string(sampled) {
		t.Error("--predictive samples scores as the plug-in predictive does")
	}
	thresholds, err := os.ReadFile(filepath.Join(out, "thresholds.tsv"))
	if err != nil || strings.Count(string(thresholds), "\n") != 1+3*2 {
		t.Errorf("thresholds.tsv: %v\n%s", err, thresholds)
	}
	for _, f := range []string{"roc_heldout.svg", "calibration_truth.svg", "images/L07_chain1.png", "images/L07_chain1.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if err := run(t, "evaluate", runDir, "-o", filepath.Join(dir, "x"), "--fpr", "0.1,low"); err == nil || !strings.Contains(err.Error(), `--fpr: "low"`) {
		t.Errorf("bad --fpr: %v", err)
	}
	// The truth of another seed has the same cells and pixels by name, and
	// was scored against without a word.
	other := filepath.Join(dir, "calc-seed2")
	if err := run(t, "simulate", "-o", other, "--kind", "digits", "--cells", "20", "--flip", "0.02", "--missing", "0.3", "--shards", "--seed", "2", "--quiet"); err != nil {
		t.Fatal(err)
	}
	err = run(t, "evaluate", runDir, "-o", filepath.Join(dir, "y"), "--truth", filepath.Join(other, "truth"), "--quiet")
	if err == nil || !strings.Contains(err.Error(), "is the truth of a simulation with seed 2, the shards were simulated with seed 1") {
		t.Errorf("the truth of another seed: %v", err)
	}
}
