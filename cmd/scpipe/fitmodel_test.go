package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/internal/rundir"
	"scpipe/pipeline"
)

// TestFitAutoModelThroughCLI: scpipe fit without --noise or
// --housekeeping fits binary data (a ratings file ingested with --format
// ratings, simulate --shards of the ormachine and digits kinds) with the
// paper's model and simulated single-cell counts with the single-cell
// model, as RUN/config.toml records; given flags win; and fit --resume of
// a run started with given flags keeps them.
func TestFitAutoModelThroughCLI(t *testing.T) {
	dir := t.TempDir()
	var ratings strings.Builder
	for u := range 40 {
		for i := range 25 {
			if (u*7+i*3)%4 != 0 {
				fmt.Fprintf(&ratings, "%d\t%d\t%d\t%d\n", u+1, i+1, 1+(u*i+u+i)%5, 880000000+u*25+i)
			}
		}
	}
	data := filepath.Join(dir, "u.data")
	if err := os.WriteFile(data, []byte(ratings.String()), 0o666); err != nil {
		t.Fatal(err)
	}
	shards := map[string][]string{
		"ratings":    {"ingest", "--format", "ratings", data},
		"ormachine":  {"simulate", "--shards", "--cells", "120", "--genes", "60", "--L", "3"},
		"digits":     {"simulate", "--shards", "--kind", "digits", "--cells", "30"},
		"singlecell": {"simulate", "--shards", "--kind", "singlecell", "--cells", "200", "--genes", "100", "--L", "3"},
	}
	for name, args := range shards {
		if err := run(t, append(args, "-o", filepath.Join(dir, name), "-q")...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
	}
	path := func(name string) string {
		if name == "ratings" {
			return filepath.Join(dir, name)
		}
		return filepath.Join(dir, name, "shards")
	}
	fit := []string{"--L", "2", "--chains", "1", "--burn-in", "4", "--samples", "4", "--starts", "1", "-j", "2", "-q"}
	for _, tc := range []struct {
		shards string
		flags  []string
		want   string // noise, housekeeping
	}{
		{"ratings", nil, "symmetric off"},
		{"ormachine", nil, "symmetric off"},
		{"digits", nil, "symmetric off"},
		{"singlecell", nil, "dropout on"},
		{"ormachine", []string{"--noise", "dropout"}, "dropout off"},
		{"ormachine", []string{"--housekeeping", "on"}, "symmetric on"},
		{"singlecell", []string{"--noise", "symmetric", "--housekeeping", "off"}, "symmetric off"},
	} {
		out := filepath.Join(t.TempDir(), "run")
		args := append(append([]string{"fit", path(tc.shards), "-o", out}, fit...), tc.flags...)
		if err := run(t, args...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
		cfg, _, err := pipeline.LoadFitConfig(filepath.Join(out, rundir.ConfigFile), pipeline.FitConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(cfg.Noise, cfg.Housekeeping); got != tc.want {
			t.Errorf("%s %v: noise and housekeeping %s, want %s", tc.shards, tc.flags, got, tc.want)
		}
		if len(tc.flags) == 0 {
			continue
		}
		// A resumed run takes its model from config.toml, not from the
		// auto default.
		if err := os.Remove(filepath.Join(rundir.FitDir(out, 2, 1), rundir.TraceFile)); err != nil {
			t.Fatal(err)
		}
		if err := run(t, "fit", path(tc.shards), "-o", out, "--resume", "-q"); err != nil {
			t.Fatalf("%s %v: --resume: %v", tc.shards, tc.flags, err)
		}
		cfg, _, err = pipeline.LoadFitConfig(filepath.Join(out, rundir.ConfigFile), pipeline.FitConfig{})
		if got := fmt.Sprint(cfg.Noise, cfg.Housekeeping); err != nil || got != tc.want {
			t.Errorf("%s %v: after --resume, noise and housekeeping %s (%v), want %s", tc.shards, tc.flags, got, err, tc.want)
		}
		if _, err := os.Stat(filepath.Join(rundir.FitDir(out, 2, 1), rundir.TraceFile)); err != nil {
			t.Errorf("%s %v: --resume did not finish the fit: %v", tc.shards, tc.flags, err)
		}
	}
}
