//go:build slow

package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"scpipe/enrich"
	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
)

// consensusPrograms returns the recommended L of the run and the gene
// sets of its consensus's programs (codematch.ProgramSets of the
// consensus fit: the kept programs, less the housekeeping code's genes).
func consensusPrograms(t *testing.T, run string) (int, []codematch.Set) {
	t.Helper()
	rows, err := rundir.ReadSummary(filepath.Join(run, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	L := 0
	for _, r := range rows {
		if r.Recommended {
			L = r.L
		}
	}
	if L == 0 {
		t.Fatalf("%s: no L recommended", run)
	}
	dir := rundir.ConsensusDir(run, L)
	codes, err := rundir.ReadCodes(filepath.Join(dir, rundir.CodesFile))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := rundir.ReadCellMeans(filepath.Join(dir, rundir.CellsFile))
	if err != nil {
		t.Fatal(err)
	}
	var programs []codematch.Set
	for _, s := range codematch.ProgramSets(codes.Mean, cells.Mean, codes.Housekeeping, codes.L) {
		if s.Len() > 0 { // the codes past the kept programs hold none
			programs = append(programs, s)
		}
	}
	return L, programs
}

// twoSeedJaccard matches the consensus programs of two runs one-to-one
// (codematch.Match) and returns the mean Jaccard index of the matched
// gene sets, a program without a match counting 0, over the programs of
// the run that has more, and the two counts.
func twoSeedJaccard(a, b []codematch.Set) (float64, int, int) {
	if len(b) > len(a) {
		a, b = b, a
	}
	m := codematch.Match(b, a) // every program of the larger run
	return m.Mean(), len(a), len(b)
}

func consensusSummary(t *testing.T, run string) string {
	t.Helper()
	L, _ := consensusPrograms(t, run)
	rows, err := rundir.ReadConsensus(filepath.Join(rundir.ConsensusDir(run, L), rundir.ConsensusFile))
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, r := range rows {
		parts = append(parts, strconv.Itoa(r.Found)+"/"+strconv.Itoa(r.Chains))
	}
	return strings.Join(parts, " ")
}

// TestConsensusAcrossSeeds is issue 41's item 4 target on the shared real
// data: two whole default runs, --seed 1 and --seed 2, give the same
// programs at the recommended L: the mean Jaccard index of their
// consensus programs' gene sets, matched one-to-one, is at least 0.9.
// The marker sets that the consensus's programs hold are logged. Four
// default fits (568 s on the 2-core machine at load 9–14). Not yet in
// .ci/run: with the sampler of 6d5d215 it measures 0.896 on pbmc3k-600 and
// 0.651 on the islets, with that of 70e5375 0.586 and 0.654, where the two
// seeds recommend different L, and with the parameters shared by each L's
// chains (ee1d61f) 0.807 and 0.798, both at L = 4 and 9: each run holds
// its own estimate of them (docs/real-data.md), short of the target.
func TestConsensusAcrossSeeds(t *testing.T) {
	data := sharedData(t)
	for _, tc := range []struct {
		name, input, gmt string
		prefix           string
	}{
		{"pbmc3k-600", "pbmc3k-600", filepath.Join("genesets", "celltype-markers.gmt"), "PBMC "},
		{"islets", "baron-mouse-pancreas", filepath.Join("baron-mouse-pancreas", "markers.gmt"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			shards := filepath.Join(dir, "shards")
			if err := run(t, "ingest", filepath.Join(data, tc.input), "-o", shards, "--quiet"); err != nil {
				t.Fatal(err)
			}
			lib, err := enrich.ReadGMTFile(filepath.Join(data, tc.gmt))
			if err != nil {
				t.Fatal(err)
			}
			var markers []enrich.GeneSet
			for _, s := range lib.Sets {
				if strings.HasPrefix(s.Name, tc.prefix) {
					markers = append(markers, s)
				}
			}
			var programs [2][]codematch.Set
			for i, seed := range []string{"1", "2"} {
				runDir := filepath.Join(dir, "seed"+seed)
				if err := run(t, "fit", shards, "-o", runDir, "--seed", seed, "--quiet"); err != nil {
					t.Fatal(err)
				}
				L, sets := consensusPrograms(t, runDir)
				programs[i] = sets
				found := markerSetsFound(t, rundir.ConsensusDir(runDir, L), markers, top100)
				t.Logf("seed %s: recommended L = %d, consensus programs found by %s chains; %d of %d marker sets in their top 100 genes: %s",
					seed, L, consensusSummary(t, runDir), len(found), len(markers), strings.Join(found, ", "))
			}
			j, na, nb := twoSeedJaccard(programs[0], programs[1])
			t.Logf("two seeds: %d and %d consensus programs, mean Jaccard of the matched gene sets %.3f", na, nb, j)
			if !(j >= 0.9) {
				t.Errorf("seeds 1 and 2: mean Jaccard of the matched consensus programs %.3f, want ≥ 0.9", j)
			}
		})
	}
}
