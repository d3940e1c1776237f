package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/gibbs"
	"scpipe/internal/rundir"
	"scpipe/shard"
	"scpipe/simulate"

	"scpipe/simulate/simtest"
)

// TestResolveModel is the table of the auto model: each kind of shards
// (as ingest, ingest --format ratings and simulate record them, and as
// manifests written before Source.Values say them) resolves to the
// single-cell or the paper's model, and given settings always win.
func TestResolveModel(t *testing.T) {
	t.Parallel()
	type want struct {
		noise        gibbs.Noise
		housekeeping bool
	}
	singleCell, paper := want{gibbs.Dropout, true}, want{gibbs.Symmetric, false}
	for _, tc := range []struct {
		name   string
		source shard.Source
		count  int64 // ratings
		want   want
	}{
		{"10x HDF5 v3 counts", shard.Source{Format: "10x-h5-v3", Values: shard.ValuesCounts}, 0, singleCell},
		{"10x HDF5 v2 counts", shard.Source{Format: "10x-h5-v2", Values: shard.ValuesCounts}, 0, singleCell},
		{"MTX counts", shard.Source{Format: "10x-mtx", Values: shard.ValuesCounts}, 0, singleCell},
		{"h5ad counts", shard.Source{Format: "h5ad", Values: shard.ValuesCounts}, 0, singleCell},
		{"MTX of ones", shard.Source{Format: "10x-mtx", Values: shard.ValuesBinary}, 0, paper},
		{"h5ad of ones", shard.Source{Format: "h5ad", Values: shard.ValuesBinary}, 0, paper},
		{"ratings", shard.Source{Format: "movielens-100k", Values: shard.ValuesRatings}, 100, paper},
		{"ratings of an older scpipe", shard.Source{Format: "movielens-100k"}, 100, paper},
		{"simulate ormachine or digits", shard.Source{Format: "simulate", Values: shard.ValuesBinary}, 0, paper},
		{"simulate singlecell", shard.Source{Format: "simulate", Values: shard.ValuesCounts}, 0, singleCell},
		{"10x of an older scpipe", shard.Source{Format: "10x-h5-v3"}, 0, singleCell},
		{"simulate of an older scpipe", shard.Source{Format: "simulate"}, 0, singleCell},
		{"values this build does not know", shard.Source{Format: "10x-mtx", Values: "probabilities"}, 0, singleCell},
	} {
		m := &shard.Manifest{Source: tc.source, Ratings: shard.Ratings{Count: tc.count}}
		kind, why := dataKindOf(m)
		if why == "" {
			t.Errorf("%s: no reason given", tc.name)
		}
		got := DefaultFitConfig().Resolve(kind)
		if got.Noise != givenNoise(tc.want.noise) || got.Housekeeping != GivenHousekeeping(tc.want.housekeeping) {
			t.Errorf("%s: resolved to noise %v, housekeeping %v; want %v, %v", tc.name, got.Noise, got.Housekeeping, tc.want.noise, tc.want.housekeeping)
		}
		// Given settings win, each on its own.
		for _, n := range []gibbs.Noise{gibbs.Symmetric, gibbs.Dropout} {
			for _, hk := range []bool{false, true} {
				cfg := DefaultFitConfig()
				cfg.Noise = givenNoise(n)
				if r := cfg.Resolve(kind); r.Noise != givenNoise(n) || r.Housekeeping != GivenHousekeeping(tc.want.housekeeping) {
					t.Errorf("%s: --noise %v resolved to noise %v, housekeeping %v", tc.name, n, r.Noise, r.Housekeeping)
				}
				cfg.Housekeeping = GivenHousekeeping(hk)
				if r := cfg.Resolve(kind); r.Noise != givenNoise(n) || r.Housekeeping != GivenHousekeeping(hk) {
					t.Errorf("%s: --noise %v --housekeeping=%v resolved to noise %v, housekeeping %v", tc.name, n, hk, r.Noise, r.Housekeeping)
				}
			}
		}
	}
}

