package export_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"scpipe/enrich"
	"scpipe/export"
	"scpipe/ingest"
	"scpipe/internal/anndata"
	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
	"scpipe/pipeline"
	"scpipe/shard"
	"scpipe/simulate"

	"scpipe/internal/testkit"
)

// testRoot holds the planted run; TestMain removes it.
var testRoot string

func TestMain(m *testing.M) {
	code := m.Run()
	if testRoot != "" {
		os.RemoveAll(testRoot)
	}
	os.Exit(code)
}

// plantedRun fits planted data once (L = 2..3, entries held out so that an
// L is recommended) and returns the run; tests copy it before changing it.
var plantedRun = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "export-test-*")
	if err != nil {
		return "", err
	}
	testRoot = dir
	p := simulate.Params{Cells: 120, Genes: 90, L: 3, CodeDensity: 0.15, UsageDensity: 0.3, FlipOn: 0.01, FlipOff: 0.05, Seed: 5}
	truth, err := simulate.New(context.Background(), p)
	if err != nil {
		return "", err
	}
	sim := filepath.Join(dir, "sim")
	if err := simulate.WriteShards(context.Background(), sim, truth, shard.CreateOptions{}); err != nil {
		return "", err
	}
	cfg := pipeline.DefaultFitConfig()
	cfg.Shards, cfg.Output = filepath.Join(sim, simulate.ShardsDir), filepath.Join(dir, "run")
	if err := cfg.L.UnmarshalText([]byte("2..3")); err != nil {
		return "", err
	}
	cfg.Chains, cfg.BurnIn, cfg.Samples, cfg.StartSweeps = 1, 10, 10, 3
	cfg.Holdout, cfg.Threads = 0.02, 2
	if _, err := pipeline.Fit(context.Background(), cfg, pipeline.FitOptions{}); err != nil {
		return "", err
	}
	return cfg.Output, nil
})

