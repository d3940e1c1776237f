package main

import (
	"encoding/json"
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
