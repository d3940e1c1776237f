//go:build slow

package main_test

// The planted single-cell target runs ten fits of L = 2..10: about four
// minutes on a quiet 2-core machine, past go test's ten-minute limit on a
// loaded one. It is too heavy for the newcomer's `go test ./...`, so it
// builds only with -tags slow, which .ci/run passes (with a longer limit):
// CI still runs it. It runs the scpipe binary as a user would, built once
// by the test.

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"

	"scpipe/internal/rundir/rundirtest"
)

// scpipeBinary builds cmd/scpipe into a temporary folder and returns a
// function that runs it with the given arguments.
func scpipeBinary(t *testing.T) func(args ...string) error {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command, to build scpipe: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "scpipe")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/scpipe: %v\n%s", err, out)
	}
	return func(args ...string) error {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%w\n%s", err, out)
		}
		return nil
	}
}

// plantedPrograms reads truth/programs.tsv: the genes (by id) of each
// planted program.
func plantedPrograms(t *testing.T, truth string) []map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(truth, "programs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	var progs []map[string]bool
	for sc.Scan() {
		p := strings.Split(sc.Text(), "\t")
		for len(progs) < len(p)-2 {
			progs = append(progs, map[string]bool{})
		}
		for k, v := range p[2:] {
			if v == "1" {
				progs[k][p[0]] = true
			}
		}
	}
	return progs
}

// worstRecovery returns the smallest, over the planted programs, of the
// best Jaccard overlap of a program with a used code of the fit in dir.
func worstRecovery(t *testing.T, progs []map[string]bool, dir string, L int) float64 {
	t.Helper()
	codes, cells := rundirtest.Tables(t, dir)
	found := codematch.UsedMAPSets(codes.Mean, cells.Mean, L)
	worst := 1.0
	for _, p := range progs {
		s := codematch.NewSet(len(codes.GeneIDs))
		for g, id := range codes.GeneIDs {
			if p[id] {
				s.Add(g)
			}
		}
		best := 0.0
		for _, c := range found {
			best = max(best, codematch.Jaccard(s, c))
		}
		worst = min(worst, best)
	}
	return worst
}

// TestPlantedSingleCell runs issue 17's planted target as a user would, on
// ten seeds of `scpipe simulate --kind singlecell` with its defaults (4,000
// cells × 2,000 genes, six programs of 20 to 100 genes, per-gene baselines,
// lognormal depth, Poisson detection): ingest, then fit with every default
// (L = 2..10). The run must recommend the planted L = 6 in at least 9 of
// 10 seeds; at the recommended L the most likely chain must recover every
// planted program with a Jaccard overlap of at least 0.9 on every seed,
// the target, which the defaults meet since per-gene background
// levels (the smallest overlap is 0.905, on seeds 6 and 8; without them 6
// of 10 seeds: see docs/real-data.md). The paper's model with the old
// start recovers none of seed 1's programs.
//
// Ingest binarises at count > 0 (--ambient 0): the simulation draws no
// ambient RNA, so its truth is every nonzero count, and weighing counts
// against ambient RNA only removes true detections here. With the
// default --ambient 0.05 (2026-11-28) the run recommends L = 6 on all 10
// seeds and recovers every program with Jaccard ≥ 0.9 on 9 (seed 6:
// 0.864).
func TestPlantedSingleCell(t *testing.T) {
	if testing.Short() {
		t.Skip("ten simulated fits of L = 2..10; not in -short")
	}
	run := scpipeBinary(t)
	recommended, above90 := 0, 0
	for seed := 1; seed <= 10; seed++ {
		dir := t.TempDir()
		sim, shards, runDir := filepath.Join(dir, "sim"), filepath.Join(dir, "shards"), filepath.Join(dir, "run")
		for _, args := range [][]string{
			{"simulate", "--kind", "singlecell", "--seed", fmt.Sprint(seed), "-o", sim, "-q"},
			{"ingest", sim, "-o", shards, "--ambient", "0", "-q"},
			{"fit", shards, "-o", runDir, "-q"},
		} {
			if err := run(args...); err != nil {
				t.Fatalf("seed %d: scpipe %s: %v", seed, strings.Join(args, " "), err)
			}
		}
		rows, err := rundir.ReadSummary(filepath.Join(runDir, rundir.SummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		rec := 0
		for _, r := range rows {
			if r.Recommended {
				rec = r.L
			}
		}
		bestChain, bestLL := 0, 0.0
		for _, r := range rows {
			if r.L == rec && (bestChain == 0 || r.LogLik > bestLL) {
				bestChain, bestLL = r.Chain, r.LogLik
			}
		}
		progs := plantedPrograms(t, filepath.Join(sim, "truth"))
		worst := worstRecovery(t, progs, rundir.FitDir(runDir, rec, bestChain), rec)
		t.Logf("seed %d: recommended L = %d; its chain %d recovers every program with Jaccard ≥ %.3f", seed, rec, bestChain, worst)
		if rec == 6 {
			recommended++
		}
		if worst >= 0.9 {
			above90++
		}
		if seed == 1 {
			old := filepath.Join(dir, "old")
			if err := run("fit", shards, "-o", old, "--L", "6", "--chains", "1",
				"--noise", "symmetric", "--init", "data", "--housekeeping", "off", "-q"); err != nil {
				t.Fatal(err)
			}
			w := worstRecovery(t, progs, rundir.FitDir(old, 6, 1), 6)
			t.Logf("seed 1, the paper's model with the old start: every program recovered with Jaccard ≥ %.3f", w)
			if w >= 0.5 {
				t.Errorf("the paper's model recovers every planted program (Jaccard ≥ %.3f): the test no longer shows what the defaults add", w)
			}
		}
	}
	if recommended < 9 {
		t.Errorf("the planted L recommended in %d of 10 seeds, want at least 9", recommended)
	}
	if above90 < 10 {
		t.Errorf("every program recovered with Jaccard ≥ 0.9 in %d of 10 seeds, want all 10", above90)
	}
}
