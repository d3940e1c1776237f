package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"scpipe/export"
	"scpipe/internal/rundir"
)

// TestSeveralSamplesThroughCLI simulates three samples (one with a
// program of its own), ingests them through their samples file, fits,
// and finds the samples everywhere: scpipe info's table, cells.parquet's
// sample column, the run's samples.tsv (the planted sample program
// marked sample-specific), the report's per-sample section and the cNMF
// tables' cell samples.
func TestSeveralSamplesThroughCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sim, shards, runDir := filepath.Join(dir, "sim"), filepath.Join(dir, "shards"), filepath.Join(dir, "run")
	for _, args := range [][]string{
		{"simulate", "-q", "-o", sim, "--kind", "singlecell", "--cells", "900", "--genes", "300", "--L", "3", "--programs-per-cell-max", "1", "--program-size-min", "0.05", "--program-size-max", "0.15",
			"--samples", "3", "--sample-programs", "1", "--sample-program-fraction", "0.6", "--seed", "3"},
		{"ingest", "-q", "--samples", filepath.Join(sim, "samples.tsv"), "-o", shards},
		{"fit", shards, "-q", "-o", runDir, "--L", "4", "--chains", "1", "--burn-in", "30", "--samples", "20"},
		{"report", runDir, "-q", "-o", filepath.Join(dir, "report.html")},
		{"export", runDir, "-q", "--cnmf", filepath.Join(dir, "cnmf")},
	} {
		if err := run(t, args...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
	}
	out, err := captureStdout(t, func() error { return run(t, "info", shards) })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"samples             3", "sample1  300", "sample3  300", "source               " + filepath.Join(sim, "samples.tsv")} {
		if !strings.Contains(out, want) {
			t.Errorf("scpipe info does not say %q:\n%s", want, out)
		}
	}
	cells, err := rundir.ReadCells(filepath.Join(rundir.FitDir(runDir, 4, 1), rundir.CellsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(cells.Samples) != 900 || cells.Samples[0] != "sample1" || cells.Samples[899] != "sample3" || !strings.HasSuffix(cells.Barcodes[899], "-sample3") {
		t.Fatalf("cells.parquet: %d samples, first %q", len(cells.Samples), cells.Samples[:1])
	}
	rows, err := rundir.ReadSamples(filepath.Join(runDir, rundir.SampleUsageFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4*3 {
		t.Fatalf("samples.tsv: %d rows, want 4 programs × 3 samples", len(rows))
	}
	// The planted sample program is sample1's (program 1 in sample 1 mod 3):
	// some program must be used by most of sample1's planted share and be
	// marked sample-specific to sample1.
	var marked []string
	for _, r := range rows {
		if r.SampleSpecific && r.OfProgram >= rundir.SampleSpecificShare {
			marked = append(marked, r.Sample)
		}
	}
	if !slices.Contains(marked, "sample1") {
		t.Errorf("no program marked sample-specific to sample1 (marked: %q); rows %+v", marked, rows)
	}
	// The control: the same samples (their depths and backgrounds) without
	// the sample program mark none.
	sim0, shards0, run0 := filepath.Join(dir, "sim0"), filepath.Join(dir, "shards0"), filepath.Join(dir, "run0")
	for _, args := range [][]string{
		{"simulate", "-q", "-o", sim0, "--kind", "singlecell", "--cells", "900", "--genes", "300", "--L", "3", "--programs-per-cell-max", "1", "--program-size-min", "0.05", "--program-size-max", "0.15",
			"--samples", "3", "--seed", "3"},
		{"ingest", "-q", "--samples", filepath.Join(sim0, "samples.tsv"), "-o", shards0},
		{"fit", shards0, "-q", "-o", run0, "--L", "4", "--chains", "1", "--burn-in", "30", "--samples", "20"},
	} {
		if err := run(t, args...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
	}
	rows0, err := rundir.ReadSamples(filepath.Join(run0, rundir.SampleUsageFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows0 {
		if r.SampleSpecific {
			t.Errorf("without a sample program, code %d marked sample-specific (%s: %.2f of its cells)", r.Code, r.Sample, r.OfProgram)
			break
		}
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<section id="samples">`, "sample-specific: biology or a batch effect?", "<th>sample2</th>"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the report does not hold %q", want)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "cnmf", export.CNMFName, export.CNMFSamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 901 || lines[0] != "\tsample" || !strings.HasSuffix(lines[900], "-sample3\tsample3") {
		t.Errorf("%s: %d lines, first %q, last %q", export.CNMFSamplesFile, len(lines), lines[0], lines[len(lines)-1])
	}
}

// TestSamplesFlagsRefused: the flags of several samples refused where they
// cannot apply, each naming the flag.
func TestSamplesFlagsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ingest", a, b, "-o", filepath.Join(dir, "x"), "--genes", "some"}, `--genes of several samples: ingest: genes "some": want intersect or union`},
		{[]string{"ingest", a, "--samples", filepath.Join(dir, "s.tsv"), "-o", filepath.Join(dir, "x")}, "give no input beside it"},
		{[]string{"ingest", a, b, "--barcodes", "bc.tsv", "-o", filepath.Join(dir, "x")}, "--barcodes names the barcodes of one bare Matrix Market file"},
		{[]string{"ingest", a, "--genes", "union", "-o", filepath.Join(dir, "x")}, "--genes union matches the genes of several samples; one input was given"},
		{[]string{"ingest", "--format", "ratings", a, b, "-o", filepath.Join(dir, "x")}, "--format ratings reads one ratings file; 2 inputs given"},
		{[]string{"ingest", a, b, "-o", filepath.Join(dir, "x")}, "sample a (" + a + ")"},
		{[]string{"simulate", "-o", filepath.Join(dir, "s"), "--samples", "2"}, "--samples does not apply to --kind ormachine"},
		{[]string{"simulate", "-o", filepath.Join(dir, "s"), "--kind", "singlecell", "--sample-programs", "1"}, "--sample-programs needs --samples"},
	} {
		if err := run(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("scpipe %s: %v, want an error saying %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

// TestSamplesModelFlag: fit on shards of several samples knows them by
// default (logged, and samples_model in the run's config.toml), and
// --samples-model=false turns it off (the key left out); codes.parquet
// holds each sample's gene offsets with it; and the retained states of a
// fit with or without it are kept and scored by evaluate.
func TestSamplesModelFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sim, shards := filepath.Join(dir, "sim"), filepath.Join(dir, "shards")
	for _, args := range [][]string{
		{"simulate", "-q", "-o", sim, "--kind", "singlecell", "--cells", "300", "--genes", "120", "--L", "2", "--programs-per-cell-max", "1", "--samples", "2", "--seed", "4"},
		{"ingest", "-q", "--samples", filepath.Join(sim, "samples.tsv"), "-o", shards},
	} {
		if err := run(t, args...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
	}
	fit := func(out string, extra ...string) error {
		args := append([]string{"fit", shards, "-q", "-o", filepath.Join(dir, out), "--L", "2", "--chains", "1", "--burn-in", "4", "--samples", "2", "--starts", "1"}, extra...)
		return run(t, args...)
	}
	for _, tc := range []struct {
		out   string
		extra []string
		want  bool
	}{
		{"on", nil, true},
		{"off", []string{"--samples-model=false"}, false},
	} {
		if err := fit(tc.out, tc.extra...); err != nil {
			t.Fatalf("fit %v: %v", tc.extra, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, tc.out, rundir.ConfigFile))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), "samples_model = true"); got != tc.want {
			t.Errorf("fit %v: config.toml says samples_model = true: %v, want %v", tc.extra, got, tc.want)
		}
		// The samples' own gene offsets are in codes.parquet, for the
		// held-out scores and evaluate to read each cell's entries by.
		codes, err := rundir.ReadCodes(filepath.Join(rundir.FitDir(filepath.Join(dir, tc.out), 2, 1), rundir.CodesFile))
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"sample1", "sample2"}; tc.want && (!slices.Equal(codes.Samples, want) || len(codes.SampleGeneLift) != 2) ||
			!tc.want && codes.Samples != nil {
			t.Errorf("fit %v: codes.parquet holds the gene offsets of samples %q (%d)", tc.extra, codes.Samples, len(codes.SampleGeneLift))
		}
	}
	// A run whose fits score their held-out entries two ways (one written
	// before codes.parquet carried each sample's offsets) is refused.
	mixed := filepath.Join(dir, "mixed")
	if err := run(t, "fit", shards, "-q", "-o", mixed, "--L", "2..3", "--chains", "1", "--burn-in", "4", "--samples", "2", "--starts", "1"); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(rundir.FitDir(mixed, 3, 1), rundir.CodesFile)
	codes, err := rundir.ReadCodes(old)
	if err != nil {
		t.Fatal(err)
	}
	codes.Samples, codes.SampleGeneLift = nil, nil
	if err := rundir.WriteCodes(old, codes); err != nil {
		t.Fatal(err)
	}
	if err := run(t, "summarize", mixed, "-q"); err == nil || !strings.Contains(err.Error(), rundir.FitDir(mixed, 3, 1)) || !strings.Contains(err.Error(), "gene_lift.SAMPLE") {
		t.Errorf("summarize a run scored two ways: %v, want a refusal naming %s", err, rundir.FitDir(mixed, 3, 1))
	}
	// The retained states of a fit that knows the samples: evaluate's
	// sample-averaged predictive reads each cell's entries by its sample's
	// gene levels (gibbs.TestSamplesRoundTrip checks the values).
	for _, extra := range [][]string{{"--keep-samples"}, {"--keep-samples", "--samples-model=false"}} {
		out := filepath.Join(dir, "kept"+strconv.Itoa(len(extra)))
		if err := fit(filepath.Base(out), extra...); err != nil {
			t.Fatalf("fit %v: %v", extra, err)
		}
		if err := run(t, "evaluate", out, "-o", out+"-eval", "--predictive", "samples", "--quiet"); err != nil {
			t.Fatalf("evaluate --predictive samples of a fit %v: %v", extra, err)
		}
		scores, err := os.ReadFile(filepath.Join(out+"-eval", "scores.tsv"))
		if err != nil || !strings.Contains(string(scores), "2\t1\theldout\t") {
			t.Errorf("fit %v: evaluate --predictive samples: %v\n%s", extra, err, scores)
		}
	}
}
