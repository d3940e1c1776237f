package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/gibbs"
	"scpipe/internal/rundir"

	"scpipe/simulate/simtest"
)

// layersConfigFor returns a small two-layer fit of the planted shards.
func layersConfigFor(shards, out string) FitConfig {
	c := smallConfig(shards, out)
	c.Layers, c.L = LayerSizes{4, 2}, LSizes{4}
	c.Noise, c.Housekeeping, c.Starts, c.Chains, c.Reseed = givenNoise(gibbs.Symmetric), GivenHousekeeping(false), 1, 1, false
	c.BurnIn, c.Samples, c.CheckpointEvery = 20, 10, 3
	c.LayerPriorU = LayerPriors{gibbs.FixedPrior(0.1), gibbs.FixedPrior(0.3)}
	return c
}

// layersDigest adds to digest every file of the multi-layer fits, traces
// with the seconds zeroed.
func layersDigest(t *testing.T, run string, layers int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(digest(t, run))
	fits, err := rundir.Fits(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fits {
		files := []string{filepath.Join(f.Dir, rundir.LayersFile)}
		for k := 1; k <= layers; k++ {
			ld := rundir.LayerDir(f.Dir, k)
			files = append(files, filepath.Join(ld, rundir.PrototypesFile))
			if k == 1 {
				continue
			}
			files = append(files, filepath.Join(ld, rundir.LayerCodesFile), filepath.Join(ld, rundir.CellsFile))
			trace, err := rundir.ReadTrace(filepath.Join(ld, rundir.TraceFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range trace {
				r.Seconds = 0
				fmt.Fprintf(&b, "layer %d trace %+v\n", k, r)
			}
		}
		for _, name := range files {
			// Every file of a layer is in its folder's checksums.
			data, err := rundir.ReadChecksummed(name)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %x\n", strings.TrimPrefix(name, run), data)
		}
	}
	return b.String()
}

// TestFitLayers runs a two-layer fit through Fit: the run holds the first
// layer as an ordinary fit of L = 4 (summary included) and each layer's
// files; -j 1 and -j 2 write the same bytes, and so does a run
// interrupted at a checkpoint and resumed.
func TestFitLayers(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	ref := layersConfigFor(shards, filepath.Join(t.TempDir(), "ref"))
	ref.Threads = 1
	rep, err := Fit(context.Background(), ref, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Summary) != 1 || rep.Summary[0].L != 4 {
		t.Fatalf("summary %+v, want one row for L = 4", rep.Summary)
	}
	want := layersDigest(t, ref.Output, 2)
	layers, err := os.ReadFile(filepath.Join(rundir.FitDir(ref.Output, 4, 1), rundir.LayersFile))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(layers)), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[1], "1\t4\t") || !strings.HasPrefix(lines[2], "2\t2\t") {
		t.Errorf("layers.tsv:\n%s", layers)
	}
	codes, err := os.ReadFile(filepath.Join(rundir.LayerDir(rundir.FitDir(ref.Output, 4, 1), 2), rundir.LayerCodesFile))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(codes)), "\n"); len(lines) != 5 || lines[0] != "unit\tcode_1\tcode_2" || !strings.HasPrefix(lines[1], "code_1\t") {
		t.Errorf("layer 2's codes.tsv:\n%s", codes)
	}

	t.Run("threads", func(t *testing.T) {
		cfg := ref
		cfg.Output, cfg.Threads = filepath.Join(t.TempDir(), "run"), 2
		if _, err := Fit(context.Background(), cfg, FitOptions{}); err != nil {
			t.Fatal(err)
		}
		if layersDigest(t, cfg.Output, 2) != want {
			t.Error("-j 1 and -j 2 wrote different multi-layer results")
		}
	})
	t.Run("interrupt and resume", func(t *testing.T) {
		cfg := ref
		cfg.Output, cfg.Threads = filepath.Join(t.TempDir(), "run"), 2
		ctx, cancel := context.WithCancel(context.Background())
		_, err := Fit(ctx, cfg, FitOptions{afterSweep: cancelAfter(3, cancel)})
		cancel()
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("interrupted fit returned %v", err)
		}
		if name := "(layers " + cfg.Layers.String() + ")"; !strings.Contains(err.Error(), name) {
			t.Errorf("interrupted fit's error %q does not name its layers %s", err, name)
		}
		cfg.Threads = 1
		if _, err := Fit(context.Background(), cfg, FitOptions{Resume: true, Log: childLog()}); err != nil {
			t.Fatal(err)
		}
		if layersDigest(t, cfg.Output, 2) != want {
			t.Error("interrupted and resumed multi-layer run differs from the uninterrupted run")
		}
	})
}

// TestLayersConfig: what a multi-layer fit refuses, with the reason, and
// that its settings go through config.toml unchanged.
func TestLayersConfig(t *testing.T) {
	base := layersConfigFor("shards", "out")
	for _, tc := range []struct {
		name, want string
		edit       func(*FitConfig)
	}{
		{"one layer", "two layers or more", func(c *FitConfig) { c.Layers = LayerSizes{4}; c.LayerPriorU = nil }},
		{"another L", "leave --L out", func(c *FitConfig) { c.L = LSizes{3, 4} }},
		{"dropout noise", "--noise symmetric", func(c *FitConfig) { c.Noise = givenNoise(gibbs.Dropout) }},
		{"housekeeping", "--housekeeping off", func(c *FitConfig) { c.Housekeeping = GivenHousekeeping(true) }},
		{"starts", "--starts 1", func(c *FitConfig) { c.Starts = 4 }},
		{"re-seeding", "--reseed=false", func(c *FitConfig) { c.Reseed = true }},
		{"kept samples", "--keep-samples", func(c *FitConfig) { c.KeepSamples = true }},
		{"empirical top Z", "prior_z", func(c *FitConfig) { c.PriorZ = givenPrior(gibbs.EmpiricalPrior()) }},
		{"priors per layer", "2 priors for 3 layers", func(c *FitConfig) { c.Layers, c.L = LayerSizes{4, 2, 1}, LSizes{4} }},
		{"empirical above", "only the first layer", func(c *FitConfig) { c.LayerPriorU[1] = gibbs.EmpiricalPrior() }},
		{"priors without layers", "without layers", func(c *FitConfig) { c.Layers = nil }},
	} {
		c := base
		c.LayerPriorU = append(LayerPriors(nil), base.LayerPriorU...)
		tc.edit(&c)
		if _, err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := base.encodeTOML()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, _, err := LoadFitConfig(path, FitConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if back.hash() != base.hash() || back.Layers.String() != "4,2" {
		t.Errorf("config.toml round trip: layers %q, priors %v", back.Layers, back.LayerPriorU)
	}
	// A single-layer configuration writes no layer keys.
	if b, _ := smallConfig("s", "o").encodeTOML(); strings.Contains(string(b), "layer") {
		t.Errorf("a single-layer config.toml mentions layers:\n%s", b)
	}
}
