//go:build slow

package enrich_test

// Ten fits of simulate's default single-cell data (4,000 cells × 2,000
// genes, L = 6, two chains each): 40 s of CPU, two minutes on a 2-core
// machine shared with other work, past the minute a test of `go test
// ./...` may take there. It builds only with -tags slow, which .ci/run
// passes.

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"scpipe/enrich"
	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
	"scpipe/pipeline"
	"scpipe/shard"
	"scpipe/simulate"
)

// calibrationConfig names a TOML file of fit settings (the keys of scpipe
// fit --config) that TestPlantedSingleCellCalibration puts over the
// defaults, to measure settings that are not (yet) the defaults:
//
//	go test -tags slow -run Calibration -v ./enrich/ -args -calibration.config candidate.toml
var calibrationConfig = flag.String("calibration.config", "", "TestPlantedSingleCellCalibration: a TOML file of fit settings over the defaults")

// reliability counts, per bin of predicted probability, the predictions,
// their sum and how many of them were right about a 1.
type reliability struct {
	edges []float64 // bin b is [edges[b], edges[b+1]); the last includes 1
	n     []int
	sumP  []float64
	ones  []int
}

// calibrationEdges are the bins of predicted probability: the half that
// says "yes" in three, the half that says "no" in three.
var calibrationEdges = []float64{0, 0.1, 0.3, 0.5, 0.7, 0.9, 1}

func newReliability() *reliability {
	b := len(calibrationEdges) - 1
	return &reliability{edges: calibrationEdges, n: make([]int, b), sumP: make([]float64, b), ones: make([]int, b)}
}

// add counts the prediction p of an outcome truth.
func (r *reliability) add(p float64, truth bool) {
	b := len(r.n) - 1
	for b > 0 && p < r.edges[b] {
		b--
	}
	r.n[b]++
	r.sumP[b] += p
	if truth {
		r.ones[b]++
	}
}

// merge adds o's counts to r's.
func (r *reliability) merge(o *reliability) {
	for b := range r.n {
		r.n[b] += o.n[b]
		r.sumP[b] += o.sumP[b]
		r.ones[b] += o.ones[b]
	}
}

// bin returns bin b's count, mean prediction and frequency of ones.
func (r *reliability) bin(b int) (n int, predicted, observed float64) {
	if r.n[b] == 0 {
		return 0, math.NaN(), math.NaN()
	}
	return r.n[b], r.sumP[b] / float64(r.n[b]), float64(r.ones[b]) / float64(r.n[b])
}

func (r *reliability) String() string {
	var s strings.Builder
	for b := range r.n {
		n, pred, obs := r.bin(b)
		end := ")"
		if b == len(r.n)-1 {
			end = "]"
		}
		fmt.Fprintf(&s, "  [%.1f, %.1f%s  n %7d  predicted %.3f  observed %.3f\n", r.edges[b], r.edges[b+1], end, n, pred, obs)
	}
	return s.String()
}

