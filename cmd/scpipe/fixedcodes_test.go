package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/internal/rundir"
)

// TestFitFixedCodesThroughCLI: scpipe fit --fixed-codes FILE.gmt holds the
// file's sets as the first codes of the fit (posterior means exactly 1 on
// their genes and 0 elsewhere), records the source in config.toml and the
// codes in RUN/fixed-codes.gmt; a file with no known gene is refused with
// its name; the priors take "auto".
func TestFitFixedCodesThroughCLI(t *testing.T) {
	dir := t.TempDir()
	sim, shards, runDir := filepath.Join(dir, "sim"), filepath.Join(dir, "shards"), filepath.Join(dir, "run")
	for _, args := range [][]string{
		{"simulate", "-o", sim, "--cells", "300", "--genes", "150", "--L", "2", "--seed", "5", "--quiet"},
		{"ingest", sim, "-o", shards, "--quiet"},
	} {
		if err := run(t, args...); err != nil {
			t.Fatal(err)
		}
	}
	truth := readTruth(t, filepath.Join(sim, "truth", "programs.tsv"), 2)
	gmt := filepath.Join(dir, "known.gmt")
	var b strings.Builder
	for l, genes := range truth {
		b.WriteString("known" + string(rune('1'+l)) + "\tplanted\t" + strings.Join(genes, "\t") + "\n")
	}
	if err := os.WriteFile(gmt, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(t, "fit", shards, "-o", runDir, "--L", "3", "--chains", "1", "--burn-in", "10", "--samples", "10",
		"--fixed-codes", gmt, "--prior-u", "auto", "--quiet", "-j", "1"); err != nil {
		t.Fatal(err)
	}
	codes, err := rundir.ReadCodes(filepath.Join(rundir.FitDir(runDir, 3, 1), rundir.CodesFile))
	if err != nil {
		t.Fatal(err)
	}
	for l, genes := range truth {
		in := map[string]bool{}
		for _, g := range genes {
			in[g] = true
		}
		for g, id := range codes.GeneIDs {
			want := 0.0
			if in[id] {
				want = 1
			}
			if codes.Mean[g*3+l] != want {
				t.Fatalf("code %d, gene %s: posterior mean %v, want %v", l+1, id, codes.Mean[g*3+l], want)
			}
		}
	}
	cfg, err := os.ReadFile(filepath.Join(runDir, rundir.ConfigFile))
	if err != nil || !strings.Contains(string(cfg), `fixed_codes = "`+gmt+`"`) || !strings.Contains(string(cfg), `prior_u = "auto"`) {
		t.Errorf("config.toml (%v):\n%s", err, cfg)
	}
	if kept, err := os.ReadFile(filepath.Join(runDir, rundir.FixedCodesFile)); err != nil || strings.Count(string(kept), "\n") != 2 {
		t.Errorf("%s (%v):\n%s", rundir.FixedCodesFile, err, kept)
	}
	bad := filepath.Join(dir, "strangers.gmt")
	os.WriteFile(bad, []byte("strangers\t\tNOPE1\tNOPE2\n"), 0o644)
	err = run(t, "fit", shards, "-o", filepath.Join(dir, "run2"), "--L", "3", "--fixed-codes", bad, "--quiet")
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "strangers") {
		t.Errorf("--fixed-codes with no known gene: %v", err)
	}
}
