//go:build slow

package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"scpipe/internal/rundir"
	"scpipe/shard"
	"scpipe/simulate"
)

// samplesParams is issue 43's planted setting: the single-cell
// simulation of the planted single-cell target (simulate's defaults: 4,000
// cells × 2,000 genes, six programs) in three samples of equal depth, the
// third with twice the background of the others (samplesShards), and with
// sampleProgram a seventh program present in the first sample only (half
// its cells).
func samplesParams(seed uint64, sampleProgram bool) simulate.Params {
	p := simulate.DefaultSingleCellParams()
	p.Seed = seed
	p.Samples = simulate.SampleParams{Samples: 3, ProgramFraction: 0.5}
	if sampleProgram {
		p.Samples.Programs = 1
	}
	return p
}

// samplesShards writes the shards of samplesParams with the third
// sample's background twice the others'.
func samplesShards(t *testing.T, p simulate.Params) (string, *simulate.Truth) {
	t.Helper()
	tr, err := simulate.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	tr.SampleBackground = []float64{1, 1, 2} // the rows are drawn as they are written
	dir := filepath.Join(t.TempDir(), "sim")
	if err := simulate.WriteShards(context.Background(), dir, tr, shard.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, simulate.ShardsDir), tr
}

// TestSamplesPlantedAllSeeds fits issue 43's planted samples on ten seeds
// at the planted L (the recommended L's sweep of 2..10 costs nine times
// as much) with the defaults otherwise (two chains, the samples model on)
// and without the model (--samples-model=false), in the chain of the
// higher log-likelihood. It requires, with the model: no program marked
// sample-specific without a sample program; the sample program found
// (Jaccard ≥ 0.9) and marked, sample1's alone, on every seed; and every
// program recovered (Jaccard ≥ 0.9) on at least as many seeds as without
// the model. Issue 43's 10 of 10 is not reached: the same data without
// the third sample's extra background, fitted without the model, recover
// every program on 4 of the 10 seeds (docs/real-data.md).
func TestSamplesPlantedAllSeeds(t *testing.T) {
	for _, sampleProgram := range []bool{false, true} {
		recovered := map[bool]int{}
		for seed := uint64(1); seed <= 10; seed++ {
			shards, truth := samplesShards(t, samplesParams(seed, sampleProgram))
			for _, model := range []bool{true, false} {
				cfg := DefaultFitConfig()
				cfg.Shards, cfg.Output = shards, filepath.Join(t.TempDir(), "run")
				cfg.L, cfg.Threads, cfg.Seed, cfg.SamplesModel = LSizes{truth.Programs()}, 2, seed, model
				if _, err := Fit(context.Background(), cfg, FitOptions{}); err != nil {
					t.Fatal(err)
				}
				summary, err := rundir.ReadSummary(filepath.Join(cfg.Output, rundir.SummaryFile))
				if err != nil {
					t.Fatal(err)
				}
				best := summary[0]
				for _, row := range summary {
					if row.LogLik > best.LogLik {
						best = row
					}
				}
				r := recoverPlanted(t, truth, rundir.FitDir(cfg.Output, best.L, best.Chain))
				rows, err := rundir.ReadSamples(filepath.Join(cfg.Output, rundir.SampleUsageFile))
				if err != nil {
					t.Fatal(err)
				}
				var marked []string
				sample1 := 0
				for _, row := range rows {
					if row.SampleSpecific && row.OfProgram >= rundir.SampleSpecificShare {
						marked = append(marked, fmt.Sprintf("code %d: %s", row.Code, row.Sample))
						if row.Sample == "sample1" { // simulate names its samples sample1, sample2, …
							sample1++
						}
					}
				}
				if r.worst() >= 0.9 {
					recovered[model]++
				}
				t.Logf("sample program %v, seed %d, samples model %v: chain %d: Jaccard %.3f, marked %q", sampleProgram, seed, model, best.Chain, r.Jaccard, marked)
				switch {
				case !model:
				case !sampleProgram && len(marked) > 0:
					t.Errorf("seed %d: programs marked sample-specific without a sample program: %q", seed, marked)
				case sampleProgram && (len(marked) != 1 || sample1 != 1 || r.Jaccard[len(r.Jaccard)-1] < 0.9):
					t.Errorf("seed %d: the sample program: Jaccard %.3f, marked %q; want it found, one program, sample1's", seed, r.Jaccard[len(r.Jaccard)-1], marked)
				}
			}
		}
		t.Logf("sample program %v: every program recovered on %d of 10 seeds with the samples model, %d without", sampleProgram, recovered[true], recovered[false])
		if recovered[true] < recovered[false] {
			t.Errorf("sample program %v: every program recovered on %d of 10 seeds with the samples model, %d without", sampleProgram, recovered[true], recovered[false])
		}
	}
}
