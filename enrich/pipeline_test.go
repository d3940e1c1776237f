package enrich_test

// These tests run the pipeline before enrich: they build runs with package
// pipeline, which package enrich itself never imports (it reads runs only
// through rundir).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"scpipe/enrich"
	"scpipe/ingest"
	"scpipe/internal/stats/codematch"
	"scpipe/pipeline"
	"scpipe/simulate"

	"scpipe/internal/testkit"
	"scpipe/simulate/simtest"
)

// fit fits shards with a short configuration into dir/run.
func fit(t *testing.T, shards, dir, L string, chains, sweeps int) string {
	t.Helper()
	cfg := pipeline.DefaultFitConfig()
	cfg.Shards, cfg.Output = shards, filepath.Join(dir, "run")
	if err := cfg.L.UnmarshalText([]byte(L)); err != nil {
		t.Fatal(err)
	}
	cfg.Chains, cfg.BurnIn, cfg.Samples = chains, sweeps, sweeps
	cfg.Holdout, cfg.Threads = 0, 2
	cfg.StartSweeps = min(cfg.StartSweeps, sweeps)
	if _, err := pipeline.Fit(context.Background(), cfg, pipeline.FitOptions{}); err != nil {
		t.Fatal(err)
	}
	return cfg.Output
}

// TestPlantedProgramsEnrich plants programs, fits them, and tests every
// program of the fit against two libraries.
//
// The first holds the planted programs and decoys of the same sizes drawn
// from the genes no planted program holds: each planted program must be
// the top term of the program that recovered it with adjusted p < 1e-10,
// and no decoy may reach adjusted p < 0.05 for any program. Decoys drawn
// from all genes would be null sets, which Benjamini–Hochberg lets through
// at 0.05 in about one family in ten when the family also holds a true
// term, so that no test could promise none of them passes; the disjoint
// decoys instead check that the noise a fit leaves in its programs makes
// nothing significant.
//
// The second library holds such null sets drawn from all genes, and checks
// that their p-values are valid: at most 5% of them (plus three standard
// deviations) fall below 0.05.
func TestPlantedProgramsEnrich(t *testing.T) {
	p := simulate.Params{Cells: 600, Genes: 400, L: 4, CodeDensity: 0.08, UsageDensity: 0.3, FlipOn: 0.01, FlipOff: 0.05, Seed: 11}
	shards, truth := simtest.Shards(t, p)
	dir := t.TempDir()
	run := fit(t, shards, dir, "4", 2, 30)

	rng := rand.New(rand.NewPCG(5, 8))
	planted := make([]codematch.Set, p.L)
	inSome := codematch.NewSet(p.Genes)
	for l := range p.L {
		planted[l] = codematch.NewSet(p.Genes)
		for _, g := range truth.ProgramGenes(l) {
			planted[l].Add(g)
			inSome.Add(g)
		}
	}
	var outside []int
	for g := range p.Genes {
		if !inSome.Has(g) {
			outside = append(outside, g)
		}
	}
	var plantedGMT, nullGMT strings.Builder
	const decoys, nulls = 5, 40
	for l := range p.L {
		size := planted[l].Len()
		writeSet(&plantedGMT, fmt.Sprintf("planted_%d", l+1), truth.ProgramGenes(l))
		for d := range decoys {
			perm := rng.Perm(len(outside))[:size]
			genes := make([]int, size)
			for i, j := range perm {
				genes[i] = outside[j]
			}
			writeSet(&plantedGMT, fmt.Sprintf("decoy_%d_%d", l+1, d+1), genes)
		}
	}
	for d := range nulls {
		writeSet(&nullGMT, fmt.Sprintf("null_%d", d+1), rng.Perm(p.Genes)[:planted[d%p.L].Len()])
	}
	libs := []string{filepath.Join(dir, "planted.gmt"), filepath.Join(dir, "null.gmt")}
	for i, text := range []string{plantedGMT.String(), nullGMT.String()} {
		if err := os.WriteFile(libs[i], []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := enrich.DefaultOptions()
	o.Run, o.Out, o.Libraries = run, filepath.Join(dir, "enrich"), libs
	rep, err := enrich.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	lv := rep.Levels[0]
	for l := range p.L {
		// The program that recovered planted program l: largest Jaccard.
		best, bestJ := -1, 0.0
		for i, prog := range lv.Programs {
			s := codematch.NewSet(p.Genes)
			for _, g := range prog.Genes {
				s.Add(g)
			}
			if j := codematch.Jaccard(s, planted[l]); j > bestJ {
				best, bestJ = i, j
			}
		}
		if best < 0 || bestJ < 0.8 {
			t.Errorf("planted_%d: no program recovers it (best Jaccard %.2f)", l+1, bestJ)
			continue
		}
		name := lv.Programs[best].Name()
		for _, pt := range rep.Enrichment[0].Tests {
			if pt.Program.Name() != name || pt.Query != "all" {
				continue
			}
			if len(pt.Results) == 0 || pt.Results[0].Term != fmt.Sprintf("planted_%d", l+1) || pt.Results[0].Q() >= 1e-10 {
				top := "none"
				if len(pt.Results) > 0 {
					top = fmt.Sprintf("%s (q = %.3g)", pt.Results[0].Term, pt.Results[0].Q())
				}
				t.Errorf("planted_%d: the top term of %s (Jaccard %.2f) is %s", l+1, name, bestJ, top)
			}
		}
	}
	for _, pt := range rep.Enrichment[0].Tests {
		for _, r := range pt.Results {
			if strings.HasPrefix(r.Term, "decoy") && r.Q() < 0.05 {
				t.Errorf("%s (%s genes): decoy %s has adjusted p %.3g (overlap %d/%d)", pt.Program.Name(), pt.Query, r.Term, r.Q(), r.Overlap, r.TermSize)
			}
		}
	}
	// Null sets: a set with no overlap is not reported and has p = 1.
	tests, below := 0, 0
	for _, pt := range rep.Enrichment[1].Tests {
		tests += nulls
		for _, r := range pt.Results {
			if r.P() < 0.05 {
				below++
			}
		}
	}
	if limit := 0.05*float64(tests) + 3*math.Sqrt(float64(tests)*0.05*0.95); tests == 0 || float64(below) > limit {
		t.Errorf("null sets: %d of %d tests have p < 0.05, more than %.1f", below, tests, limit)
	}
	t.Logf("null sets: %d of %d tests have p < 0.05", below, tests)
}

// writeSet writes a GMT line of simulated genes.
func writeSet(w *strings.Builder, name string, genes []int) {
	w.WriteString(name + "\t")
	for _, g := range genes {
		w.WriteString("\t" + simulate.GeneName(g))
	}
	w.WriteString("\n")
}

// sharedData returns ../shared/data, skipping the test where it is absent
// (never in CI, which checks the project out beside it).
func sharedData(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared test data not found at %s (it lives beside the project as ../shared): %v", dir, err)
	}
	return dir
}

// TestRealDataEnrich runs ingest, a short fit and enrich on real data
// against the shared libraries, and checks that every output is well
// formed. The biology of such short fits is not asserted here.
func TestRealDataEnrich(t *testing.T) {
	data := sharedData(t)
	libs := []string{
		filepath.Join(data, "genesets", "GO_Biological_Process_2022_human.gmt.gz"),
		filepath.Join(data, "genesets", "celltype-markers.gmt"),
	}
	for _, tc := range []struct {
		name, input, genome, organism string
	}{
		{"pbmc3k-600", filepath.Join(data, "pbmc3k-600"), "", "human"},
		{"brain1m-10k-subset", filepath.Join(data, "brain1m-10k-subset", "derived_v2_filtered_gene_bc_matrices_h5.h5"), "mm10", "mouse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := ingest.DefaultOptions()
			in.Input, in.Output, in.Genome = tc.input, filepath.Join(dir, "shards"), tc.genome
			if _, err := ingest.Run(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			run := fit(t, in.Output, dir, "2..4", 1, 8)
			o := enrich.DefaultOptions()
			o.Run, o.Out, o.Libraries = run, filepath.Join(dir, "enrich"), libs
			rep, err := enrich.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Organism != tc.organism {
				t.Errorf("organism %q, want %q from the symbols", rep.Organism, tc.organism)
			}
			checkOutputs(t, o.Out, rep)
			log, err := os.ReadFile(filepath.Join(o.Out, enrich.LogFile))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(log), "case-insensitively") || !strings.Contains(string(log), "organism\t"+tc.organism) {
				t.Errorf("%s does not say how symbols were matched:\n%s", enrich.LogFile, log)
			}
		})
	}
}

