package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"scpipe/internal/rundir"
	"scpipe/simulate"
)

// TestFitLayersCLI fits the paper's 3-layer 7-4-2 model to 50 calculator
// digits with 70% of the pixels missing, as a user would: --layers sets
// the model's settings itself, the run holds every layer, and the first
// layer explains the observed pixels (σ(λ₁) near 1, as the paper's
// λ̂ = [1.0, 0.93, 0.8] of σ(λ) reads). Settings the model does not have
// are refused with their flag.
func TestFitLayersCLI(t *testing.T) {
	dir := t.TempDir()
	sim, runDir := filepath.Join(dir, "calc"), filepath.Join(dir, "run")
	if err := run(t, "simulate", "-o", sim, "--kind", "digits", "--cells", "50", "--missing", "0.7", "--shards", "--quiet"); err != nil {
		t.Fatal(err)
	}
	shards := filepath.Join(sim, simulate.ShardsDir)
	if err := run(t, "fit", shards, "-o", runDir, "--layers", "7,4,2", "--layer-prior-u", "0.01,0.05,0.2",
		"--init", "random", "--burn-in", "60", "--samples", "30", "--chains", "1", "--holdout", "0", "--quiet", "-j", "2"); err != nil {
		t.Fatal(err)
	}
	fit := rundir.FitDir(runDir, 7, 1)
	b, err := os.ReadFile(filepath.Join(fit, rundir.LayersFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 {
		t.Fatalf("layers.tsv has %d lines, want a header and 3 layers:\n%s", len(lines), b)
	}
	for k, want := range []string{"7", "4", "2"} {
		f := strings.Split(lines[k+1], "\t")
		if f[1] != want {
			t.Errorf("layer %d has L = %s, want %s", k+1, f[1], want)
		}
		if k == 0 {
			if s, _ := strconv.ParseFloat(f[3], 64); s < 0.98 {
				t.Errorf("layer 1: σ(λ) = %v, want ≥ 0.98 on noise-free digits", s)
			}
		}
	}
	for k := 1; k <= 3; k++ {
		if _, err := os.Stat(filepath.Join(rundir.LayerDir(fit, k), rundir.PrototypesFile)); err != nil {
			t.Error(err)
		}
	}
	// evaluate reads the run as any fit of L = 7 and draws the upper
	// layers' prototypes under the codes (the paper's Fig. deep_calc).
	eval := filepath.Join(dir, "eval")
	if err := run(t, "evaluate", runDir, "-o", eval, "--truth", filepath.Join(sim, simulate.TruthDir), "--images", "--quiet"); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(eval, "images", "L07_chain1.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">layer 2<", ">layer 3<"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the fit's figure has no row %s", want)
		}
	}
	cfg, err := os.ReadFile(filepath.Join(runDir, rundir.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`noise = "symmetric"`, "housekeeping = false", "starts = 1", `L = "7"`, `layers = "7,4,2"`, `layer_prior_u = "0.01,0.05,0.2"`} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("config.toml lacks %s", want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--noise", "dropout"}, "--noise symmetric"},
		{[]string{"--housekeeping", "on"}, "--housekeeping off"},
		{[]string{"--starts", "3"}, "--starts 1"},
		{[]string{"--L", "5"}, "leave --L out"},
		{[]string{"--layer-prior-u", "0.1,empirical,0.2"}, "only the first layer"},
	} {
		args := append([]string{"fit", shards, "-o", filepath.Join(t.TempDir(), "r"), "--layers", "7,4,2", "--quiet"}, c.args...)
		if err := run(t, args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("fit --layers %v: want an error containing %q, got %v", c.args, c.want, err)
		}
	}
}
