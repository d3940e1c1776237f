package pipeline

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"scpipe/enrich"
	"scpipe/export"
	"scpipe/internal/rundir"
	"scpipe/internal/rundir/rundirtest"
	"scpipe/internal/stats/codematch"
	"scpipe/report"
	"scpipe/simulate/simtest"
)

// TestConsensusPlanted fits the small planted data at L = 5, one code
// more than planted: the chains find the four planted programs, and some
// make a fifth code of a gene or two that the others leave unused. The
// consensus of five chains keeps the four planted programs, each found by
// every chain, drops every program found by one chain only (the case must
// have one), and its fit with the kept codes fixed holds them as they
// are, each used by the cells planted with it. The same consensus comes
// back byte for byte on another thread count and when its table is
// rebuilt on resume.
func TestConsensusPlanted(t *testing.T) {
	shards, truth := simtest.Shards(t, smallPlanted)
	cfg := smallConfig(shards, filepath.Join(t.TempDir(), "run"))
	// Parameters that follow the state (no hold) and a burn-in of 30
	// sweeps leave a chain its own fifth code, which held ones do not.
	cfg.L, cfg.ConsensusChains, cfg.HoldFrom, cfg.MaxBurnIn = LSizes{5}, 5, 0, 0
	if _, err := Fit(context.Background(), cfg, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := rundir.ConsensusDir(cfg.Output, 5)
	table := filepath.Join(dir, rundir.ConsensusFile)
	rows, err := rundir.ReadConsensus(table)
	if err != nil {
		t.Fatal(err)
	}
	kept, lone := 0, 0
	for _, r := range rows {
		if r.Kept {
			kept++
			if r.Found != 5 || r.Frequency != 1 || r.Program != kept {
				t.Errorf("kept program %d found by %d of %d chains (frequency %v); the planted programs are in every chain, and the kept come first", r.Program, r.Found, r.Chains, r.Frequency)
			}
		}
		if r.Found == 1 {
			lone++
			if r.Kept {
				t.Errorf("program %d, found by one chain (codes %v), is kept", r.Program, r.Codes)
			}
		}
	}
	if kept != truth.L || lone == 0 {
		t.Fatalf("%d programs kept, %d found by one chain; the case is for the %d planted kept and one chain's own dropped", kept, lone, truth.L)
	}
	codes, cells := rundirtest.Tables(t, dir)
	// A fit of L = 5 whose codes are the kept programs, then codes of no
	// gene that no cell uses.
	if codes.L != 5 || cells.L != 5 {
		t.Fatalf("the consensus fit has %d codes and %d usage columns, want 5", codes.L, cells.L)
	}
	for n := range smallPlanted.Cells {
		for k := kept; k < 5; k++ {
			if cells.Mean[n*5+k] != 0 {
				t.Fatalf("cell %d uses code %d past the %d kept", n, k+1, kept)
			}
		}
	}
	found := codematch.UsedMAPSets(codes.Mean, cells.Mean, 5)
	for l := range truth.L {
		planted, plantedCells := codematch.NewSet(smallPlanted.Genes), codematch.NewSet(smallPlanted.Cells)
		for _, g := range truth.ProgramGenes(l) {
			planted.Add(g)
		}
		for _, n := range truth.ProgramCells(l) {
			plantedCells.Add(n)
		}
		best, code := 0.0, -1
		for k, s := range found {
			if j := codematch.Jaccard(planted, s); j > best {
				best, code = j, k
			}
		}
		if best < 0.9 {
			t.Errorf("planted program %d: best consensus code overlaps with Jaccard %.2f", l+1, best)
			continue
		}
		used := codematch.NewSet(smallPlanted.Cells)
		for n := range smallPlanted.Cells {
			if cells.Mean[n*5+code] >= 0.5 {
				used.Add(n)
			}
		}
		if j := codematch.Jaccard(plantedCells, used); j < 0.9 {
			t.Errorf("planted program %d: the cells using consensus code %d overlap the planted cells with Jaccard %.2f", l+1, code+1, j)
		}
	}
	for g, v := range codes.Mean {
		if v != 0 && v != 1 {
			t.Fatalf("gene %d: posterior mean %v in a code held fixed or empty", g/5, v)
		}
	}

	// enrich and report read the consensus as the L's result.
	eo := enrich.DefaultOptions()
	eo.Run = cfg.Output
	a, err := enrich.Analyse(context.Background(), eo)
	if err != nil {
		t.Fatal(err)
	}
	lv := a.Levels[0]
	if lv.Consensus != 5 || !slices.Equal(lv.Chains, []int{0}) || len(lv.Programs) != 5 {
		t.Fatalf("enrich read L = %d from chains %v (consensus of %d chains, %d programs), want the consensus of 5 as chain 0", lv.L, lv.Chains, lv.Consensus, len(lv.Programs))
	}
	for k, p := range lv.Programs {
		if kept := k < truth.L; kept != (p.Status == enrich.StatusProgram && p.Frequency == 1 && p.Stable()) || !kept && !math.IsNaN(p.Frequency) {
			t.Errorf("enrich: code %d: %s, frequency %v, stable %v; want the kept programs first, found by every chain", k+1, p.Status, p.Frequency, p.Stable())
		}
	}
	html := filepath.Join(t.TempDir(), "report.html")
	ro := report.DefaultOptions()
	ro.Run, ro.Out, ro.Enrich = cfg.Output, html, report.NoEnrich
	if _, err := report.Write(context.Background(), ro); err != nil {
		t.Fatal(err)
	}
	if page, err := os.ReadFile(html); err != nil || !bytes.Contains(page, []byte("the consensus of 5 chains")) || !bytes.Contains(page, []byte("found by 100% of the chains")) {
		t.Errorf("the report does not present L = 5 as the consensus of 5 chains (%v)", err)
	}

	// export's default fit is the one enrich numbers its programs by.
	if f, err := export.ReadFit(cfg.Output, 5, 0); err != nil {
		t.Error(err)
	} else if f.Chain != 0 || f.Dir != dir {
		t.Errorf("export's default fit of L = 5: chain %d in %s; want the consensus, %s", f.Chain, f.Dir, dir)
	}

	// The table is rebuilt on resume, as it was.
	want, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(table); err != nil {
		t.Fatal(err)
	}
	if _, err := Fit(context.Background(), cfg, FitOptions{Resume: true}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(table); err != nil || !bytes.Equal(got, want) {
		t.Errorf("resumed: %s differs (%v):\n%s\nwant\n%s", table, err, got, want)
	}
	// Another thread count, the same consensus and fit.
	one := cfg
	one.Output, one.Threads = filepath.Join(t.TempDir(), "run"), 1
	if _, err := Fit(context.Background(), one, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{rundir.ConsensusFile, rundir.CodesFile, rundir.CellsFile} {
		a, err1 := os.ReadFile(filepath.Join(dir, f))
		b, err2 := os.ReadFile(filepath.Join(rundir.ConsensusDir(one.Output, 5), f))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between 2 threads and 1 (%v, %v)", f, err1, err2)
		}
	}
}
