package runsummary

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"scpipe/internal/rundir"
	"scpipe/pipeline/internal/holdout"
	"scpipe/pipeline/internal/predictive"
	"scpipe/shard"
	"scpipe/simulate"

	"scpipe/simulate/simtest"
)

// TestScoresIgnoreWorkers checks that the held-out scores, computed in
// chunks of predictive.CellChunk cells on several goroutines, are
// identical (bit for bit, floating-point sums included) for any number of
// workers and whether the held-out entries are read off the run's fit mask
// or drawn again, on a dataset of several chunks.
func TestScoresIgnoreWorkers(t *testing.T) {
	t.Parallel()
	p := simulate.Params{Cells: 3*predictive.CellChunk + 123, Genes: 70, L: 3, CodeDensity: 0.2, UsageDensity: 0.3, FlipOn: 0.01, FlipOff: 0.05, Seed: 5}
	src, _ := simtest.Open(t, p)
	h := holdout.Spec{Seed: 9, Frac: 0.05}
	run := t.TempDir()
	if _, err := holdout.WriteMask(context.Background(), run, src, h, shard.CreateOptions{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	fromMask, err := holdout.OpenEntries(context.Background(), run, src, h, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer fromMask.Close()

	L := 3
	r := rand.New(rand.NewPCG(1, 2))
	zMean, uMean := make([]float64, p.Cells*L), make([]float64, p.Genes*L)
	for i := range zMean {
		zMean[i] = r.Float64()
	}
	for i := range uMean {
		uMean[i] = r.Float64()
	}
	type score struct{ acc, logpred float64 }
	lifts := make([]float64, p.Genes)
	cellRates := make([]float64, p.Cells)
	for d := range lifts {
		lifts[d] = r.Float64() - 0.5
	}
	for n := range cellRates {
		cellRates[n] = 0.02 + 0.05*r.Float64()
	}
	means := predictive.Means{L: L, Z: zMean, U: uMean}
	for _, lik := range []predictive.PlugIn{
		predictive.NewPlugIn(rundir.TraceRow{Lambda: 1.7}, rundir.Cells{}, rundir.Codes{}),
		predictive.NewPlugIn(rundir.TraceRow{Lambda: math.NaN(), Dropout: 0.6, Background: 0.03}, rundir.Cells{}, rundir.Codes{}),
		predictive.NewPlugIn(rundir.TraceRow{Lambda: math.NaN()}, rundir.Cells{Dropout: cellRates, Background: cellRates}, rundir.Codes{GeneLift: lifts}),
	} {
		var scores []score
		for _, workers := range []int{1, 2, 5} {
			for _, held := range []holdout.Entries{{Spec: h}, fromMask} {
				sc, err := scoreHeldOut(context.Background(), src, held, means, lik, workers)
				if err != nil {
					t.Fatal(err)
				}
				acc, lp := sc.accuracy, sc.logpred
				if !(acc >= 0 && acc <= 1) || !(lp < 0) {
					t.Fatalf("%+v, workers %d: accuracy %v, log predictive %v", lik, workers, acc, lp)
				}
				scores = append(scores, score{acc, lp})
			}
		}
		for i := range scores {
			if scores[i] != scores[0] {
				t.Errorf("%+v: held-out scores depend on the number of workers or on where the held-out entries come from: %+v", lik, scores)
				break
			}
		}
	}
}
