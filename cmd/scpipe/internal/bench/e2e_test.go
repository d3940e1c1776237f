package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/internal/rundir"
	"scpipe/pipeline"
)

// tinyE2E is a whole analysis small enough for a unit test: two L, two
// chains, a few sweeps with two starts, 2% held out.
func tinyE2E(t *testing.T) E2EOptions {
	fit := pipeline.DefaultFitConfig()
	fit.L, fit.Chains, fit.BurnIn, fit.Samples, fit.Starts, fit.StartSweeps = pipeline.LSizes{2, 3}, 2, 3, 4, 2, 2
	fit.MaxBurnIn = 0 // every fit 7 sweeps
	fit.Holdout, fit.CheckpointEvery = 0.02, 2
	return E2EOptions{Size: Size{Cells: 600, Genes: 400}, Density: 0.07, Seed: 3, Fit: fit, Workers: 2,
		Work: t.TempDir(), Keep: true, Log: discard()}
}

// TestRunE2E runs the whole analysis twice on a tiny generated file and
// checks the report against the run it left: every fit was run and
// scored, the phases add up to no more than the total, the second run takes
// the cached input and fits exactly what the first did, as does a third
// given the first's shards, and both writers name every phase.
func TestRunE2E(t *testing.T) {
	o := tinyE2E(t)
	first, err := RunE2E(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if first.InputCached || first.GenerateSeconds <= 0 || first.Nonzeros <= 0 {
		t.Errorf("first run: input cached %v, generated in %v s, %d nonzeros", first.InputCached, first.GenerateSeconds, first.Nonzeros)
	}
	if first.CellsIn != o.Size.Cells || first.GenesIn != o.Size.Genes || first.Cells != o.Size.Cells || first.Genes < 1 || first.Genes > o.Size.Genes {
		t.Errorf("shape: %d × %d in, %d × %d shards; generated %v", first.CellsIn, first.GenesIn, first.Cells, first.Genes, o.Size)
	}
	if want := len(o.Fit.L) * o.Fit.Chains; first.Fits != want || first.SweepsPerFit != o.Fit.BurnIn+o.Fit.Samples {
		t.Errorf("%d fits of %d sweeps, want %d of %d", first.Fits, first.SweepsPerFit, want, o.Fit.BurnIn+o.Fit.Samples)
	}
	phases := []float64{first.Ingest, first.Verify, first.Mask, first.Setup, first.Sweeps, first.Checkpoints, first.Outputs, first.Scoring}
	sum := 0.0
	for i, s := range phases {
		if !(s > 0) {
			t.Errorf("phase %d took %v s, want > 0", i, s)
		}
		sum += s
	}
	if first.Other < 0 || !near(sum+first.Other, first.Total) || first.NonSweepShare() <= 0 || first.NonSweepShare() >= 1 {
		t.Errorf("phases sum to %v s + other %v s, total %v s, not sweeping %v", sum, first.Other, first.Total, first.NonSweepShare())
	}
	rows := readSummary(t, filepath.Join(first.Kept, "run"))
	if len(rows) != first.Fits+1 {
		t.Fatalf("summary.tsv has %d lines, want a header and %d fits", len(rows), first.Fits)
	}

	second, err := RunE2E(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !second.InputCached || second.Input != first.Input || second.Kept == first.Kept {
		t.Errorf("second run: input %s cached %v in %s, first %s in %s", second.Input, second.InputCached, second.Kept, first.Input, first.Kept)
	}
	if again := readSummary(t, filepath.Join(second.Kept, "run")); !equalIgnoringSeconds(rows, again) {
		t.Errorf("the second run's summary differs:\n%s\n%s", strings.Join(rows, "\n"), strings.Join(again, "\n"))
	}

	// The first run's shards fitted again: the fit alone, the same fits.
	o.Shards = filepath.Join(first.Kept, "shards")
	third, err := RunE2E(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if third.Ingest != 0 || third.Input != o.Shards || third.Cells != first.Cells || third.Genes != first.Genes || third.Ones != first.Ones || !(third.Sweeps > 0) {
		t.Errorf("fitting given shards: %+v", third)
	}
	if again := readSummary(t, filepath.Join(third.Kept, "run")); !equalIgnoringSeconds(rows, again) {
		t.Errorf("the given shards' summary differs:\n%s\n%s", strings.Join(rows, "\n"), strings.Join(again, "\n"))
	}

	var table, js bytes.Buffer
	if err := first.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, phase := range []string{"ingest", "verify", "mask", "setup", "sweeps", "checkpoints", "outputs", "scoring", "total", "not sweeping"} {
		if !strings.Contains(table.String(), phase) {
			t.Errorf("table lacks %q:\n%s", phase, table.String())
		}
	}
	if err := first.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back E2EReport
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Total != first.Total || back.Sweeps != first.Sweeps {
		t.Errorf("JSON does not read back (%v): %+v", err, back)
	}
}

// TestRunE2ERefuses checks that bad options fail before any work, naming
// what is wrong, and that without Keep nothing but the cached input stays.
func TestRunE2ERefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*E2EOptions)
		want   string
	}{
		{"no cells", func(o *E2EOptions) { o.Size.Cells = 0 }, "size"},
		{"no workers", func(o *E2EOptions) { o.Workers = 0 }, "workers"},
		{"no work", func(o *E2EOptions) { o.Work = "" }, "work folder"},
		{"bad fit", func(o *E2EOptions) { o.Fit.Chains = 0 }, "chains"},
		{"profile exists", func(o *E2EOptions) {
			o.CPUProfile = filepath.Join(o.Work, "cpu.pprof")
			os.WriteFile(o.CPUProfile, nil, 0o666)
		}, "already exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tinyE2E(t)
			tc.change(&o)
			_, err := RunE2E(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %q", err, tc.want)
			}
		})
	}

	o := tinyE2E(t)
	o.Keep = false
	o.Fit.L, o.Fit.Chains = pipeline.LSizes{2}, 1
	rep, err := RunE2E(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	left, err := os.ReadDir(o.Work)
	if err != nil || len(left) != 1 || filepath.Join(o.Work, left[0].Name()) != rep.Input {
		t.Errorf("without Keep the work folder holds %v (%v), want only %s", left, err, rep.Input)
	}
	if _, err := os.Stat(rep.Input); errors.Is(err, os.ErrNotExist) {
		t.Errorf("the generated input %s is gone", rep.Input)
	}
}

// readSummary returns the lines of a run's summary.tsv.
func readSummary(t *testing.T, run string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(run, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// equalIgnoringSeconds compares summary.tsv lines but for their seconds
// column, the one wall-clock figure.
func equalIgnoringSeconds(a, b []string) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	col := -1
	for i, name := range strings.Split(a[0], "\t") {
		if name == "seconds" {
			col = i
		}
	}
	for i := range a {
		x, y := strings.Split(a[i], "\t"), strings.Split(b[i], "\t")
		if len(x) != len(y) {
			return false
		}
		for j := range x {
			if j != col && x[j] != y[j] {
				return false
			}
		}
	}
	return true
}
