package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/simulate"
)

// TestSimulateSingleCell draws the single-cell kind through the command
// line, ingests its counts, and checks that the truth records the flags.
func TestSimulateSingleCell(t *testing.T) {
	dir := t.TempDir()
	sim, shards := filepath.Join(dir, "sim"), filepath.Join(dir, "shards")
	args := []string{"simulate", "-o", sim, "--kind", "singlecell", "--cells", "600", "--genes", "400", "--L", "3",
		"--depth-sigma", "0.4", "--programs-per-cell-max", "2", "--seed", "3", "-j", "2", "--quiet"}
	if err := run(t, args...); err != nil {
		t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
	}
	// The simulation holds no ambient RNA: its truth is count > 0.
	if err := run(t, "ingest", sim, "-o", shards, "--min-cell-frac", "0", "--ambient", "0", "--quiet"); err != nil {
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
	want := simulate.DefaultSingleCell()
	want.DepthSigma, want.ProgramsPerCellMax = 0.4, 2
	if p := sum.Params; p.Kind != simulate.SingleCell || p.Cells != 600 || p.SingleCell != want || p.FlipOn != 0 {
		t.Errorf("truth.json params %+v", p)
	}
	out, err := captureStdout(t, func() error { return run(t, "info", shards, "--json") })
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Cells, Genes int
		NNZ          int64
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("info --json: %v\n%s", err, out)
	}
	if info.Cells != 600 || info.Genes != 400 || info.NNZ != sum.ObservedOnes {
		t.Errorf("ingested %d × %d with %d ones, simulated %d ones", info.Cells, info.Genes, info.NNZ, sum.ObservedOnes)
	}
}

func TestSimulateKindFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--kind", "singlecell", "--flip-on", "0.1"}, "--flip-on does not apply to --kind singlecell"},
		{[]string{"--kind", "singlecell", "--flip", "0.1"}, "--flip does not apply to --kind singlecell"},
		{[]string{"--depth-sigma", "0.3"}, "--depth-sigma does not apply to --kind ormachine"},
		{[]string{"--kind", "bulk"}, `--kind: simulate: unknown kind "bulk"`},
		{[]string{"--kind", "singlecell", "--lift-median", "0"}, "lift median must be in (0, 100]"},
		{[]string{"--kind", "singlecell", "--L", "2"}, "programs per cell max 3 exceeds the 2 planted programs"},
		{[]string{"--activity-fraction", "0.2"}, "--activity-fraction needs --activity-programs"},
		{[]string{"--kind", "digits", "--activity-programs", "1"}, "--activity-programs does not apply to --kind digits"},
		{[]string{"--activity-programs", "1", "--activity-fraction", "0"}, "activity fraction must be in (0, 1]"},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "sim")
		err := run(t, append([]string{"simulate", "-o", out, "--quiet"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("simulate %v: want an error containing %q, got %v", c.args, c.want, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("simulate %v: left %s behind", c.args, out)
		}
	}
}