func run(t *testing.T) string {
	t.Helper()
	r, err := plantedRun()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// setScores rewrites codes.parquet at path with scores: with scored,
// score_k = 1 − mean (so that the ranking by score reverses the one by
// mean, ties broken by code); without, none, as in a run fitted before
// fits wrote them.
func setScores(t *testing.T, path string, scored bool) {
	t.Helper()
	c, err := rundir.ReadCodes(path)
	if err != nil {
		t.Fatal(err)
	}
	c.Score = nil
	if scored {
		c.Score = make([]float64, len(c.Mean))
		for i, m := range c.Mean {
			c.Score[i] = 1 - m + float64(i%c.L)/1000
		}
	}
	if err := rundir.WriteCodes(path, c); err != nil {
		t.Fatal(err)
	}
}

// copyRun copies a run directory (files only, two levels deep).
func copyRun(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "run")
	testkit.CopyDir(t, src, dst)
	// shards.json names the shards relative to the original run's parent.
	id, err := rundir.ReadShardsIdentity(filepath.Join(dst, rundir.ShardsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(id.Path) {
		id.Path, _ = filepath.Abs(id.Path)
	}
	if err := rundir.WriteShardsIdentity(filepath.Join(dst, rundir.ShardsFile), id); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestChooseL(t *testing.T) {
	t.Parallel()
	r := run(t)
	rows, err := rundir.ReadSummary(filepath.Join(r, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	rec := 0
	for _, row := range rows {
		if row.Recommended {
			rec = row.L
		}
	}
	if rec == 0 {
		t.Fatal("the planted run recommends no L")
	}
	for _, tc := range []struct {
		want, L int
		err     string
	}{{0, rec, ""}, {2, 2, ""}, {3, 3, ""}, {7, 0, "no finished fit of L = 7"}} {
		L, gotRec, err := export.ChooseL(r, tc.want, 1)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ChooseL(--L %d): %v, want %q", tc.want, err, tc.err)
			}
			continue
		}
		if err != nil || L != tc.L || gotRec != rec {
			t.Errorf("ChooseL(--L %d) = %d, %d, %v; want %d, %d", tc.want, L, gotRec, err, tc.L, rec)
		}
	}
	// Without summary.tsv nothing is recommended: --L is needed where the
	// run has several L.
	c := copyRun(t, r)
	os.Remove(filepath.Join(c, rundir.SummaryFile))
	if _, _, err := export.ChooseL(c, 0, 1); err == nil || !strings.Contains(err.Error(), "--L") {
		t.Errorf("ChooseL without summary: %v", err)
	}
}

// TestProgramsRankedByScoreOrMean checks the top genes follow score_k where
// codes.parquet has it, and the posterior mean where it does not.
func TestProgramsRankedByScoreOrMean(t *testing.T) {
	t.Parallel()
	for _, scored := range []bool{false, true} {
		t.Run(fmt.Sprint("scored=", scored), func(t *testing.T) {
			t.Parallel()
			r := copyRun(t, run(t))
			setScores(t, filepath.Join(rundir.FitDir(r, 3, 1), rundir.CodesFile), scored)
			f, err := export.ReadFit(r, 3, 1)
			if err != nil {
				t.Fatal(err)
			}
			if (f.Score != nil) != scored || f.RankedBy() != map[bool]string{false: "posterior_mean", true: "score"}[scored] {
				t.Fatalf("scores read %v, ranked by %s", f.Score != nil, f.RankedBy())
			}
			rank := f.Codes.Mean
			if scored {
				rank = f.Score
			}
			for _, p := range f.Programs(0.5, 10) {
				k := p.Code - 1
				if len(p.Top) != 10 {
					t.Fatalf("code %d: %d top genes", p.Code, len(p.Top))
				}
				// In enrich's order: by rank value, then posterior mean
				// (then symbol); housekeeping genes ranked with the others.
				for i := 1; i < len(p.Top); i++ {
					a, b := p.Top[i-1], p.Top[i]
					if rank[a*3+k] < rank[b*3+k] || rank[a*3+k] == rank[b*3+k] && f.Codes.Mean[a*3+k] < f.Codes.Mean[b*3+k] {
						t.Errorf("code %d: top genes out of order at %d", p.Code, i)
					}
				}
				// Every gene left out ranks no higher than the last kept one.
				last := rank[p.Top[len(p.Top)-1]*3+k]
				for g := range f.Codes.GeneIDs {
					if !slices.Contains(p.Top, g) && rank[g*3+k] > last {
						t.Errorf("code %d: gene %d ranks %g above the top list's last %g", p.Code, g, rank[g*3+k], last)
					}
				}
				for _, g := range p.MAP {
					if f.Codes.Mean[g*3+k] < 0.5 {
						t.Errorf("code %d: MAP gene %d has mean %g", p.Code, g, f.Codes.Mean[g*3+k])
					}
				}
			}
		})
	}
}

// TestCNMFTables checks the cNMF layout and that its numbers are the
// tables' (score where present, else the posterior mean).
func TestCNMFTables(t *testing.T) {
	t.Parallel()
	for _, scored := range []bool{false, true} {
		t.Run(fmt.Sprint("scored=", scored), func(t *testing.T) {
			t.Parallel()
			r := copyRun(t, run(t))
			setScores(t, filepath.Join(rundir.FitDir(r, 3, 1), rundir.CodesFile), scored)
			dir := filepath.Join(t.TempDir(), "cnmf")
			o := export.DefaultOptions()
			// Chain 1, whose tables setScores changed (the default is
			// the L's consensus, where the run has one).
			o.Run, o.TopN, o.Chain = r, 5, 1
			rep, err := export.WriteCNMF(context.Background(), o, dir)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rep.Ls, []int{2, 3}) {
				t.Errorf("Ls %v", rep.Ls)
			}
			if _, err := export.WriteCNMF(context.Background(), o, dir); err == nil || !strings.Contains(err.Error(), "--force") {
				t.Errorf("a second write: %v", err)
			}
			f, err := export.ReadFit(r, 3, 1)
			if err != nil {
				t.Fatal(err)
			}
			usages, score, spectra, top := export.CNMFFiles(3)
			sub := filepath.Join(dir, export.CNMFName)
			head, rows := testkit.ReadTSV(t, filepath.Join(sub, usages))
			if !slices.Equal(head, []string{"", "1", "2", "3"}) || len(rows) != len(f.Cells.Barcodes) {
				t.Fatalf("usages header %q, %d rows", head, len(rows))
			}
			for n, row := range rows {
				if row[0] != f.Cells.Barcodes[n] {
					t.Fatalf("usages row %d is %s", n, row[0])
				}
				for k := range 3 {
					if v, _ := strconv.ParseFloat(row[1+k], 64); v != f.Cells.Mean[n*3+k] {
						t.Fatalf("usage of cell %d code %d: %s, want %g", n, k+1, row[1+k], f.Cells.Mean[n*3+k])
					}
				}
			}
			want := f.Codes.Mean
			if scored {
				want = f.Score
			}
			for _, tc := range []struct {
				file string
				m    []float64
			}{{score, want}, {spectra, f.Codes.Mean}} {
				head, rows := testkit.ReadTSV(t, filepath.Join(sub, tc.file))
				if !slices.Equal(head[1:], f.Genes.Symbols) || len(rows) != 3 {
					t.Fatalf("%s: header of %d genes, %d rows", tc.file, len(head)-1, len(rows))
				}
				for k, row := range rows {
					for g := range f.Codes.GeneIDs {
						if v, _ := strconv.ParseFloat(row[1+g], 64); v != tc.m[g*3+k] {
							t.Fatalf("%s: program %d gene %d: %s, want %g", tc.file, k+1, g, row[1+g], tc.m[g*3+k])
						}
					}
				}
			}
			head, rows = testkit.ReadTSV(t, filepath.Join(sub, top))
			ps := f.Programs(0.5, 5)
			if !slices.Equal(head, []string{"", "1", "2", "3"}) || len(rows) != 5 {
				t.Fatalf("top genes header %q, %d rows", head, len(rows))
			}
			for r, row := range rows {
				for k, p := range ps {
					if row[1+k] != f.Genes.Symbols[p.Top[r]] {
						t.Errorf("top gene %d of program %d: %s, want %s", r, k+1, row[1+k], f.Genes.Symbols[p.Top[r]])
					}
				}
			}
		})
	}
}

// TestExportIngestsBack exports the recommended L and ingests the file with
// scpipe's own reader: X is the run's binary matrix, cell for cell.
func TestExportIngestsBack(t *testing.T) {
	t.Parallel()
	r := copyRun(t, run(t))
	out := filepath.Join(t.TempDir(), "run.h5ad")
	o := export.DefaultOptions()
	o.Run, o.Out = r, out
	rep, err := export.Export(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.L != rep.Recommended || rep.RankedBy != "score" { // every fit writes scores
		t.Errorf("exported L %d (recommended %d), ranked by %s", rep.L, rep.Recommended, rep.RankedBy)
	}
	if _, err := export.Export(context.Background(), o); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("a second export: %v", err)
	}
	back := filepath.Join(t.TempDir(), "back")
	if _, err := ingest.Run(context.Background(), ingest.Options{Input: out, Output: back}); err != nil {
		t.Fatal(err)
	}
	id, err := rundir.ReadShardsIdentity(filepath.Join(r, rundir.ShardsFile))
	if err != nil {
		t.Fatal(err)
	}
	a, err := shard.Open(id.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := shard.Open(back)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	f, err := export.ReadFit(r, rep.L, 1)
	if err != nil {
		t.Fatal(err)
	}
	ma, mb := a.Manifest(), b.Manifest()
	bcs, err := b.Barcodes()
	if err != nil {
		t.Fatal(err)
	}
	if mb.Cells != ma.Cells || mb.Genes != ma.Genes || !slices.Equal(bcs, f.Cells.Barcodes) {
		t.Fatalf("ingested %d × %d (run %d × %d)", mb.Cells, mb.Genes, ma.Cells, ma.Genes)
	}
	for i := range ma.Cells {
		if !slices.Equal(a.X().Segment(i, 0), b.X().Segment(i, 0)) {
			t.Fatalf("cell %d differs", i)
		}
	}
	ones := 0
	for i := range ma.Cells {
		for _, w := range a.X().Segment(i, 0) {
			ones += bits.OnesCount64(w)
		}
	}
	if int64(ones) != ma.Ones {
		t.Errorf("%d ones, manifest says %d", ones, ma.Ones)
	}
}

// TestDamagedShardsRefused: X is the shards' bits, so a changed byte in
// any of their files is an error naming the file, not a wrong matrix in
// the AnnData file, and nothing is written.
func TestDamagedShardsRefused(t *testing.T) {
	t.Parallel()
	r := copyRun(t, run(t))
	id, err := rundir.ReadShardsIdentity(filepath.Join(r, rundir.ShardsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"x.000000.bin", "xt.000000.000000.bin", "barcodes.tsv"} {
		t.Run(name, func(t *testing.T) {
			damaged := testkit.Damaged(t, id.Path, name)
			o := export.DefaultOptions()
			o.Run, o.Out, o.Shards = r, filepath.Join(t.TempDir(), "run.h5ad"), damaged
			if _, err := export.Export(context.Background(), o); err == nil || !strings.Contains(err.Error(), filepath.Join(damaged, name)+": crc32c") {
				t.Errorf("export from shards with a changed byte in %s: %v", name, err)
			}
			if _, err := os.Stat(o.Out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s written (%v)", o.Out, err)
			}
		})
	}
}

// userFile writes an AnnData file as a user might hold it for the run's
// cells: cells in reverse order, two genes the run does not have, an
// obsm X_umap.
func userFile(t *testing.T, r, path string, cells []string) {
	t.Helper()
	f, err := export.ReadFit(r, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	genes := append(slices.Clone(f.Codes.GeneIDs), "EXTRA1", "EXTRA2")
	w, err := anndata.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	indptr := make([]int64, len(cells)+1)
	w.CSR("/X", len(cells), len(genes), indptr, nil, nil)
	w.Dataframe("/obs", cells)
	w.Dataframe("/var", genes)
	w.Dict("/obsm")
	w.Matrix("/obsm/X_umap", len(cells), 2, make([]float64, 2*len(cells)))
	w.Dict("/uns")
	w.String("/uns/mine", "kept")
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestExportInto(t *testing.T) {
	t.Parallel()
	r := copyRun(t, run(t))
	f, err := export.ReadFit(r, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	user := filepath.Join(dir, "user.h5ad")
	reversed := slices.Clone(f.Cells.Barcodes)
	slices.Reverse(reversed)
	userFile(t, r, user, reversed)
	before, err := os.ReadFile(user)
	if err != nil {
		t.Fatal(err)
	}
	o := export.DefaultOptions()
	o.Run, o.Into, o.L = r, user, 2
	for i, out := range []string{filepath.Join(dir, "a.h5ad"), filepath.Join(dir, "b.h5ad")} {
		o.Out = out
		if _, err := export.Export(context.Background(), o); err != nil {
			t.Fatalf("export %d: %v", i, err)
		}
		obs, vars, _, err := ingest.AnnDataNames(out, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(obs, reversed) || len(vars) != len(f.Codes.GeneIDs)+2 {
			t.Errorf("export %d: %d cells, %d genes", i, len(obs), len(vars))
		}
		o.Into = out // the second export goes into the first's output, replacing its keys
	}
	if after, _ := os.ReadFile(user); !slices.Equal(before, after) {
		t.Error("the user's file was modified")
	}
	for _, tc := range []struct {
		name, into, out, want string
	}{
		{"the output is the input", user, user, "would destroy the input"},
		{"other cells", "", filepath.Join(dir, "c.h5ad"), "cells do not match"},
	} {
		o := o
		o.Into, o.Out, o.Force = tc.into, tc.out, true
		if tc.into == "" {
			o.Into = filepath.Join(dir, "other.h5ad")
			userFile(t, r, o.Into, reversed[1:])
		}
		if _, err := export.Export(context.Background(), o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestBestTerms builds a library whose sets are the programs of the fit
// (by symbol) and decoys, enriches the run with it, and checks that the
// terms kept for each program start with its own set, and that export
// takes them from this output but not from another run's.
func TestBestTerms(t *testing.T) {
	t.Parallel()
	r := copyRun(t, run(t))
	f, err := export.ReadFit(r, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib.gmt")
	var gmt strings.Builder
	var want = map[string]string{}
	for _, p := range f.Programs(0.5, 10) {
		if len(p.MAP) < 3 {
			continue
		}
		name := fmt.Sprintf("set_of_code%d", p.Code)
		want[export.ProgramName(3, p.Code)] = name
		gmt.WriteString(name + "\tplanted\t" + strings.Join(enrich.Symbols(f.Genes, p.MAP), "\t") + "\n")
	}
	gmt.WriteString("decoy\tnone\t" + strings.Join(f.Genes.Names[:5], "\t") + "\n")
	if err := os.WriteFile(lib, []byte(gmt.String()), 0o666); err != nil {
		t.Fatal(err)
	}
	eo := enrich.DefaultOptions()
	eo.Run, eo.Out, eo.Libraries, eo.Ls = r, filepath.Join(dir, "enrich"), []string{lib}, []int{3}
	eo.Hierarchy = enrich.HierarchyOverlap
	eo.Top = 20 // fewer than the fit's genes, so that the top lists are tested too
	if _, err := enrich.Run(context.Background(), eo); err != nil {
		t.Fatal(err)
	}
	terms, err := export.BestTerms(eo.Out, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("the fit has no program of 3 genes or more")
	}
	for prog, set := range want {
		ts := terms[prog]
		if len(ts) == 0 || ts[0].Term.Term != set || ts[0].Library != "lib" || len(ts) > 8 {
			t.Errorf("%s: terms %+v, want %s first, at most 2 per query (all, unique, top, fdr)", prog, ts, set)
		}
	}
	// The output of another run's enrich (here: a program of genes this
	// run has not) would label the programs with other programs' terms.
	other := filepath.Join(dir, "other")
	if err := os.CopyFS(other, os.DirFS(eo.Out)); err != nil {
		t.Fatal(err)
	}
	genes := filepath.Join(other, "genes", export.ProgramName(3, 1)+".txt")
	if err := os.WriteFile(genes, []byte("NOT_A_GENE\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, enrich, want string }{
		{"its own", eo.Out, ""},
		{"another run's", other, "L03_code1 holds gene NOT_A_GENE, which " + r + " has not"},
	} {
		o := export.DefaultOptions()
		o.Run, o.Out, o.L, o.Enrich, o.NoX = r, filepath.Join(t.TempDir(), "run.h5ad"), 3, tc.enrich, true
		_, err := export.Export(context.Background(), o)
		if (tc.want == "" && err != nil) || (tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want))) {
			t.Errorf("export with %s enrich output: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestOutputsNeverInsideInputs: with --force, an output that is the run,
// holds it, or lies inside it (or inside the shards) is refused before
// anything is written, and the run keeps every fit.
func TestOutputsNeverInsideInputs(t *testing.T) {
	t.Parallel()
	r := copyRun(t, run(t))
	o := export.DefaultOptions()
	o.Run, o.Force = r, true
	before, err := rundir.Fits(r)
	if err != nil {
		t.Fatal(err)
	}
	// The run's shards, as shards.json names them: X is read from them.
	id, err := rundir.ReadShardsIdentity(filepath.Join(r, rundir.ShardsFile))
	if err != nil {
		t.Fatal(err)
	}
	shards := id.Path
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"--cnmf the run", func() error { _, err := export.WriteCNMF(context.Background(), o, r); return err }},
		{"--cnmf the run's parent", func() error { _, err := export.WriteCNMF(context.Background(), o, filepath.Dir(r)); return err }},
		{"-o inside a fit", func() error {
			oo := o
			oo.Out = filepath.Join(rundir.FitDir(r, 3, 1), rundir.CodesFile)
			_, err := export.Export(context.Background(), oo)
			return err
		}},
		{"-o a file of the shards", func() error {
			oo := o
			oo.Out = filepath.Join(shards, "x.000000.bin")
			_, err := export.Export(context.Background(), oo)
			return err
		}},
		{"--cnmf the shards", func() error { _, err := export.WriteCNMF(context.Background(), o, shards); return err }},
	} {
		if err := c.call(); err == nil || !strings.Contains(err.Error(), "would destroy the input") {
			t.Errorf("%s: %v, want a refusal", c.name, err)
		}
	}
	after, err := rundir.Fits(r)
	if err != nil || len(after) != len(before) {
		t.Fatalf("the run's fits: %d before, %d after (%v)", len(before), len(after), err)
	}
	if _, err := rundir.ReadCodes(filepath.Join(rundir.FitDir(r, 3, 1), rundir.CodesFile)); err != nil {
		t.Errorf("a fit's table after the refusals: %v", err)
	}
	if _, err := shard.OpenVerified(context.Background(), shards, 1); err != nil {
		t.Errorf("the shards after the refusals: %v", err)
	}
}

// TestRefusedOptions: settings out of their range are errors naming the
// setting, before anything is read or written.
func TestRefusedOptions(t *testing.T) {
	t.Parallel()
	r := copyRun(t, run(t))
	for _, tc := range []struct {
		name string
		edit func(o *export.Options)
		want string
	}{
		{"negative top", func(o *export.Options) { o.TopN = -1 }, "top genes -1"},
		{"negative chain", func(o *export.Options) { o.Chain = -2 }, "chain -2"},
		{"negative L", func(o *export.Options) { o.L = -3 }, "L = -3"},
		{"threshold above 1", func(o *export.Options) { o.Threshold = 2 }, "threshold 2"},
		{"threshold NaN", func(o *export.Options) { o.Threshold = math.NaN() }, "threshold NaN"},
		{"negative top terms", func(o *export.Options) { o.TopTerms = -1 }, "top terms -1"},
	} {
		o := export.DefaultOptions()
		o.Run, o.Out = r, filepath.Join(t.TempDir(), "run.h5ad")
		tc.edit(&o)
		if _, err := export.Export(context.Background(), o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: export: %v, want %q", tc.name, err, tc.want)
		}
		cnmf := filepath.Join(t.TempDir(), "cnmf")
		if _, err := export.WriteCNMF(context.Background(), o, cnmf); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: cNMF tables: %v, want %q", tc.name, err, tc.want)
		}
		for _, p := range []string{o.Out, cnmf} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: %s written (%v)", tc.name, p, err)
			}
		}
	}
}

// TestOutputsCommitted checks that both outputs are written as every
// output is (package outlock): refused while another writer holds the
// output's lock, and what a killed writer left beside it removed.
func TestOutputsCommitted(t *testing.T) {
	t.Parallel()
	r := copyRun(t, run(t))
	dir := t.TempDir()
	out, cnmf := filepath.Join(dir, "run.h5ad"), filepath.Join(dir, "cnmf")
	o := export.DefaultOptions()
	o.Run, o.Out = r, out
	for _, p := range []string{out, cnmf} {
		lk, err := outlock.Acquire(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := export.Export(context.Background(), o); p == out && !errors.Is(err, outlock.ErrLocked) {
			t.Errorf("export into a locked %s: %v", p, err)
		}
		if _, err := export.WriteCNMF(context.Background(), o, cnmf); p == cnmf && !errors.Is(err, outlock.ErrLocked) {
			t.Errorf("cNMF tables into a locked %s: %v", p, err)
		}
		lk.Release()
		os.RemoveAll(out)
		os.RemoveAll(cnmf)
	}
	f, err := outlock.TempFile(out, "tmp") // what a writer killed mid-write leaves
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	d, err := outlock.TempDir(cnmf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := export.Export(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := export.WriteCNMF(context.Background(), o, cnmf); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{f.Name(), d} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the killed writer's %s is still there (%v)", p, err)
		}
	}
}

// TestIntoAfterPathSwap: export RUN -o d/user.h5ad --into X/user.h5ad
// --force, with d swapped for a link to X after the output was checked
// (mv d d.old; ln -s X d, issue 44), once replaced the user's own file,
// which export promises never to modify. Not parallel: the hook is
// outlock's.
func TestIntoAfterPathSwap(t *testing.T) {
	r := copyRun(t, run(t))
	f, err := export.ReadFit(r, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"X", "d"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	user, out := filepath.Join(dir, "X", "user.h5ad"), filepath.Join(dir, "d", "user.h5ad")
	userFile(t, r, user, f.Cells.Barcodes)
	before, err := os.ReadFile(user)
	if err != nil {
		t.Fatal(err)
	}
	outlock.AfterCheck = func(output string) {
		if output != out {
			return
		}
		if err := os.Rename(filepath.Join(dir, "d"), filepath.Join(dir, "d.old")); err != nil {
			t.Error(err)
		}
		if err := os.Symlink("X", filepath.Join(dir, "d")); err != nil {
			t.Error(err)
		}
	}
	defer func() { outlock.AfterCheck = nil }()
	o := export.DefaultOptions()
	o.Run, o.Into, o.Out, o.L, o.Force = r, user, out, 2, true
	if _, err := export.Export(context.Background(), o); err == nil || !strings.Contains(err.Error(), "would destroy the input") {
		t.Errorf("export after the swap: %v, want a refusal naming the input", err)
	}
	if after, _ := os.ReadFile(user); !slices.Equal(before, after) {
		t.Error("the user's file was replaced")
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "X")); len(left) != 1 {
		t.Errorf("the user's folder holds %d entries, want only the user's file", len(left))
	}
}