// checkOutputs reads back every output file and checks its shape and the
// invariants of its numbers.
func checkOutputs(t *testing.T, out string, rep *enrich.Report) {
	t.Helper()
	index := readTSV(t, filepath.Join(out, enrich.IndexFile))
	codes := 0
	for _, lv := range rep.Levels {
		codes += lv.L
	}
	if len(index) != codes {
		t.Errorf("index: %d rows, want one per code (%d)", len(index), codes)
	}
	programs := map[string]bool{}
	for _, row := range index {
		if row["status"] != "program" {
			continue
		}
		programs[row["program"]] = true
		for _, col := range []string{"genes_file", "unique_file", "members_file"} {
			if _, err := os.Stat(filepath.Join(out, row[col])); err != nil {
				t.Errorf("index %s: %v", col, err)
			}
		}
		members := readTSV(t, filepath.Join(out, row["members_file"]))
		if strconv.Itoa(len(members)) != row["n_genes"] {
			t.Errorf("%s: %d members, index says %s", row["program"], len(members), row["n_genes"])
		}
	}
	if len(programs) == 0 {
		t.Fatal("no code of the run is a program")
	}
	gmt, err := enrich.ReadGMTFile(filepath.Join(out, enrich.GMTFile))
	if err != nil || len(gmt.Sets) != len(programs) {
		t.Errorf("%s: %v, %d sets for %d programs", enrich.GMTFile, err, len(gmt.Sets), len(programs))
	}
	for _, lib := range rep.Enrichment {
		rows := readTSV(t, filepath.Join(out, lib.File))
		if len(rows) == 0 {
			t.Errorf("%s: no result", lib.File)
		}
		prevKey, prevQ := "", 0.0
		for _, r := range rows {
			var k, K int
			if _, err := fmt.Sscanf(r["Overlap"], "%d/%d", &k, &K); err != nil || k < 1 || k > K {
				t.Fatalf("%s: Overlap %q", lib.File, r["Overlap"])
			}
			p, q := parse(t, r["P-value"]), parse(t, r["Adjusted P-value"])
			if !(p >= 0 && p <= 1 && q >= p && q <= 1) || parse(t, r["Odds Ratio"]) <= 0 {
				t.Fatalf("%s: p %v, q %v, odds ratio %s", lib.File, p, q, r["Odds Ratio"])
			}
			if n := len(strings.Split(r["Genes"], ";")); n != k || !programs[r["Program"]] {
				t.Fatalf("%s: %d genes for overlap %d, program %s", lib.File, n, k, r["Program"])
			}
			if key := r["Program"] + r["Query"]; key == prevKey && q < prevQ {
				t.Fatalf("%s: %s not sorted by adjusted p", lib.File, key)
			} else {
				prevKey, prevQ = key, q
			}
		}
	}
	hier := readTSV(t, filepath.Join(out, enrich.HierarchyTSV))
	if len(hier) != len(programs) {
		t.Errorf("hierarchy: %d rows for %d programs", len(hier), len(programs))
	}
	var js struct {
		Nodes []struct{ Program string }
		Genes []struct{ Symbol string }
	}
	data, err := os.ReadFile(filepath.Join(out, enrich.HierarchyJSON))
	if err != nil || json.Unmarshal(data, &js) != nil || len(js.Nodes) != len(programs) || len(js.Genes) == 0 {
		t.Errorf("%s: %v, %d nodes, %d genes", enrich.HierarchyJSON, err, len(js.Nodes), len(js.Genes))
	}
}

