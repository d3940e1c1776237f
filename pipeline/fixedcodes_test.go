package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/internal/geneset"
	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
	"scpipe/pipeline/runsummary"
	"scpipe/shard"
	"scpipe/simulate"

	"scpipe/simulate/simtest"

	"scpipe/internal/rundir/rundirtest"

	"scpipe/internal/testkit"
)

// shardGeneNames returns the gene names of the shards in dir.
func shardGeneNames(t *testing.T, dir string) []string {
	t.Helper()
	s, err := shard.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, names := shardGenes(s.Manifest())
	return names
}

// truthGene reports whether planted program l switches gene g on.
func truthGene(tr *simulate.Truth, l, g int) bool { return tr.U[l][g/64]>>uint(g%64)&1 != 0 }

// truthCell reports whether cell n uses planted program l.
func truthCell(tr *simulate.Truth, l, n int) bool { return tr.Z[l][n/64]>>uint(n%64)&1 != 0 }

// writeTruthGMT writes planted programs 0 … k−1 as a GMT file, their
// symbols in lower case (matched case-insensitively) and each with a
// symbol the shards lack.
func writeTruthGMT(t *testing.T, path string, tr *simulate.Truth, names []string, k int) {
	t.Helper()
	var b strings.Builder
	for l := range k {
		b.WriteString("program" + string(rune('A'+l)) + "\tplanted")
		for g, name := range names {
			if truthGene(tr, l, g) {
				b.WriteString("\t" + strings.ToLower(name))
			}
		}
		b.WriteString("\tNOT_A_GENE\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFitFixedCodesGMT fixes three of four planted programs from a GMT
// file and checks every fit: its first three codes are the planted
// programs exactly (posterior means 0 or 1), their usage by cells is the
// planted usage, a free code recovers the fourth program, the run keeps
// its copy of the codes, a prepared run's --chain process writes what Fit
// wrote, and a resume reads the run's copy (not the source, changed since)
// and writes what the uninterrupted run wrote.
func TestFitFixedCodesGMT(t *testing.T) {
	shards, truth := simtest.Shards(t, smallPlanted)
	names := shardGeneNames(t, shards)
	dir := t.TempDir()
	gmt := filepath.Join(dir, "programs.gmt")
	writeTruthGMT(t, gmt, truth, names, 3)
	cfg := smallConfig(shards, filepath.Join(dir, "run"))
	cfg.L, cfg.Chains, cfg.FixedCodes = LSizes{4, 5}, 1, gmt
	// The prepared run below, fitted by a chain process, builds no
	// consensus (a whole-run fit's stage alone); nor does this one.
	cfg.ConsensusChains = 0
	if _, err := Fit(context.Background(), cfg, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, L := range []int{4, 5} {
		fit := rundir.FitDir(cfg.Output, L, 1)
		codes, cells := rundirtest.Tables(t, fit)
		for l := range 3 {
			for g := range names {
				if want := b2f(truthGene(truth, l, g)); codes.Mean[g*L+l] != want {
					t.Fatalf("L = %d: code %d, gene %s: posterior mean %v, fixed at %v", L, l+1, names[g], codes.Mean[g*L+l], want)
				}
			}
			agree := 0
			for n := range smallPlanted.Cells {
				if (cells.Mean[n*L+l] >= 0.5) == truthCell(truth, l, n) {
					agree++
				}
			}
			if f := float64(agree) / float64(smallPlanted.Cells); f < 0.95 {
				t.Errorf("L = %d: fixed code %d's usage agrees with the planted usage on %.3f of the cells, want ≥ 0.95", L, l+1, f)
			}
		}
		fourth := codematch.NewSet(len(names))
		for g := range names {
			if truthGene(truth, 3, g) {
				fourth.Add(g)
			}
		}
		best := 0.0
		for _, s := range codematch.UsedMAPSets(codes.Mean, cells.Mean, L)[3:] {
			best = max(best, codematch.Jaccard(fourth, s))
		}
		if best < 0.9 {
			t.Errorf("L = %d: the free codes recover the fourth program with Jaccard %.3f, want ≥ 0.9", L, best)
		}
	}
	lib, err := geneset.ReadGMTFile(filepath.Join(cfg.Output, rundir.FixedCodesFile))
	if err != nil || len(lib.Sets) != 3 || lib.Sets[0].Name != "programA" {
		t.Fatalf("the run's copy of the fixed codes: %v, %+v", err, lib)
	}
	stored, _, err := LoadFitConfig(filepath.Join(cfg.Output, rundir.ConfigFile), FitConfig{})
	if err != nil || stored.FixedCodes != gmt {
		t.Fatalf("config.toml records fixed codes %q (%v), want %q", stored.FixedCodes, err, gmt)
	}
	want := digest(t, cfg.Output)
	// A prepared run fitted by a --chain process writes the same.
	shared := cfg
	shared.Output = filepath.Join(dir, "shared")
	ctx := context.Background()
	if _, err := Prepare(ctx, shared, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := FitChain(ctx, shared, 1, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := runsummary.Summarize(ctx, shared.Output, SummaryPlan, runsummary.Options{}); err != nil {
		t.Fatal(err)
	}
	if digest(t, shared.Output) != want {
		t.Error("the prepared run's --chain fits differ from Fit's")
	}
	// The source changes; a resumed fit still holds the run's codes.
	writeTruthGMT(t, gmt, truth, names, 1)
	if err := os.RemoveAll(rundir.FitDir(cfg.Output, 5, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := Fit(context.Background(), cfg, FitOptions{Resume: true}); err != nil {
		t.Fatal(err)
	}
	if digest(t, cfg.Output) != want {
		t.Error("the resumed run differs from the uninterrupted one")
	}
}

// TestFitFixedCodesFromFit fixes the MAP codes of one fit in a fit at a
// larger L: its first codes are those codes exactly.
func TestFitFixedCodesFromFit(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	dir := t.TempDir()
	first := smallConfig(shards, filepath.Join(dir, "first"))
	first.L, first.Chains = LSizes{3}, 1
	if _, err := Fit(context.Background(), first, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	src := rundir.FitDir(first.Output, 3, 1)
	old, err := rundir.ReadCodes(filepath.Join(src, rundir.CodesFile))
	if err != nil {
		t.Fatal(err)
	}
	cfg := smallConfig(shards, filepath.Join(dir, "second"))
	cfg.L, cfg.Chains, cfg.FixedCodes = LSizes{5}, 1, src
	if _, err := Fit(context.Background(), cfg, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	codes, err := rundir.ReadCodes(filepath.Join(rundir.FitDir(cfg.Output, 5, 1), rundir.CodesFile))
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for l := range 3 {
		empty := true
		for g := range old.GeneIDs {
			empty = empty && old.Mean[g*3+l] < 0.5
		}
		if empty {
			continue // an empty code is not fixed
		}
		for g := range old.GeneIDs {
			if want := b2f(old.Mean[g*3+l] >= 0.5); codes.Mean[g*5+k] != want {
				t.Fatalf("code %d of the new fit, gene %d: %v, want the old code %d's MAP value %v", k+1, g, codes.Mean[g*5+k], l+1, want)
			}
		}
		k++
	}
	if k == 0 {
		t.Fatal("the first fit has no code with genes: the test shows nothing")
	}
}

// TestFitFixedCodesRefused checks that a bad --fixed-codes source is
// refused with an error naming it (and the set at fault), before the run
// directory is made.
func TestFitFixedCodesRefused(t *testing.T) {
	shards, truth := simtest.Shards(t, smallPlanted)
	names := shardGeneNames(t, shards)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.gmt")
	writeTruthGMT(t, good, truth, names, 3)
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noFit := t.TempDir()
	for _, tc := range []struct {
		name, source string
		L            int
		want         []string
		is           error
	}{
		{"no gene known", write("unknown.gmt", "ok\t\t"+names[0]+"\nstranger\tdesc\tNOPE1\tNOPE2\n"), 3, []string{"unknown.gmt", `"stranger"`, "NOPE1"}, errFixedCodes},
		{"not GMT", write("bad.gmt", "just words on a line\n"), 3, []string{"bad.gmt", "line 1", "no tab"}, nil},
		// A set the library reader skips would be a fixed code left out.
		{"repeated name", write("repeat.gmt", "a\t\t"+names[0]+"\nb\t\t"+names[1]+"\na\t\t"+names[2]+"\n"), 3, []string{"repeat.gmt", `line 3: set "a" repeats the name of line 1`}, errFixedCodes},
		{"set without genes", write("nogene.gmt", "a\t\t"+names[0]+"\nb\tdesc\n"), 3, []string{"nogene.gmt", `line 2: set "b" lists no gene`}, errFixedCodes},
		{"no set", write("empty.gmt", "# nothing\n"), 3, []string{"empty.gmt", "no usable gene set"}, nil},
		{"missing", filepath.Join(dir, "absent.gmt"), 3, []string{"absent.gmt"}, nil},
		{"fit folder without codes", noFit, 3, []string{noFit, rundir.CodesFile}, nil},
		{"source inside the run", filepath.Join(dir, "run-source-inside-the-run", "L03", "chain1"), 3, []string{"holds the input"}, nil},
		{"L below the fixed codes", good, 2, []string{"L = 2", "3 fixed codes", "good.gmt"}, ErrConfig},
	} {
		cfg := smallConfig(shards, filepath.Join(dir, "run-"+strings.ReplaceAll(tc.name, " ", "-")))
		cfg.L, cfg.FixedCodes = LSizes{tc.L}, tc.source
		_, err := Fit(context.Background(), cfg, FitOptions{})
		testkit.ErrorSays(t, tc.name, err, tc.want)
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: error %v is not %v", tc.name, err, tc.is)
		}
		if _, err := os.Stat(cfg.Output); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the run directory was made (%v)", tc.name, err)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestFixedSetsFromFitLeaveOutHousekeeping checks that the codes taken
// from a fit are its MAP sets as enrich and codematch read them: the
// genes of the fit's housekeeping code sit at the prior's ½ in every
// code (no code's bit for them changes the likelihood), and were fixed
// into every code of the new fit.
func TestFixedSetsFromFitLeaveOutHousekeeping(t *testing.T) {
	t.Parallel()
	ids := []string{"g1", "g2", "g3", "g4"}
	for _, tc := range []struct {
		name         string
		housekeeping []float64
		want         [][]int
	}{
		{"housekeeping code", []float64{0, 0, 1, 0}, [][]int{{0, 3}, {1}}},
		{"none", nil, [][]int{{0, 2, 3}, {1, 2}}},
	} {
		dir := t.TempDir()
		codes := rundir.Codes{GeneIDs: ids, GeneNames: ids, L: 2,
			Mean:         []float64{1, 0, 0, 1, 0.5, 0.5, 0.5, 0},
			Housekeeping: tc.housekeeping}
		if err := rundir.WriteCodes(filepath.Join(dir, rundir.CodesFile), codes); err != nil {
			t.Fatal(err)
		}
		sets, err := fixedSetsFromFit(dir, ids, ids, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got [][]int
		for _, s := range sets {
			got = append(got, s.genes)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: fixed sets %v, want %v", tc.name, got, tc.want)
		}
	}
}
