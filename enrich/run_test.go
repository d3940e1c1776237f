package enrich

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"scpipe/internal/outlock"
	"scpipe/internal/rundir"

	"scpipe/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixtureGenes are the fixed fit's genes: a T-cell program (0-8), a
// monocyte program (9-16) that splits into 9-12 and 13-16, a B-cell program
// (17-20), and others; gene 24 repeats the symbol of gene 23 and gene 25 has
// no symbol.
var fixtureGenes = []string{
	"Cd3e", "Cd3d", "Cd3g", "Cd2", "Lck", "Il7r", "Cd28", "Tcf7", "Lef1",
	"Lyz2", "Cd14", "S100a8", "S100a9", "Fcn1", "Csf1r", "Vcan", "Cst3",
	"Ms4a1", "Cd79a", "Cd79b", "Cd19",
	"Actb", "Gapdh", "Tbce", "Tbce", "", "Malat1", "Rpl13", "Rps27", "mt-Co1", "B2m", "Tmsb4x",
}

// fixtureCode is one code of the fixed fit: its genes and the cells using
// it; no cells makes it unused (every posterior mean at the prior ½).
type fixtureCode struct{ genes, cells []int }

var (
	tcell    = fixtureCode{span(0, 9, 24), span(0, 4)}
	tcellLow = fixtureCode{span(0, 8, 24), span(0, 4)} // Lef1 below the threshold in one chain
	mono     = fixtureCode{span(9, 17), span(4, 8)}
	mono1    = fixtureCode{span(9, 13), span(4, 8)}
	mono2    = fixtureCode{span(13, 17), span(4, 8)}
	bcell    = fixtureCode{span(17, 21, 25), span(8, 11)}
	unused   = fixtureCode{}
)

// fixtureFits is the fixed fit: L = 2, 3, 4 with two chains each, the
// second chain's codes in another order.
var fixtureFits = map[int][2][]fixtureCode{
	2: {{tcell, mono}, {mono, tcellLow}},
	3: {{tcell, mono1, mono2}, {mono2, tcell, mono1}},
	4: {{tcell, mono, bcell, unused}, {mono, unused, tcell, bcell}},
}

// writeFixtureRun writes the fixed fit as a run directory through rundir,
// as scpipe fit would. Posterior means vary by gene so that the outputs show
// them; gene 5 sits exactly at ½ (in the set: the threshold is inclusive).
func writeFixtureRun(t *testing.T, run string) {
	t.Helper()
	const N = 12
	D := len(fixtureGenes)
	ids := make([]string, D)
	for g := range ids {
		ids[g] = fmt.Sprintf("ENSMUSG%011d", 1000+g)
	}
	for L, chains := range fixtureFits {
		for c, codes := range chains {
			dir := rundir.FitDir(run, L, c+1)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			u, z := make([]float64, D*L), make([]float64, N*L)
			for k, code := range codes {
				for g := range D {
					u[g*L+k] = 0.02 + 0.01*float64(g%7)
					if len(code.cells) == 0 {
						u[g*L+k] = 0.5
					}
				}
				for i, g := range code.genes {
					u[g*L+k] = 0.99 - 0.03*float64(i%5)
					if g == 5 {
						u[g*L+k] = 0.5
					}
				}
				for n := range N {
					z[n*L+k] = 0.01
				}
				for _, n := range code.cells {
					z[n*L+k] = 0.97
				}
			}
			must(t, rundir.WriteCodes(filepath.Join(dir, rundir.CodesFile), rundir.Codes{GeneIDs: ids, GeneNames: fixtureGenes, L: L, Mean: u}))
			must(t, rundir.WriteCells(filepath.Join(dir, rundir.CellsFile), rundir.Cells{Barcodes: labels("cell", N), L: L, Mean: z}))
			must(t, rundir.WriteTrace(filepath.Join(dir, rundir.TraceFile), []rundir.TraceRow{{Sweep: 1, Phase: rundir.PhaseSample}}))
		}
	}
}