// TestPlantedSingleCellCalibration checks that scpipe's posterior
// probabilities mean what they say on planted single-cell data with
// per-cell depth and per-gene baselines and lifts: simulate's default
// single-cell data (TestPlantedSingleCell's: Poisson detection, so that
// dropout falls with depth and lift and background rises with depth and
// baseline), seeds 1–10, fitted by pipeline.Fit with every default but L
// (the planted 6) and the held-out fraction (none):
//
//   - each fit's gene sets at a false discovery rate of 5% (enrich's
//     FDRGenes, what `scpipe enrich --fdr 0.05` writes) hold at most 5% of
//     genes that the planted program of their best match does not hold,
//     pooled over the fit's programs (the realised FDR, as
//     TestPlantedFDRAndTop counts it), on every seed;
//   - the posterior means of u_ld (codes.parquet) and of z_nl
//     (cells.parquet) of every chain, its codes matched one to one to the
//     planted programs (codematch.Match of the MAP gene sets), are
//     reliable where they are sure: pooled over seeds and chains, means of
//     at least 0.9 are right about a 1 at least 85% of the time and means
//     below 0.1 wrong at most 15% of the time, for U and for Z. (Calibrated
//     means of 0.9 to 1 are right 90–100% of the time; the 5 points below
//     leave room for seed-to-seed spread, not for a sampler whose sure
//     means are often wrong.) Genes of the fit's housekeeping code (mean
//     ≥ ½) are left out of U's table: every cell covers them, so the data
//     say nothing of their u in the other codes, whose means stay at the
//     prior's ½.
//
// The tables of every bin are logged; VALIDATION.md holds them.
func TestPlantedSingleCellCalibration(t *testing.T) {
	const seeds = 10
	u, z := newReliability(), newReliability()
	for seed := uint64(1); seed <= seeds; seed++ {
		p := simulate.DefaultSingleCellParams()
		p.Seed = seed
		fdr, su, sz := plantedCalibration(t, p)
		if fdr > 0.05 {
			t.Errorf("seed %d: realised FDR %.4f above 0.05", seed, fdr)
		}
		u.merge(su)
		z.merge(sz)
	}
	t.Logf("posterior means of u_ld, pooled over %d seeds and every chain:\n%s", seeds, u)
	t.Logf("posterior means of z_nl, pooled over %d seeds and every chain:\n%s", seeds, z)
	for _, c := range []struct {
		name string
		r    *reliability
	}{{"u_ld", u}, {"z_nl", z}} {
		if n, pred, obs := c.r.bin(len(c.r.n) - 1); n == 0 || obs < 0.85 {
			t.Errorf("posterior means of %s of at least 0.9 (%d, mean %.3f) are right %.3f of the time, want at least 0.85", c.name, n, pred, obs)
		}
		if n, pred, obs := c.r.bin(0); n == 0 || obs > 0.15 {
			t.Errorf("posterior means of %s below 0.1 (%d, mean %.3f) are wrong %.3f of the time, want at most 0.15", c.name, n, pred, obs)
		}
	}
}

