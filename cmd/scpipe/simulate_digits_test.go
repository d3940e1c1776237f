package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/simulate"
)

// TestSimulateDigits draws the calculator digits from the command line: the
// ten digits on 10 × 17 pixels by default, noise-free, and refuses the
// flags the digits kind decides itself.
func TestSimulateDigits(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "calc")
	if err := run(t, "simulate", "-o", sim, "--kind", "digits", "--quiet"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(sim, simulate.TruthDir, simulate.TruthJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum simulate.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if p := sum.Params; p.Kind != simulate.Digits || p.Cells != 10 || p.Genes != 170 || p.L != 7 || p.FlipOn != 0 || p.FlipOff != 0 || sum.ObservedOnes != sum.CleanOnes {
		t.Errorf("truth.json: %+v, %d ones of %d noise-free", p, sum.ObservedOnes, sum.CleanOnes)
	}
	if err := run(t, "simulate", "-o", filepath.Join(dir, "hires"), "--kind", "digits", "--scale", "2", "--cells", "30", "--flip", "0.05", "--missing", "0.5", "--shards", "--quiet"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kind", "digits", "--L", "6"}, "--L does not apply to --kind digits"},
		{[]string{"--kind", "digits", "--genes", "100"}, "--genes does not apply to --kind digits"},
		{[]string{"--kind", "digits", "--code-density", "0.1"}, "--code-density does not apply to --kind digits"},
		{[]string{"--kind", "digits", "--lift-median", "1"}, "--lift-median does not apply to --kind digits"},
		{[]string{"--scale", "2"}, "--scale does not apply to --kind ormachine"},
		{[]string{"--kind", "digits", "--missing", "0.5"}, "cannot hold missing entries"},
	} {
		out := filepath.Join(t.TempDir(), "sim")
		err := run(t, append([]string{"simulate", "-o", out, "--quiet"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("simulate %v: want an error containing %q, got %v", c.args, c.want, err)
		}
	}
}