func labels(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i+1)
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fixtureLibrary is a small library in human symbols, weights and all.
const fixtureLibrary = "T cell\tcanonical markers\tCD3E\tCD3D\tCD3G\tCD2\tLCK\tIL7R\tCD28\tTCF7\tLEF1\tTRAC\n" +
	"Monocyte\t\tLYZ2,1.0\tCD14,1.0\tS100A8\tS100A9\tFCN1\tCSF1R\r\n" +
	"Classical monocyte\t\tS100A8\tS100A9\tLYZ2\tCD14\t\n" +
	"B cell\t\tMS4A1\tCD79A\tCD79B\tCD19\tPAX5\n" +
	"Housekeeping\t\tACTB\tGAPDH\tB2M\tTBCE\n" +
	"Not expressed\t\tFOO1\tFOO2\n"

// fixture writes the fixed run and its library into a new folder.
func fixture(t *testing.T) (run, lib, dir string) {
	dir = t.TempDir()
	run, lib = filepath.Join(dir, "run"), filepath.Join(dir, "markers.gmt")
	writeFixtureRun(t, run)
	must(t, os.WriteFile(lib, []byte(fixtureLibrary), 0o644))
	return run, lib, dir
}

// TestGolden compares every output file of the fixed fit, except the log
// (which names temporary paths), with testdata/golden.
func TestGolden(t *testing.T) {
	run, lib, dir := fixture(t)
	o := DefaultOptions()
	o.Run, o.Out, o.Libraries = run, filepath.Join(dir, "out"), []string{lib}
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Organism != "mouse" {
		t.Errorf("organism %q, want mouse from the symbols", rep.Organism)
	}
	golden := filepath.Join("testdata", "golden")
	if *update {
		must(t, os.RemoveAll(golden))
	}
	var names []string
	err = filepath.WalkDir(o.Out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == LogFile {
			return err
		}
		rel, _ := filepath.Rel(o.Out, path)
		names = append(names, rel)
		got, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		want := filepath.Join(golden, rel)
		if *update {
			must(t, os.MkdirAll(filepath.Dir(want), 0o755))
			return os.WriteFile(want, got, 0o644)
		}
		w, err := os.ReadFile(want)
		if err != nil {
			t.Errorf("%v (run go test ./enrich -run Golden -update to create it)", err)
		} else if !bytes.Equal(got, w) {
			t.Errorf("%s differs from %s; if the change is intended, rerun with -update and read the diff", rel, want)
		}
		return nil
	})
	must(t, err)
	// And no golden file is missing from the output.
	filepath.WalkDir(golden, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(golden, path)
			if !slices.Contains(names, rel) {
				t.Errorf("output has no %s", rel)
			}
		}
		return nil
	})
	log, err := os.ReadFile(filepath.Join(o.Out, LogFile))
	must(t, err)
	for _, want := range []string{"organism\tmouse", "matched to the libraries case-insensitively (Cd3e = CD3E)", "library markers", "1 sets with no gene in the background are not tested"} {
		if !bytes.Contains(log, []byte(want)) {
			t.Errorf("%s does not say %q:\n%s", LogFile, want, log)
		}
	}
}

