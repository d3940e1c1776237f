package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"scpipe/enrich"
	"scpipe/rundir"
)

// markerSetsFound scores one fit as the target does: the MAP gene
// set of every used code (posterior mean ≥ ½, some cell with z ≥ ½) is
// tested against every marker set (one-sided hypergeometric, background the
// fit's genes), the p-values are adjusted by Benjamini–Hochberg over codes ×
// sets, and it returns the names of the sets enriched at adjusted p < 1e-3
// in some code.
//
// With programsOnly it leaves the genes of the housekeeping code out of
// every set, as scpipe enrich does: their posterior mean in every other
// code is the prior's ½ (no other code's bit for them changes the
// likelihood), so the ≥ ½ sets of the target hold them all.
//
// Given only (1-based codes), it tests those codes alone: the stable
// programs of summary.tsv.
func markerSetsFound(t *testing.T, dir string, sets []enrich.GeneSet, programsOnly bool, only ...int) []string {
	t.Helper()
	codes, err := rundir.ReadCodes(filepath.Join(dir, rundir.CodesFile))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := rundir.ReadCells(filepath.Join(dir, rundir.CellsFile))
	if err != nil {
		t.Fatal(err)
	}
	L, D := codes.L, len(codes.GeneNames)
	index := map[string]int{}
	for d, g := range codes.GeneNames {
		index[strings.ToLower(g)] = d
	}
	var logp []float64
	var used int
	for l := range L {
		inUse := false
		for n := range cells.Barcodes {
			inUse = inUse || cells.Mean[n*L+l] >= 0.5
		}
		var genes []int
		for d := range D {
			if codes.Mean[d*L+l] >= 0.5 && !(programsOnly && codes.Housekeeping != nil && codes.Housekeeping[d] >= 0.5) {
				genes = append(genes, d)
			}
		}
		if !inUse || len(genes) == 0 || only != nil && !slices.Contains(only, l+1) {
			continue
		}
		used++
		in := map[int]bool{}
		for _, d := range genes {
			in[d] = true
		}
		for _, s := range sets {
			K, k := 0, 0
			for _, g := range s.Genes {
				if d, ok := index[strings.ToLower(g)]; ok {
					K++
					if in[d] {
						k++
					}
				}
			}
			logp = append(logp, enrich.LogHypergeomSF(k, K, len(genes), D))
		}
	}
	logq := enrich.AdjustBH(logp)
	var found []string
	for si, s := range sets {
		for c := range used {
			if logq[c*len(sets)+si] < math.Log(1e-3) {
				found = append(found, s.Name)
				break
			}
		}
	}
	return found
}

// captureStderr runs fn with os.Stderr redirected and returns what it wrote.
func captureStderr(t *testing.T, fn func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan []byte)
	go func() {
		var b bytes.Buffer
		b.ReadFrom(r)
		done <- b.Bytes()
	}()
	ferr := fn()
	w.Close()
	os.Stderr = old
	return string(<-done), ferr
}

// TestPBMCCellTypesWithDefaults is issue 17's target on real cells, run as
// a user would: `scpipe ingest pbmc3k-600 -o S; scpipe fit S -o R` with
// every default. At the L the run recommends, every chain must hold at
// least 6 of the 8 PBMC marker sets of celltype-markers.gmt in the MAP
// gene sets of its used codes; and where the chains of that L disagree,
// the run must say so in summary.tsv and in its log, and its stable
// programs (found by both chains) must hold the six cell types the chains
// find. The recommendation must follow its stated rule from the numbers
// summary.tsv gives.
func TestPBMCCellTypesWithDefaults(t *testing.T) {
	data := sharedData(t)
	dir := t.TempDir()
	shards, runDir := filepath.Join(dir, "shards"), filepath.Join(dir, "run")
	if err := run(t, "ingest", filepath.Join(data, "pbmc3k-600"), "-o", shards, "--quiet"); err != nil {
		t.Fatal(err)
	}
	logText, err := captureStderr(t, func() error { return run(t, "fit", shards, "-o", runDir) })
	if err != nil {
		t.Fatal(err)
	}
	lib, err := enrich.ReadGMTFile(filepath.Join(data, "genesets", "celltype-markers.gmt"))
	if err != nil {
		t.Fatal(err)
	}
	var markers []enrich.GeneSet
	for _, s := range lib.Sets {
		if strings.HasPrefix(s.Name, "PBMC ") {
			markers = append(markers, s)
		}
	}
	if len(markers) != 8 {
		t.Fatalf("%d PBMC marker sets in the library, want 8", len(markers))
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
	if rec == 0 {
		t.Fatal("no L recommended")
	}
	for _, r := range rows {
		if r.L != rec {
			continue
		}
		found := markerSetsFound(t, rundir.FitDir(runDir, r.L, r.Chain), markers, false)
		programs := markerSetsFound(t, rundir.FitDir(runDir, r.L, r.Chain), markers, true)
		t.Logf("L = %d chain %d: %d of 8 sets: %s (agreement %.3f, R̂ %.3g, converged %s); without the housekeeping code's genes, as enrich lists programs: %d",
			r.L, r.Chain, len(found), strings.Join(found, ", "), r.Agreement, r.RHatLogLik, r.Converged, len(programs))
		if len(found) < 6 {
			t.Errorf("recommended L = %d, chain %d: %d of the 8 PBMC marker sets enriched, want at least 6", r.L, r.Chain, len(found))
		}
		if !(r.LogPredGap <= r.LogPredTolerance) || !(r.HeldoutLogPredSE > 0) {
			t.Errorf("recommended L = %d: gap to the best L %v, tolerance %v, standard error %v", rec, r.LogPredGap, r.LogPredTolerance, r.HeldoutLogPredSE)
		}
		switch r.Converged {
		case "yes":
		case "no":
			if !strings.Contains(logText, "chains have not converged") || !strings.Contains(logText, "L="+strconv.Itoa(rec)+" ") {
				t.Errorf("L = %d has not converged, and the log does not say so:\n%s", rec, logText)
			}
			stable := markerSetsFound(t, rundir.FitDir(runDir, r.L, r.Chain), markers, true, r.StableCodes...)
			t.Logf("L = %d chain %d: stable programs %v of %d hold %d of 8 sets: %s", r.L, r.Chain, r.StableCodes, r.Programs, len(stable), strings.Join(stable, ", "))
			if len(stable) < 6 || r.StableCodes == nil {
				t.Errorf("recommended L = %d, chain %d: its stable programs %v hold %d of the 8 PBMC marker sets, want at least 6", r.L, r.Chain, r.StableCodes, len(stable))
			}
		default:
			t.Errorf("L = %d: converged = %q with the default two chains", rec, r.Converged)
		}
	}
}
