package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"scpipe/predictive"
	"scpipe/rundir"
	"scpipe/shard"
	"scpipe/simulate"
)

// TestHoldoutPassesIgnoreWorkers checks that the fit mask and the held-out
// scores, computed in chunks of predictive.CellChunk cells on several goroutines, are
// identical (bit for bit, floating-point sums included) for any number of
// workers and whether the held-out entries are read off the fit mask or
// drawn again, on a dataset of several chunks, and that the mask hides
// about the held-out fraction.
func TestHoldoutPassesIgnoreWorkers(t *testing.T) {
	t.Parallel()
	p := simulate.Params{Cells: 3*predictive.CellChunk + 123, Genes: 70, L: 3, CodeDensity: 0.2, UsageDensity: 0.3, FlipOn: 0.01, FlipOff: 0.05, Seed: 5}
	dir, _ := plantedShards(t, p)
	src, err := shard.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	h := holdout{Seed: 9, Frac: 0.05}
	entries := float64(p.Cells * p.Genes)

	var crcs []string
	var mask string
	for _, workers := range []int{1, 3, 8} {
		out := filepath.Join(t.TempDir(), "mask")
		// Through the page cache or around it, the files are the same.
		held, err := writeFitMask(context.Background(), src, out, h, shard.CreateOptions{Workers: workers, Cached: workers == 3})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(held)-h.Frac*entries) > 5*math.Sqrt(h.Frac*entries) {
			t.Errorf("workers %d: %d entries held out of %g, want about %g", workers, held, entries, h.Frac*entries)
		}
		fm, err := shard.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := fm.Manifest().Ones + held; got != int64(entries) {
			t.Errorf("workers %d: mask ones %d + held %d ≠ %g entries", workers, fm.Manifest().Ones, held, entries)
		}
		crcs = append(crcs, fmt.Sprint(fm.Manifest().Files))
		fm.Close()
		mask = out
	}
	fm, err := shard.Open(mask)
	if err != nil {
		t.Fatal(err)
	}
	defer fm.Close()
	if crcs[0] != crcs[1] || crcs[0] != crcs[2] {
		t.Error("the fit mask depends on the number of workers")
	}

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
			for _, held := range []heldOut{{holdout: h}, {holdout: h, fit: fm}} {
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

// TestFitMaskBits checks every bit of the fit mask, written on several
// goroutines over shards of several cell blocks, with and without an
// observed mask of their own: observed and not held out, in X and in XT.
func TestFitMaskBits(t *testing.T) {
	t.Parallel()
	const cells, genes = 300, 70
	for _, masked := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "src")
		w, err := shard.Create(dir, shard.Layout{Cells: cells, Genes: genes, RowsPerBlock: 64, Masked: masked}, shard.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(3, 4))
		for c := range cells {
			for g := range genes {
				if r.Float64() < 0.2 {
					w.Set(c, g)
				}
				if masked && r.Float64() < 0.7 {
					w.SetObserved(c, g)
				}
			}
		}
		if err := w.Commit(shard.Manifest{}); err != nil {
			t.Fatal(err)
		}
		src, err := shard.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		h := holdout{Seed: 2, Frac: 0.1}
		for _, workers := range []int{1, 3} {
			out := filepath.Join(t.TempDir(), "mask")
			if _, err := writeFitMask(context.Background(), src, out, h, shard.CreateOptions{Workers: workers}); err != nil {
				t.Fatal(err)
			}
			fm, err := shard.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			obs, held := make([]uint64, (genes+63)/64), make([]uint64, (genes+63)/64)
			for c := range cells {
				src.ObservedRow(c, obs)
				h.row(c, genes, obs, held)
				for g := range genes {
					want := obs[g/64]>>(g%64)&1 == 1 && held[g/64]>>(g%64)&1 == 0
					if fm.X().At(c, g) != want || fm.XT().At(g, c) != want {
						t.Fatalf("masked %v, workers %d: fit mask at (%d, %d) is %v in X, %v in XT, want %v", masked, workers, c, g, fm.X().At(c, g), fm.XT().At(g, c), want)
					}
				}
			}
			fm.Close()
		}
		src.Close()
	}
}

// TestHoldoutPinned pins the entries that earlier versions held out of a
// few cells: writeSummary regenerates them to score a run's fits, so a change
// of the generator would score entries the fits had seen.
func TestHoldoutPinned(t *testing.T) {
	const genes = 256
	observed := make([]uint64, genes/64)
	for i := range observed {
		observed[i] = ^uint64(0)
	}
	dst := make([]uint64, genes/64)
	for _, tc := range []struct {
		cell int
		want []int
	}{
		{0, []int{18, 121, 150, 202, 217, 238, 241, 243}},
		{7, []int{0, 30, 35, 49, 74, 90, 162, 186, 188, 202, 203, 214}},
		{100000, []int{46, 48, 82, 83, 127, 164, 167, 175, 223}},
	} {
		holdout{Seed: 9, Frac: 0.05}.row(tc.cell, genes, observed, dst)
		var got []int
		for w, x := range dst {
			for ; x != 0; x &= x - 1 {
				got = append(got, w*64+bits.TrailingZeros64(x))
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("cell %d: held out %v, want %v", tc.cell, got, tc.want)
		}
	}
}