// TestFixtureResults checks what the golden files hold against the fixed
// fit's design, so that -update cannot freeze a wrong answer unnoticed.
func TestFixtureResults(t *testing.T) {
	t.Parallel()
	run, lib, dir := fixture(t)
	o := DefaultOptions()
	o.Run, o.Out, o.Libraries = run, filepath.Join(dir, "out"), []string{lib}
	rep, err := Run(context.Background(), o)
	must(t, err)
	byName := map[string]*Program{}
	for _, lv := range rep.Levels {
		for i := range lv.Programs {
			byName[lv.Programs[i].Name()] = &lv.Programs[i]
		}
	}
	symbols := func(p *Program) []string {
		out := make([]string, len(p.Genes))
		for i, g := range p.Genes {
			out[i] = rep.Genes.Symbols[g]
		}
		return out
	}
	// L=2: chain 2 lacks Lef1 in the T-cell code, so its support is ½ and the
	// consensus (at least half of two chains) keeps it; stability 9/10.
	tc := byName["L02_code1"]
	if got := symbols(tc); !slices.Equal(got, []string{"Cd3e", "Cd3d", "Cd3g", "Cd2", "Lck", "Il7r", "Cd28", "Tcf7", "Lef1", "Tbce-1"}) {
		t.Errorf("L02_code1 genes %v", got)
	}
	if tc.Stability != 9.0/10 || tc.Support[8] != 0.5 || tc.Cells != 4 || tc.Mean[5] != 0.5 {
		t.Errorf("L02_code1: stability %v, Lef1 support %v, cells %d, Il7r mean %v", tc.Stability, tc.Support[8], tc.Cells, tc.Mean[5])
	}
	if u := byName["L04_code4"]; u.Status != StatusUnused {
		t.Errorf("L04_code4 is %s, want unused", u.Status)
	}
	events := map[string]Event{}
	for _, n := range rep.Hierarchy.Nodes {
		events[n.Name()] = n.Event
	}
	for name, want := range map[string]Event{"L03_code2": EventSplit, "L03_code3": EventSplit, "L04_code2": EventMerge, "L04_code3": EventNew, "L04_code1": EventContinues} {
		if events[name] != want {
			t.Errorf("%s: event %q, want %q", name, events[name], want)
		}
	}
	// Every program's top term is its cell type, with the overlap the design gives.
	top := map[string]string{}
	for _, lt := range rep.Enrichment[0].Tests {
		if lt.Query == "all" && len(lt.Results) > 0 {
			r := lt.Results[0]
			top[lt.Program.Name()] = fmt.Sprintf("%s %d/%d", r.Term, r.Overlap, r.TermSize)
		}
	}
	for name, want := range map[string]string{
		"L02_code1": "T cell 9/9", "L02_code2": "Monocyte 6/6", "L03_code2": "Classical monocyte 4/4",
		"L04_code3": "B cell 4/4", "L04_code2": "Monocyte 6/6",
	} {
		if top[name] != want {
			t.Errorf("%s: top term %q, want %q", name, top[name], want)
		}
	}
}

// TestBadInputs gives each input the issue names as bad and checks the
// error names the file and what is wrong, and that nothing is written.
func TestBadInputs(t *testing.T) {
	t.Parallel()
	run, lib, dir := fixture(t)
	empty := filepath.Join(dir, "empty.gmt")
	must(t, os.WriteFile(empty, []byte("Only a name\t\n\n"), 0o644))
	bg := filepath.Join(dir, "human-background.txt")
	must(t, os.WriteFile(bg, []byte("# no gene of the run\nFOO1\nFOO2\tother column\n"), 0o644))
	runLink := filepath.Join(dir, "run-link")
	must(t, os.Symlink(run, runLink))
	// The run's shards, named relative to the folder the fit ran in.
	shards := filepath.Join(dir, "shards")
	must(t, os.Mkdir(shards, 0o755))
	must(t, rundir.WriteShardsIdentity(filepath.Join(run, rundir.ShardsFile), rundir.ShardsIdentity{Path: "shards", Fingerprint: "f"}))
	unfinished := filepath.Join(dir, "unfinished")
	must(t, os.MkdirAll(rundir.FitDir(unfinished, 3, 1), 0o755))
	must(t, os.WriteFile(filepath.Join(rundir.FitDir(unfinished, 3, 1), rundir.CheckpointFile), []byte("x"), 0o644))
	for _, tc := range []struct {
		name string
		edit func(o *Options)
		want []string
	}{
		{"no finished fit", func(o *Options) { o.Run = unfinished }, []string{unfinished, "no finished fit"}},
		{"run is no folder", func(o *Options) { o.Run = lib }, []string{lib, "not a folder"}},
		{"L not in the run", func(o *Options) { o.Ls = []int{3, 7} }, []string{run, "no finished fit of L = 7", "finished: L = 2, 3, 4"}},
		{"GMT with no usable line", func(o *Options) { o.Libraries = []string{lib, empty} }, []string{empty, "no usable gene set"}},
		{"missing GMT", func(o *Options) { o.Libraries = []string{filepath.Join(dir, "nope.gmt")} }, []string{"nope.gmt"}},
		{"background sharing no gene", func(o *Options) { o.Background = bg }, []string{bg, "none of its 2 symbols is a gene of the run"}},
		{"threshold below 0", func(o *Options) { o.Threshold = -0.1 }, []string{"threshold -0.1 outside [0, 1]"}},
		{"threshold above 1", func(o *Options) { o.Threshold = 1.5 }, []string{"threshold 1.5 outside [0, 1]"}},
		{"threshold NaN", func(o *Options) { o.Threshold = math.NaN() }, []string{"threshold NaN outside [0, 1]"}},
		{"organism", func(o *Options) { o.Organism = "zebrafish" }, []string{`organism "zebrafish"`}},
		{"two libraries of one name", func(o *Options) { o.Libraries = []string{lib, lib} }, []string{lib, `both library "markers"`}},
		{"output holds the run", func(o *Options) { o.Out, o.Force = dir, true }, []string{"holds the input", run}},
		{"output inside the run", func(o *Options) { o.Out, o.Force = filepath.Join(run, "L02"), true }, []string{"lies inside the input", run}},
		{"output a fit of the run", func(o *Options) { o.Out, o.Force = rundir.FitDir(run, 3, 1), true }, []string{"lies inside the input", run}},
		{"output through a link to the run", func(o *Options) { o.Out, o.Force = filepath.Join(runLink, "L02"), true }, []string{"lies inside the input", run}},
		{"output a library", func(o *Options) { o.Out, o.Force = lib, true }, []string{"is the input", lib}},
		{"output the run's shards", func(o *Options) { o.Out, o.Force = shards, true }, []string{"is the input", shards}},
	} {
		o := DefaultOptions()
		o.Run, o.Out, o.Libraries = run, filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-")), []string{lib}
		tc.edit(&o)
		testkit.Refused(t, tc.name, dir, tc.want, func() error {
			_, err := Run(context.Background(), o)
			return err
		})
	}
}

