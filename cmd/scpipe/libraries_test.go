//go:build slow

package main

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"scpipe/enrich"
	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
	"scpipe/internal/testkit"
)

// splitLibraries writes the shared islet folder's three inDrop libraries
// (barcodes mouse1_lib1…3, one after another) as three MTX folders under
// dir, and a samples file naming them, whose path it returns.
func splitLibraries(t *testing.T, data, dir string) string {
	t.Helper()
	read := func(name string) []string { return testkit.ReadGzipLines(t, filepath.Join(data, name)) }
	write := func(path string, lines []string) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		zw := gzip.NewWriter(f)
		w := bufio.NewWriter(zw)
		for _, l := range lines {
			w.WriteString(l)
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	features, barcodes, matrix := read("features.tsv.gz"), read("barcodes.tsv.gz"), read("matrix.mtx.gz")
	lib := make([]int, len(barcodes)) // each cell's library, 0-based
	first := []int{}                  // each library's first cell
	for i, b := range barcodes {
		k := -1
		for j := range 3 {
			if strings.HasPrefix(b, fmt.Sprintf("mouse1_lib%d", j+1)) {
				k = j
			}
		}
		if k < 0 || k < len(first)-1 || k > len(first) {
			t.Fatalf("barcode %d (%q): not in libraries 1–3 one after another", i, b)
		}
		if k == len(first) {
			first = append(first, i)
		}
		lib[i] = k
	}
	first = append(first, len(barcodes))
	var comments []string
	body := make([][]string, 3)
	sized := false
	for _, l := range matrix {
		switch {
		case strings.HasPrefix(l, "%"):
			comments = append(comments, l)
			continue
		case !sized:
			sized = true // the size line: each library's is written anew
			continue
		}
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("matrix line %q", l)
		}
		c, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatal(err)
		}
		k := lib[c-1]
		body[k] = append(body[k], f[0]+" "+strconv.Itoa(c-first[k])+" "+f[2])
	}
	tsv := []string{"sample\tpath"}
	for k := range 3 {
		name := fmt.Sprintf("lib%d", k+1)
		out := filepath.Join(dir, name)
		if err := os.MkdirAll(out, 0o777); err != nil {
			t.Fatal(err)
		}
		m := append(append([]string{}, comments...), fmt.Sprintf("%d %d %d", len(features), first[k+1]-first[k], len(body[k])))
		write(filepath.Join(out, "matrix.mtx.gz"), append(m, body[k]...))
		write(filepath.Join(out, "features.tsv.gz"), features)
		write(filepath.Join(out, "barcodes.tsv.gz"), barcodes[first[k]:first[k+1]])
		tsv = append(tsv, name+"\t"+name)
	}
	path := filepath.Join(dir, "samples.tsv")
	if err := os.WriteFile(path, []byte(strings.Join(tsv, "\n")+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// libraryRuns ingests the islets as one folder and as their three
// libraries (splitLibraries), fits both with extra fit flags, and
// compares the recommended fits: the programs matched one to one (their
// genes, by Jaccard), the marker sets found, and the programs marked
// sample-specific against the libraries of their matched program's cells
// in the one-folder run. It returns the mean matched Jaccard, the marker
// sets found (one folder, libraries) and the marked programs whose
// one-folder match is not one library's.
func libraryRuns(t *testing.T, fit []string, libFit ...string) (mean float64, found [2]int, unexplained []string) {
	data := filepath.Join(sharedData(t), "baron-mouse-pancreas")
	dir := t.TempDir()
	samples := splitLibraries(t, data, dir)
	type ingestRun struct {
		ingest []string
		out    string
	}
	runs := []ingestRun{{[]string{data}, filepath.Join(dir, "one")}, {[]string{"--samples", samples}, filepath.Join(dir, "libs")}}
	lib, err := enrich.ReadGMTFile(filepath.Join(data, "markers.gmt"))
	if err != nil {
		t.Fatal(err)
	}
	var sets [2][]codematch.Set
	var cellsOf [2]rundir.Cells
	var Ls [2]int
	for i, r := range runs {
		shards := r.out + ".shards"
		if err := run(t, append([]string{"ingest", "-q", "-o", shards}, r.ingest...)...); err != nil {
			t.Fatal(err)
		}
		flags := fit
		if i == 1 {
			flags = append(append([]string{}, fit...), libFit...)
		}
		if err := run(t, append([]string{"fit", shards, "-q", "-o", r.out}, flags...)...); err != nil {
			t.Fatal(err)
		}
		rows, err := rundir.ReadSummary(filepath.Join(r.out, rundir.SummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range rows {
			if s.Recommended {
				Ls[i] = s.L
				break
			}
		}
		fitDir := rundir.FitDir(r.out, Ls[i], 1)
		found[i] = len(markerSetsFound(t, fitDir, lib.Sets, top100))
		codes, err := rundir.ReadCodes(filepath.Join(fitDir, rundir.CodesFile))
		if err != nil {
			t.Fatal(err)
		}
		if cellsOf[i], err = rundir.ReadCells(filepath.Join(fitDir, rundir.CellsFile)); err != nil {
			t.Fatal(err)
		}
		sets[i] = codematch.ProgramSets(codes.Mean, cellsOf[i].Mean, codes.Housekeeping, codes.L)
		if i == 1 && strings.Join(codes.GeneIDs, ",") != strings.Join(mustCodes(t, rundir.FitDir(runs[0].out, Ls[0], 1)).GeneIDs, ",") {
			t.Fatal("the two ingests kept different genes")
		}
	}
	m := codematch.Match(sets[0], sets[1])
	mean = m.Mean()
	t.Logf("recommended L: one folder %d, libraries %d; matched Jaccard per program %.3f, mean %.3f; marker sets found %d, %d", Ls[0], Ls[1], m.Agreement, mean, found[0], found[1])
	usage, err := rundir.ReadSamples(filepath.Join(runs[1].out, rundir.SampleUsageFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range usage {
		if !u.SampleSpecific || u.OfProgram < rundir.SampleSpecificShare {
			continue
		}
		// The one-folder program matched to it: is 90% of its cells one library's?
		one := m.To[u.Code-1]
		c := cellsOf[0]
		per := map[string]int{}
		total := 0
		for n, b := range c.Barcodes {
			if one >= 0 && c.Mean[n*c.L+one] >= 0.5 {
				per[b[:len("mouse1_lib1")]]++
				total++
			}
		}
		top := 0
		for _, v := range per {
			top = max(top, v)
		}
		t.Logf("marked sample-specific: program %d (%s, %.2f of its cells); its match %d in the one-folder run: %v", u.Code, u.Sample, u.OfProgram, one+1, per)
		if total == 0 || float64(top) < rundir.SampleSpecificShare*float64(total) {
			unexplained = append(unexplained, fmt.Sprintf("program %d (%s, %.2f of its cells; its match %d in the one-folder run: %v)", u.Code, u.Sample, u.OfProgram, one+1, per))
		}
	}
	return mean, found, unexplained
}

func mustCodes(t *testing.T, dir string) rundir.Codes {
	t.Helper()
	c, err := rundir.ReadCodes(filepath.Join(dir, rundir.CodesFile))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestIsletLibrariesAsSamples is issue 43's real target: the islets
// ingested as their three libraries, fitted with every default (the
// samples model on), against the one-folder run: the programs of the
// recommended L matched one to one (mean Jaccard of their genes), the
// marker sets found no fewer, and no program marked sample-specific
// whose match in the one-folder run is not one library's. The programs
// are measured, not required, to match: the 0.9 is out of reach
// when one folder fitted with another seed matches itself at about 0.7
// (docs/real-data.md).
func TestIsletLibrariesAsSamples(t *testing.T) {
	mean, found, unexplained := libraryRuns(t, nil)
	if found[1] < found[0] {
		t.Errorf("%d marker sets found from the libraries, %d from the one folder", found[1], found[0])
	}
	for _, u := range unexplained {
		t.Errorf("marked sample-specific, not one library's in the one-folder run: %s", u)
	}
	t.Logf("mean matched Jaccard %.3f", mean)
}
