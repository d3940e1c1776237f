package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchCommandJSON(t *testing.T) {
	work := t.TempDir()
	out, err := captureStdout(t, func() error {
		return run(t, "bench", "--size", "200x150,64x64", "--L", "2..3", "--sweeps", "2", "--warmup", "1",
			"--stream-passes", "1", "--work", work, "-j", "2", "--json", "--quiet")
	})
	if err != nil {
		t.Fatalf("scpipe bench: %v", err)
	}
	var rep struct {
		Results []struct {
			Cells, Genes, L, Workers int
			Entries                  int64
			SweepSeconds             []float64 `json:"sweep_seconds"`
			EntriesPerSecond         float64   `json:"entries_per_second"`
			Ratio                    float64   `json:"sweep_over_stream"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, out)
	}
	want := []struct{ cells, genes, L int }{{200, 150, 2}, {200, 150, 3}, {64, 64, 2}, {64, 64, 3}}
	if len(rep.Results) != len(want) {
		t.Fatalf("%d results, want %d:\n%s", len(rep.Results), len(want), out)
	}
	for i, w := range want {
		r := rep.Results[i]
		if r.Cells != w.cells || r.Genes != w.genes || r.L != w.L || r.Workers != 2 || r.Entries != int64(w.cells*w.genes) {
			t.Errorf("result %d: %+v, want %v", i, r, w)
		}
		if len(r.SweepSeconds) != 2 || !(r.EntriesPerSecond > 0) || !(r.Ratio > 0) {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	table, err := captureStdout(t, func() error {
		return run(t, "bench", "--size", "64x64", "--L", "2", "--sweeps", "1", "--work", work, "--quiet")
	})
	if err != nil || !strings.Contains(table, "64×64") || !strings.Contains(table, "sweep/stream") {
		t.Errorf("bench table: %v\n%s", err, table)
	}
}

func TestBenchCommandBadFlags(t *testing.T) {
	work := t.TempDir()
	tests := []struct {
		args    []string
		mention string
	}{
		{[]string{"--size", "lots"}, "--size"},
		{[]string{"--size", "1e8,,1e9"}, "--size"},
		{[]string{"--size", "10x0"}, "--size"},
		{[]string{"--L", "0"}, "--L"},
		{[]string{"--L", "2..x"}, "--L"},
		{[]string{"--sweeps", "0"}, "timed sweeps"},
		{[]string{"--warmup", "-1"}, "warm-up"},
		{[]string{"--stream-passes", "0"}, "stream passes"},
		{[]string{"--density", "0"}, "density"},
		{[]string{"--prior", "strong"}, "prior"},
		{[]string{"-j", "0"}, "--threads"},
		{[]string{"extra"}, "takes no arguments"},
	}
	for _, tt := range tests {
		args := append([]string{"bench", "--work", work, "--size", "64x64", "--quiet"}, tt.args...)
		err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("scpipe %s: %v, want an error mentioning %q", strings.Join(args, " "), err, tt.mention)
		}
	}
}

// TestBenchE2ECommand runs scpipe bench --e2e at a tiny size with a config
// file and --L, and checks that the JSON report describes that analysis.
func TestBenchE2ECommand(t *testing.T) {
	work := t.TempDir()
	cfg := filepath.Join(work, "fit.toml")
	if err := os.WriteFile(cfg, []byte("chains = 1\nburn_in = 2\nsamples = 3\nstarts = 2\nstart_sweeps = 1\nholdout = 0.02\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	out, err := captureStdout(t, func() error {
		return run(t, "bench", "--e2e", "--size", "300x200", "--L", "2,3", "--config", cfg, "--work", work, "-j", "2", "--json", "--quiet")
	})
	if err != nil {
		t.Fatalf("scpipe bench --e2e: %v", err)
	}
	var rep struct {
		CellsIn      int     `json:"cells_in"`
		GenesIn      int     `json:"genes_in"`
		Fits         int     `json:"fits"`
		SweepsPerFit int     `json:"sweeps_fit"`
		Sweeps       float64 `json:"sweeps_seconds"`
		Total        float64 `json:"total_seconds"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench --e2e --json: %v\n%s", err, out)
	}
	if rep.CellsIn != 300 || rep.GenesIn != 200 || rep.Fits != 2 || rep.SweepsPerFit != 5 || !(rep.Sweeps > 0) || !(rep.Total > rep.Sweeps) {
		t.Errorf("report %+v, want 300 × 200, 2 fits of 5 sweeps\n%s", rep, out)
	}
	for _, args := range [][]string{
		{"--size", "300x200,400x200"},
		{"--config", filepath.Join(work, "missing.toml")},
		{"--L", "0"},
	} {
		err := run(t, append([]string{"bench", "--e2e", "--work", work, "--quiet"}, args...)...)
		if err == nil {
			t.Errorf("scpipe bench --e2e %s: no error", strings.Join(args, " "))
		}
	}
}