// TestLibraryMatchingNoGene: a library none of whose genes is in the
// background (another organism, Ensembl ids against symbols) gives an
// empty table, which a warning says why, naming the file; one that
// matches says nothing above info.
func TestLibraryMatchingNoGene(t *testing.T) {
	t.Parallel()
	run, lib, dir := fixture(t)
	other := filepath.Join(dir, "other.gmt")
	must(t, os.WriteFile(other, []byte("SET1\tdesc\tFOO1\tFOO2\nSET2\tdesc\tFOO3\n"), 0o644))
	// A library joined from two, where a name comes back with other genes:
	// the later set is not tested, which a warning says, naming it.
	text, err := os.ReadFile(lib)
	must(t, err)
	first, _, _ := strings.Cut(string(text), "\t")
	lines := strings.Count(string(text), "\n")
	joined := filepath.Join(dir, "joined.gmt")
	must(t, os.WriteFile(joined, append(text, first+"\tagain\tFOO1\n"...), 0o644))
	for _, tc := range []struct {
		name, lib, want string
	}{
		{"matching", lib, ""},
		{"matching no gene", other, "level=WARN msg=\"enrich: library other (" + other + "): none of its 3 genes is in the background, so its table is empty"},
		{"repeated name", joined, fmt.Sprintf("library joined (%s): 1 set(s) repeat an earlier set's name and are not tested, the first at line %d: set \\\"%s\\\" repeats the name of line 1", joined, lines+1, first)},
	} {
		var log bytes.Buffer
		o := DefaultOptions()
		o.Run, o.Out, o.Libraries = run, filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-")), []string{tc.lib}
		o.Log = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if _, err := Run(context.Background(), o); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := log.String(); (tc.want == "" && got != "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestOutputReplacement: an existing output is kept without --force and
// replaced whole with it, leaving no temporary folder.
func TestOutputReplacement(t *testing.T) {
	t.Parallel()
	run, lib, dir := fixture(t)
	out := filepath.Join(dir, "out")
	must(t, os.MkdirAll(out, 0o755))
	must(t, os.WriteFile(filepath.Join(out, "stale.txt"), []byte("old"), 0o644))
	o := DefaultOptions()
	o.Run, o.Out, o.Libraries = run, out, []string{lib}
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "already exists (use --force") {
		t.Fatalf("existing output without force: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "stale.txt")); err != nil {
		t.Fatalf("the refused run touched the old output: %v", err)
	}
	o.Force = true
	o.Ls = []int{3}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "stale.txt")); !os.IsNotExist(err) {
		t.Errorf("the replaced output still holds an old file (%v)", err)
	}
	var index bytes.Buffer
	data, err := os.ReadFile(filepath.Join(out, IndexFile))
	must(t, err)
	index.Write(data)
	if n := strings.Count(index.String(), "\n"); n != 4 {
		t.Errorf("index of L = 3 has %d lines, want a header and 3 codes:\n%s", n, data)
	}
	if got := testkit.Names(t, dir); !slices.Equal(got, []string{"markers.gmt", "out", "run"}) {
		t.Errorf("folder holds %v, want no temporary folder left", got)
	}
	var h struct {
		L     []int
		Nodes []struct{ Program string }
		Genes []struct {
			Symbol string `json:"symbol"`
			ID     string `json:"gene_id"`
		}
	}
	data, err = os.ReadFile(filepath.Join(out, HierarchyJSON))
	must(t, err)
	must(t, json.Unmarshal(data, &h))
	if !slices.Equal(h.L, []int{3}) || len(h.Nodes) != 3 || len(h.Genes) != 18 || h.Genes[0].Symbol != "Cd3e" {
		t.Errorf("hierarchy.json: L %v, %d nodes, %d genes (first %+v)", h.L, len(h.Nodes), len(h.Genes), h.Genes[0])
	}
}

// TestBackgroundFile: a background file saved on Windows (a byte-order
// mark and CRLF line ends) reads as the same symbols: the mark stuck to
// the first symbol, which then matched no gene, without a word.
func TestBackgroundFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genes := Genes{Names: []string{"CD3E", "MS4A1", "LYZ"}}
	for name, text := range map[string]string{
		"plain.txt":   "CD3E\nMS4A1\nLYZ\n",
		"windows.txt": "\ufeffCD3E\r\nMS4A1\r\nLYZ\r\n",
	} {
		path := filepath.Join(dir, name)
		must(t, os.WriteFile(path, []byte(text), 0o644))
		u, err := background(path, genes)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, g := range genes.Names {
			if _, ok := u.Lookup(g); !ok || u.Len() != 3 {
				t.Errorf("%s: %s not in the background of %d symbols %q", name, g, u.Len(), u.Symbols)
			}
		}
	}
}