// plantedCalibration simulates p, fits it at the planted L and returns
// the realised FDR of its FDR gene sets and the reliability of its
// posterior means of U and Z.
func plantedCalibration(t *testing.T, p simulate.Params) (float64, *reliability, *reliability) {
	t.Helper()
	ctx := context.Background()
	seed := p.Seed
	truth, err := simulate.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if err := simulate.WriteShards(ctx, sim, truth, shard.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := pipeline.DefaultFitConfig()
	if *calibrationConfig != "" {
		if cfg, _, err = pipeline.LoadFitConfig(*calibrationConfig, cfg); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Shards, cfg.Output = filepath.Join(sim, simulate.ShardsDir), filepath.Join(dir, "run")
	cfg.L = pipeline.LSizes{p.L}
	cfg.Holdout, cfg.Threads = 0, 2
	if _, err := pipeline.Fit(ctx, cfg, pipeline.FitOptions{}); err != nil {
		t.Fatal(err)
	}
	planted := make([]codematch.Set, p.L)
	uses := make([]codematch.Set, p.L)
	for l := range p.L {
		planted[l], uses[l] = codematch.NewSet(p.Genes), codematch.NewSet(p.Cells)
		for _, g := range truth.ProgramGenes(l) {
			planted[l].Add(g)
		}
		for _, n := range truth.ProgramCells(l) {
			uses[l].Add(n)
		}
	}
	fdr := realisedFDR(t, seed, cfg.Output, truth.Baseline, planted)
	u, z := newReliability(), newReliability()
	for chain := 1; chain <= cfg.Chains; chain++ {
		fit := rundir.FitDir(cfg.Output, p.L, chain)
		codes, err := rundir.ReadCodes(filepath.Join(fit, rundir.CodesFile))
		if err != nil {
			t.Fatal(err)
		}
		cells, err := rundir.ReadCellMeans(filepath.Join(fit, rundir.CellsFile))
		if err != nil {
			t.Fatal(err)
		}
		L := codes.L
		if len(codes.GeneIDs) != p.Genes || cells.L != L || len(cells.Mean) != p.Cells*L || L != p.L {
			t.Fatalf("seed %d chain %d: %d genes, %d cell means, L = %d; simulated %d × %d, L = %d",
				seed, chain, len(codes.GeneIDs), len(cells.Mean), L, p.Cells, p.Genes, p.L)
		}
		hk, lost, other := 0, 0, 0 // sure u wrong: in codes of no program (Jaccard < ½), in the others
		m := codematch.Match(planted, codematch.MAPSets(codes.Mean, L))
		var matched []string
		for k, l := range m.To {
			matched = append(matched, fmt.Sprintf("%d→%d %.2f", k+1, l+1, m.Agreement[k]))
			for g := range p.Genes {
				if codes.Housekeeping != nil && codes.Housekeeping[g] >= 0.5 {
					hk++
					continue
				}
				mean := codes.Mean[g*L+k]
				u.add(mean, planted[l].Has(g))
				switch {
				case mean < 0.9 || planted[l].Has(g):
				case m.Agreement[k] < 0.5:
					lost++
				default:
					other++
				}
			}
			for n := range p.Cells {
				z.add(cells.Mean[n*L+k], uses[l].Has(n))
			}
		}
		t.Logf("seed %d chain %d: codes matched to planted programs (Jaccard of MAP sets) %s; %d housekeeping genes left out; "+
			"u ≥ 0.9 wrong %d times in codes of Jaccard < 0.5, %d times in the others",
			seed, chain, strings.Join(matched, ", "), hk/L, lost, other)
	}
	return fdr, u, z
}

// realisedFDR returns the realised false discovery rate of the FDR gene
// sets of the run's programs (enrich's defaults, FDR 0.05), each set judged
// against the planted program it overlaps most, pooled over the programs.
// It logs each set's wrong genes: those of another planted program (merged
// programs) and those of none (background taken for a program), and the
// baseline rate of each of the latter (the simulation's μ_d).
func realisedFDR(t *testing.T, seed uint64, run string, baseline []float64, planted []codematch.Set) float64 {
	t.Helper()
	o := enrich.DefaultOptions()
	o.Run = run
	rep, err := enrich.Analyse(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var called, wrong int
	var sets []string
	background := map[int]int{} // gene of no program: the sets holding it
	for _, prog := range rep.Levels[0].Programs {
		if prog.Status != enrich.StatusProgram {
			continue
		}
		s := codematch.NewSet(len(baseline))
		for _, g := range prog.FDRGenes {
			s.Add(g)
		}
		best, bestJ := 0, -1.0
		for l := range planted {
			if j := codematch.Jaccard(s, planted[l]); j > bestJ {
				best, bestJ = l, j
			}
		}
		other, none := 0, 0
		for _, g := range prog.FDRGenes {
			if planted[best].Has(g) {
				continue
			}
			in := false
			for _, q := range planted {
				in = in || q.Has(g)
			}
			if in {
				other++
			} else {
				none++
				background[g]++
			}
		}
		called += len(prog.FDRGenes)
		wrong += other + none
		sets = append(sets, fmt.Sprintf("%s→%d: %d+%d of %d (Jaccard %.2f, expected FDP %.3f)",
			prog.Name(), best+1, other, none, len(prog.FDRGenes), bestJ, prog.FDRRate))
	}
	if called == 0 {
		t.Fatalf("seed %d: no gene at FDR %v", seed, o.FDR)
	}
	var bg []string
	for _, g := range slices.Sorted(maps.Keys(background)) {
		bg = append(bg, fmt.Sprintf("%d (μ %.3f, %d sets)", g, baseline[g], background[g]))
	}
	fdr := float64(wrong) / float64(called)
	t.Logf("seed %d: realised FDR %d/%d = %.4f; wrong genes of another program + of none: %s; genes of none: %s",
		seed, wrong, called, fdr, strings.Join(sets, ", "), strings.Join(bg, ", "))
	return fdr
}