// readTSV reads a TSV with a header into one map per row.
func readTSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	header, fields := testkit.ReadTSV(t, path)
	rows := make([]map[string]string, len(fields))
	for k, f := range fields {
		rows[k] = map[string]string{}
		for i, h := range header {
			rows[k][h] = f[i]
		}
	}
	return rows
}

func parse(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// TestPlantedFDRAndTop fits planted programs (30% of a program's entries
// dropped, 8% of the others switched on) with scpipe fit's defaults on ten
// data seeds and checks each program's two ranked outputs against the
// truth: the set at a false discovery rate of 5% holds at most 5% of genes
// no planted program of its match holds (pooled over the fit's programs:
// the realised FDR), on every seed; and the leading genes by score, as
// many as the planted program has, are at least 90% planted ones.
func TestPlantedFDRAndTop(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		p := simulate.Params{Cells: 300, Genes: 200, L: 3, CodeDensity: 0.12, UsageDensity: 0.3, FlipOn: 0.3, FlipOff: 0.08, Seed: seed}
		shards, truth := simtest.Shards(t, p)
		dir := t.TempDir()
		run := fit(t, shards, dir, "3", 1, 40)
		o := enrich.DefaultOptions()
		o.Run = run
		rep, err := enrich.Analyse(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		planted := make([]codematch.Set, p.L)
		for l := range planted {
			planted[l] = codematch.NewSet(p.Genes)
			for _, g := range truth.ProgramGenes(l) {
				planted[l].Add(g)
			}
		}
		var called, wrong int
		for _, prog := range rep.Levels[0].Programs {
			if prog.Status != enrich.StatusProgram {
				continue
			}
			s := codematch.NewSet(p.Genes)
			for _, g := range prog.FDRGenes {
				s.Add(g)
			}
			best, bestJ := 0, -1.0
			for l := range planted {
				if j := codematch.Jaccard(s, planted[l]); j > bestJ {
					best, bestJ = l, j
				}
			}
			for _, g := range prog.FDRGenes {
				called++
				if !planted[best].Has(g) {
					wrong++
				}
			}
			if prog.FDRRate > o.FDR {
				t.Errorf("seed %d %s: expected FDP %v above %v", seed, prog.Name(), prog.FDRRate, o.FDR)
			}
			n := planted[best].Len()
			hits := 0
			for _, r := range prog.Top[:min(n, len(prog.Top))] {
				if planted[best].Has(r.Gene) {
					hits++
				}
			}
			if float64(hits) < 0.9*float64(n) {
				t.Errorf("seed %d %s: %d of its top %d genes by score are planted_%d's", seed, prog.Name(), hits, n, best+1)
			}
		}
		if called == 0 || float64(wrong) > o.FDR*float64(called) {
			t.Errorf("seed %d: realised FDR %d/%d above %v", seed, wrong, called, o.FDR)
		}
		t.Logf("seed %d: realised FDR %d/%d", seed, wrong, called)
	}
}