// TestForceAfterPathSwap: enrich X/out -o d/out --force, with d swapped
// for a link to X after the output was checked against the run (mv d
// d.old; ln -s X d, issue 44), once replaced the run X/out with the
// enrichment and exited 0. The install checks the inputs again where the
// output now leads. Not parallel: the hook is the package's.
func TestForceAfterPathSwap(t *testing.T) {
	dir := t.TempDir()
	run, out := filepath.Join(dir, "X", "out"), filepath.Join(dir, "d", "out")
	writeFixtureRun(t, run)
	must(t, os.MkdirAll(out, 0o777))
	lib := filepath.Join(dir, "markers.gmt")
	must(t, os.WriteFile(lib, []byte(fixtureLibrary), 0o644))
	outlock.AfterCheck = func(output string) {
		if output != out {
			return
		}
		must(t, os.Rename(filepath.Join(dir, "d"), filepath.Join(dir, "d.old")))
		must(t, os.Symlink("X", filepath.Join(dir, "d")))
	}
	defer func() { outlock.AfterCheck = nil }()
	o := DefaultOptions()
	o.Run, o.Out, o.Libraries, o.Force = run, out, []string{lib}, true
	_, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "would destroy the input") {
		t.Errorf("enrich after the swap: %v, want a refusal naming the input", err)
	}
	if _, err := rundir.Fits(run); err != nil {
		t.Errorf("the run after the refused enrich: %v", err)
	}
	if _, err := os.Stat(filepath.Join(run, IndexFile)); err == nil {
		t.Errorf("the enrichment was installed in the run's place")
	}
	if got := testkit.Names(t, filepath.Join(dir, "X")); !slices.Equal(got, []string{"out"}) {
		t.Errorf("the run's folder holds %v, want the run alone", got)
	}
}