// TestModelSettingsText: the auto settings and the given ones survive
// TOML (a given housekeeping is a TOML boolean, as in configurations
// written before it could be auto) and JSON.
func TestModelSettingsText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		noise NoiseSetting
		hk    HousekeepingSetting
		toml  string
	}{
		{autoNoise(), autoHousekeeping(), "noise = \"auto\"\nhousekeeping = \"auto\"\n"},
		{givenNoise(gibbs.Symmetric), GivenHousekeeping(false), "noise = \"symmetric\"\nhousekeeping = false\n"},
		{givenNoise(gibbs.Dropout), GivenHousekeeping(true), "noise = \"dropout\"\nhousekeeping = true\n"},
	} {
		cfg := DefaultFitConfig()
		cfg.Noise, cfg.Housekeeping = tc.noise, tc.hk
		b, err := cfg.encodeTOML()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(tc.toml) {
			if !bytes.Contains(b, []byte(line)) {
				t.Errorf("TOML lacks %q:\n%s", line, b)
			}
		}
		path := filepath.Join(dir, "c.toml")
		if err := os.WriteFile(path, b, 0o666); err != nil {
			t.Fatal(err)
		}
		back, _, err := LoadFitConfig(path, FitConfig{})
		if err != nil || back.hash() != cfg.hash() {
			t.Errorf("%v %v: TOML round trip gave %v %v (%v)", tc.noise, tc.hk, back.Noise, back.Housekeeping, err)
		}
		j, err := json.Marshal(cfg)
		var fromJSON FitConfig
		if err == nil {
			err = json.Unmarshal(j, &fromJSON)
		}
		if err != nil || fromJSON.Noise != tc.noise || fromJSON.Housekeeping != tc.hk {
			t.Errorf("%v %v: JSON round trip gave %v %v (%v)", tc.noise, tc.hk, fromJSON.Noise, fromJSON.Housekeeping, err)
		}
	}
	for _, bad := range []string{"noise = \"poisson\"\n", "housekeeping = \"sometimes\"\n", "housekeeping = 1\n"} {
		path := filepath.Join(dir, "bad.toml")
		if err := os.WriteFile(path, []byte(bad), 0o666); err != nil {
			t.Fatal(err)
		}
		if _, _, err := LoadFitConfig(path, DefaultFitConfig()); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// tinyFit is a fit small enough to run several of in a test.
func tinyFit(shards, out string) FitConfig {
	c := DefaultFitConfig()
	c.Shards, c.Output = shards, out
	c.L, c.Chains, c.BurnIn, c.Samples, c.Starts, c.Threads = LSizes{3}, 1, 6, 6, 2, 2
	return c
}

// TestAutoModelFits: through Fit and its defaults, simulated binary
// shards get the paper's model and simulated single-cell counts the
// single-cell model, each bit for bit the fit of the same model given
// explicitly (so the single-cell defaults fit as they did before auto);
// the run's config.toml records the model, and the log says it and why.
func TestAutoModelFits(t *testing.T) {
	cellsParams := simulate.DefaultSingleCellParams()
	cellsParams.Cells, cellsParams.Genes, cellsParams.L = 300, 150, 3
	binary := simulate.Params{Cells: 200, Genes: 120, L: 3, CodeDensity: 0.2, UsageDensity: 0.3, FlipOn: 0.02, FlipOff: 0.02, Seed: 5}
	for _, tc := range []struct {
		name         string
		params       simulate.Params
		noise        gibbs.Noise
		housekeeping bool
		why          string
	}{
		{"ormachine", binary, gibbs.Symmetric, false, "simulated binary data"},
		{"singlecell", cellsParams, gibbs.Dropout, true, "simulated single-cell counts"},
	} {
		shards, _ := simtest.Shards(t, tc.params)
		dir := t.TempDir()
		var log bytes.Buffer
		auto := tinyFit(shards, filepath.Join(dir, "auto"))
		if _, err := Fit(context.Background(), auto, FitOptions{Log: slog.New(slog.NewTextHandler(&log, nil))}); err != nil {
			t.Fatal(err)
		}
		given := tinyFit(shards, filepath.Join(dir, "given"))
		given.Noise, given.Housekeeping = givenNoise(tc.noise), GivenHousekeeping(tc.housekeeping)
		if _, err := Fit(context.Background(), given, FitOptions{}); err != nil {
			t.Fatal(err)
		}
		stored, _, err := LoadFitConfig(filepath.Join(auto.Output, rundir.ConfigFile), FitConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if stored.Noise != given.Noise || stored.Housekeeping != given.Housekeeping {
			t.Errorf("%s: config.toml records noise %v, housekeeping %v; want %v, %v", tc.name, stored.Noise, stored.Housekeeping, given.Noise, given.Housekeeping)
		}
		if !strings.Contains(log.String(), "model: "+tc.why) || !strings.Contains(log.String(), "noise="+tc.noise.String()) {
			t.Errorf("%s: the log does not say the model (%s) and why (%s):\n%s", tc.name, tc.noise, tc.why, log.String())
		}
		for _, f := range []string{rundir.CodesFile, rundir.CellsFile} {
			a, err1 := os.ReadFile(filepath.Join(rundir.FitDir(auto.Output, 3, 1), f))
			b, err2 := os.ReadFile(filepath.Join(rundir.FitDir(given.Output, 3, 1), f))
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
				t.Errorf("%s: %s of the auto model differs from the given model's (%v, %v)", tc.name, f, err1, err2)
			}
		}
		trace, err := rundir.ReadTrace(filepath.Join(rundir.FitDir(auto.Output, 3, 1), rundir.TraceFile))
		if err != nil {
			t.Fatal(err)
		}
		if symmetric := !math.IsNaN(trace[len(trace)-1].Lambda); symmetric != (tc.noise == gibbs.Symmetric) {
			t.Errorf("%s: the fit's trace has λ = %v under %v noise", tc.name, trace[len(trace)-1].Lambda, tc.noise)
		}
	}
}

// TestResumedRunKeepsModel: a run keeps the model it was started with
// when it is resumed or fitted by --chain processes with the auto
// settings: a prepared run of binary shards given dropout noise and a
// housekeeping code is fitted with them by FitChain, and Fit --resume of
// a run started with the auto model resolves to the same model.
func TestResumedRunKeepsModel(t *testing.T) {
	shards, _ := simtest.Shards(t, simulate.Params{Cells: 150, Genes: 100, L: 3, CodeDensity: 0.2, UsageDensity: 0.3, Seed: 9})
	dir := t.TempDir()

	prep := tinyFit(shards, filepath.Join(dir, "prepared"))
	prep.Noise, prep.Housekeeping = givenNoise(gibbs.Dropout), GivenHousekeeping(true)
	if _, err := Prepare(context.Background(), prep, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := FitChain(context.Background(), tinyFit(shards, prep.Output), 1, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	codes, err := rundir.ReadCodes(filepath.Join(rundir.FitDir(prep.Output, 3, 1), rundir.CodesFile))
	if err != nil {
		t.Fatal(err)
	}
	if codes.Housekeeping == nil {
		t.Error("--chain with the auto model dropped the housekeeping code the run was prepared with")
	}
	trace, err := rundir.ReadTrace(filepath.Join(rundir.FitDir(prep.Output, 3, 1), rundir.TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(trace[0].Lambda) {
		t.Error("--chain with the auto model fitted symmetric noise to a run prepared with dropout noise")
	}

	run := tinyFit(shards, filepath.Join(dir, "run"))
	if _, err := Prepare(context.Background(), run, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := Fit(context.Background(), run, FitOptions{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	stored, _, err := LoadFitConfig(filepath.Join(run.Output, rundir.ConfigFile), FitConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fitted != 1 || stored.Noise != givenNoise(gibbs.Symmetric) || stored.Housekeeping != GivenHousekeeping(false) {
		t.Errorf("resumed: %d fitted, model %v, housekeeping %v; want 1, symmetric, false", rep.Fitted, stored.Noise, stored.Housekeeping)
	}
}

// TestAutoPrior checks the rule of PriorSetting.Resolve, that the sampler
// is given the prior auto stands for under the fit's likelihood (the one
// place it is resolved), and the setting's text.
func TestAutoPrior(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		noise gibbs.Noise
		want  gibbs.PriorKind
	}{{gibbs.Symmetric, gibbs.Empirical}, {gibbs.Dropout, gibbs.Uniform}} {
		if got := autoPrior().Resolve(tc.noise); got.Kind != tc.want {
			t.Errorf("auto under %v is %v", tc.noise, got)
		}
		if got := givenPrior(gibbs.FixedPrior(0.2)).Resolve(tc.noise); got.Kind != gibbs.Fixed {
			t.Errorf("a given prior resolves to %v under %v", got, tc.noise)
		}
		c := DefaultFitConfig()
		c.Noise = givenNoise(tc.noise)
		if sc := samplerConfig(c, 3, 1); sc.PriorU.Kind != tc.want || sc.PriorZ.Kind != tc.want {
			t.Errorf("under %v the sampler is given priors %v and %v", tc.noise, sc.PriorU, sc.PriorZ)
		}
	}
	for _, tc := range []struct{ in, want string }{{"auto", "auto"}, {" AUTO", "auto"}, {"Uniform", "uniform"}, {"0.05", "0.05"}, {"sometimes", ""}} {
		var s PriorSetting
		err := s.UnmarshalText([]byte(tc.in))
		if (err == nil) != (tc.want != "") || err == nil && s.String() != tc.want {
			t.Errorf("%q: read as %v (%v), want %q", tc.in, s, err, tc.want)
		}
	}
}
