package report

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"scpipe/enrich"
	"scpipe/internal/rundir"

	"scpipe/internal/testkit"
)

// smallRun is the synthetic run most tests report on: five L, two chains,
// a housekeeping code, a code no cell uses at the largest L.
var smallRun = synthetic{Cells: 900, Genes: 240, Blocks: 10, BlockGenes: 20, Ls: []int{2, 3, 4, 5, 6}, Chains: 2,
	Sweeps: 30, BurnIn: 10, Housekeeping: true, Unused: true, Seed: 3}

// blockLibrary is a GMT library naming the blocks of a synthetic run.
func blockLibrary(s synthetic) string {
	var b strings.Builder
	for k := range s.Blocks {
		fmt.Fprintf(&b, "block_%d\t", k+1)
		for g := k * s.BlockGenes; g < (k+1)*s.BlockGenes; g++ {
			fmt.Fprintf(&b, "\tGene%d", g+1)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// runWithEnrich writes the small run, its block library and enrich's
// output of the two into a new folder.
func runWithEnrich(t *testing.T) (dir, run, enrichDir string) {
	t.Helper()
	dir = t.TempDir()
	run, enrichDir = filepath.Join(dir, "run"), filepath.Join(dir, "run-enrich")
	smallRun.write(t, run)
	lib := filepath.Join(dir, "blocks.gmt")
	must(t, os.WriteFile(lib, []byte(blockLibrary(smallRun)), 0o644))
	o := enrich.DefaultOptions()
	o.Run, o.Out, o.Libraries = run, enrichDir, []string{lib}
	_, err := enrich.Run(context.Background(), o)
	must(t, err)
	return dir, run, enrichDir
}

// TestReportPage writes the report of the small run, finding its enrich
// output, and checks the page as a document (strict, self-contained, every
// figure drawn in it and written beside it) and what it says.
func TestReportPage(t *testing.T) {
	t.Parallel()
	dir, run, enrichDir := runWithEnrich(t)
	res, err := Write(context.Background(), Options{Run: run, Threshold: 0.5})
	must(t, err)
	if res.HTML != filepath.Join(run, DefaultFile) || res.Enrich != enrichDir {
		t.Errorf("wrote %s with enrichment from %q; want %s and the output found beside the run", res.HTML, res.Enrich, filepath.Join(run, DefaultFile))
	}
	page, err := os.ReadFile(res.HTML)
	must(t, err)
	figs, err := checkPage(page)
	if err != nil {
		t.Fatalf("the page: %v", err)
	}
	var want []string
	for _, id := range []string{"selection", "traces", "hierarchy"} {
		want = append(want, "fig-"+id)
	}
	for _, L := range smallRun.Ls {
		want = append(want, fmt.Sprintf("fig-L%02d_genes", L), fmt.Sprintf("fig-L%02d_cells", L))
	}
	if !slices.Equal(figs, want) {
		t.Errorf("figures drawn in the page: %v, want %v", figs, want)
	}
	if len(res.Figures) != len(want) {
		t.Errorf("%d figure files, want %d", len(res.Figures), len(want))
	}
	for i, path := range res.Figures {
		svg, err := os.ReadFile(path)
		must(t, err)
		if err := checkSVGFile(svg); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if id := strings.TrimSuffix(filepath.Base(path), ".svg"); i < len(want) && "fig-"+id != want[i] {
			t.Errorf("figure file %d is %s, the page's figure %s", i, path, want[i])
		}
		if !bytes.Contains(page, inline(svg)) {
			t.Errorf("the page does not hold %s as it is drawn in the file", path)
		}
	}
	text := string(page)
	for _, w := range []string{
		"900 cells × 240 genes", "L = 2, 3, 4, 5, 6 with 2 chain(s)",
		"Enrichment from " + enrichDir,
		"L06_code6 (unused)", // the code no cell uses, listed after the programs
		"Housekeeping code (every cell uses it; it is not one of the 6 codes): 5 genes; those the programs' cells detect most evenly: <bdi>Gene236</bdi>",
		"Answer: L = ", "◀ recommended", "top genes (score)",
		"split from L02_code1",                        // the hierarchy in the tables
		"><bdi>block_1</bdi> <b>",                     // a term in a table, isolated, its adjusted p in bold
		"agreement with chain 1", "held-out log pred", // the summary table
	} {
		if !strings.Contains(text, w) {
			t.Errorf("the page does not say %q", w)
		}
	}
	// Every symbol of the tables is isolated from its score (issue 44 item
	// 10: a right-to-left override in a symbol turned "S100A9 (0.61)" into
	// "(16.0) 9A001S").
	if cells := regexp.MustCompile(`<td class="genes">(.*?)</td>`).FindAllStringSubmatch(text, -1); len(cells) == 0 {
		t.Error("no table cell of top genes")
	} else {
		for _, c := range cells {
			if c[1] != "" && !regexp.MustCompile(`^<bdi>Gene[0-9]+</bdi> \([0-9.-]+\)(, <bdi>Gene[0-9]+</bdi> \([0-9.-]+\))*$`).MatchString(c[1]) {
				t.Errorf("a table cell of top genes does not isolate its symbols: %.120s", c[1])
				break
			}
		}
	}
	// Each program of the hierarchy is labelled with a block and its adjusted p.
	if n := len(regexp.MustCompile(`>block_[0-9]+ · [0-9.e+-]+</text>`).FindAllString(text, -1)); n != 2+3+4+5+5 {
		t.Errorf("%d programs of the hierarchy labelled with a term, want every one of the 19", n)
	}
	if got := testkit.Names(t, run); !slices.Equal(got, []string{"L02", "L03", "L04", "L05", "L06", "report-figures", "report.html", "summary.tsv"}) {
		t.Errorf("the run holds %v after the report: a temporary or lock file left, or an input touched", got)
	}
	_ = dir
}

// TestReportWithoutExtras: no enrich output, no summary (a run whose fit
// has not finished every L), one chain: the page says so and still holds
// the traces, the hierarchy and every L.
func TestReportWithoutExtras(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	s := synthetic{Cells: 300, Genes: 60, Blocks: 3, BlockGenes: 10, Ls: []int{2, 3}, Chains: 1, Sweeps: 8, BurnIn: 4,
		NoSummary: true, Seed: 5}
	s.write(t, run)
	out := filepath.Join(dir, "elsewhere", "r.html")
	res, err := Write(context.Background(), Options{Run: run, Out: out, Threshold: 0.5})
	must(t, err)
	page, err := os.ReadFile(out)
	must(t, err)
	figs, err := checkPage(page)
	must(t, err)
	if want := []string{"fig-traces", "fig-hierarchy", "fig-L02_genes", "fig-L02_cells", "fig-L03_genes", "fig-L03_cells"}; !slices.Equal(figs, want) {
		t.Errorf("figures %v, want %v", figs, want)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "summary.tsv is not written yet") || res.Enrich != "" {
		t.Errorf("notes %q, enrich %q", res.Notes, res.Enrich)
	}
	for _, w := range []string{"summary.tsv is not written yet", "No enrichment: run scpipe enrich", "scpipe report --enrich DIR", "<bdi>Gene1</bdi> (", "stability", "use no program in chain 1"} {
		if !strings.Contains(string(page), w) {
			t.Errorf("the page does not say %q", w)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "elsewhere", "r-figures", "L03_cells.svg")); err != nil {
		t.Errorf("figures beside -o: %v", err)
	}
	// Without terms, every program of the hierarchy is labelled with its
	// leading genes.
	hier, err := os.ReadFile(filepath.Join(dir, "elsewhere", "r-figures", "hierarchy.svg"))
	must(t, err)
	if n, want := strings.Count(string(hier), `font-style="italic" paint-order="stroke" stroke="white" stroke-width="3" stroke-linejoin="round">Gene`), strings.Count(string(hier), "<rect x="); n != want || n == 0 {
		t.Errorf("%d programs of the hierarchy labelled with genes, want every one of %d", n, want)
	}
}

// TestBadInputs gives each bad input and checks the error names the file
// and what is wrong, and that nothing is written.
func TestBadInputs(t *testing.T) {
	t.Parallel()
	dir, run, enrichDir := runWithEnrich(t)
	unfinished := filepath.Join(dir, "unfinished")
	must(t, os.MkdirAll(rundir.FitDir(unfinished, 3, 1), 0o755))
	must(t, os.WriteFile(filepath.Join(rundir.FitDir(unfinished, 3, 1), rundir.CheckpointFile), []byte("x"), 0o644))
	badSummary := filepath.Join(dir, "bad-summary")
	must(t, os.CopyFS(badSummary, os.DirFS(run)))
	must(t, os.WriteFile(filepath.Join(badSummary, rundir.SummaryFile), []byte("L\tchains\n"), 0o644))
	other := filepath.Join(dir, "other")
	s := smallRun
	s.Cells, s.Ls, s.Chains, s.Seed = 300, []int{2, 3}, 1, 9
	s.write(t, other)
	notEnrich := filepath.Join(dir, "not-enrich")
	must(t, os.MkdirAll(notEnrich, 0o755))
	for _, tc := range []struct {
		name string
		o    Options
		want []string
	}{
		{"no finished fit", Options{Run: unfinished}, []string{unfinished, "no finished fit"}},
		{"no run", Options{Run: filepath.Join(dir, "nope")}, []string{"nope"}},
		{"run is a file", Options{Run: filepath.Join(dir, "blocks.gmt")}, []string{"blocks.gmt", "not a folder"}},
		{"output not html", Options{Run: run, Out: filepath.Join(dir, "report.txt")}, []string{"report.txt", "ending in .html"}},
		{"threshold", Options{Run: run, Threshold: 1.5}, []string{"threshold 1.5 outside [0, 1]"}},
		{"summary", Options{Run: badSummary, Out: filepath.Join(dir, "s.html")}, []string{filepath.Join(badSummary, rundir.SummaryFile), "header"}},
		{"enrich no output", Options{Run: run, Out: filepath.Join(dir, "e.html"), Enrich: notEnrich}, []string{filepath.Join(notEnrich, enrich.LogFile)}},
		{"enrich of another run", Options{Run: other, Out: filepath.Join(dir, "o.html"), Enrich: enrichDir},
			[]string{enrichDir, "does not match the run " + other, "L02_code1"}},
	} {
		tc.o.Threshold = max(tc.o.Threshold, 0.5)
		testkit.Refused(t, tc.name, dir, tc.want, func() error {
			_, err := Write(context.Background(), tc.o)
			return err
		})
	}
	// An enrich output found beside the run but of other fits is set aside
	// with a note, not an error.
	stale := filepath.Join(dir, "other-enrich")
	must(t, os.CopyFS(stale, os.DirFS(enrichDir)))
	res, err := Write(context.Background(), Options{Run: other, Threshold: 0.5})
	must(t, err)
	if res.Enrich != "" || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "does not match") {
		t.Errorf("stale enrich output found: enrich %q, notes %q", res.Enrich, res.Notes)
	}
}

// TestForce: an existing report is kept without Force and replaced with
// it, its figures' folder whole, leaving nothing else behind.
func TestForce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	s := synthetic{Cells: 200, Genes: 40, Blocks: 2, BlockGenes: 10, Ls: []int{2, 3}, Chains: 1, Sweeps: 4, BurnIn: 2, Seed: 1}
	s.write(t, run)
	out := filepath.Join(dir, "r.html")
	o := Options{Run: run, Out: out, Threshold: 0.5}
	_, err := Write(context.Background(), o)
	must(t, err)
	stray := filepath.Join(FiguresDir(out), "stray.svg")
	must(t, os.WriteFile(stray, []byte("old"), 0o644))
	must(t, os.WriteFile(out, []byte("old"), 0o644))
	if _, err := Write(context.Background(), o); err == nil || !strings.Contains(err.Error(), "already exists (use --force") {
		t.Fatalf("second report without force: %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Fatalf("the refused report touched the old one")
	}
	o.Force, o.Enrich = true, NoEnrich
	_, err = Write(context.Background(), o)
	must(t, err)
	if b, _ := os.ReadFile(out); !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) {
		t.Errorf("the report was not replaced: %.40q", b)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("the old figures' folder was kept (%v)", err)
	}
	if got := testkit.Names(t, dir); !slices.Equal(got, []string{"r-figures", "r.html", "run"}) {
		t.Errorf("folder holds %v, want no temporary or lock left", got)
	}
}

// TestScreenshot checks a screenshot of a report, taken by
// scripts/test-report.sh with headless Chromium, for a blank page; the
// script sets SCPIPE_REPORT_SCREENSHOT to the PNG.
func TestScreenshot(t *testing.T) {
	path := os.Getenv("SCPIPE_REPORT_SCREENSHOT")
	if path == "" {
		t.Skip("SCPIPE_REPORT_SCREENSHOT is not set: scripts/test-report.sh sets it to a screenshot of a report")
	}
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := checkNotBlank(img); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestReportNoProgram: at a threshold no posterior mean reaches, no code is
// a program; the page says so in its tables and draws what there is.
func TestReportNoProgram(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	s := synthetic{Cells: 100, Genes: 30, Blocks: 2, BlockGenes: 10, Ls: []int{2, 3}, Chains: 1, Sweeps: 4, BurnIn: 2, Seed: 2}
	s.write(t, run)
	res, err := Write(context.Background(), Options{Run: run, Threshold: 1})
	must(t, err)
	page, err := os.ReadFile(res.HTML)
	must(t, err)
	figs, err := checkPage(page)
	must(t, err)
	if want := []string{"fig-selection", "fig-traces", "fig-L02_cells", "fig-L03_cells"}; !slices.Equal(figs, want) {
		t.Errorf("figures %v, want %v", figs, want)
	}
	if n := strings.Count(string(page), "(unused)"); n != 5 {
		t.Errorf("%d codes listed as unused, want all 5", n)
	}
}

// TestReportHierarchyMethod: the report links programs as its enrich
// output did unless told otherwise, and without one by fixed codes when it
// has a linker; the diagram's caption and ribbons say which.
func TestReportHierarchyMethod(t *testing.T) {
	t.Parallel()
	dir, run, enrichDir := runWithEnrich(t)
	// part links fine set j to coarse set i when most of j lies in i.
	part := func(calls *int) enrich.Linker {
		return func(_ context.Context, coarse, fine [][]int, D int) ([][]float64, error) {
			*calls++
			p := make([][]float64, len(coarse))
			for i, c := range coarse {
				p[i] = make([]float64, len(fine))
				for j, f := range fine {
					in := 0
					for _, g := range f {
						if slices.Contains(c, g) {
							in++
						}
					}
					if 2*in > len(f) {
						p[i][j] = 0.875
					}
				}
			}
			return p, nil
		}
	}
	tests := []struct {
		name      string
		enrich    string
		method    enrich.HierarchyMethod
		linker    bool
		wantFixed bool
	}{
		{"enrich output's", enrichDir, "", true, false},
		{"told", enrichDir, enrich.HierarchyFixedCodes, true, true},
		{"no output, a linker", NoEnrich, "", true, true},
		{"no output, no linker", NoEnrich, "", false, false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			o := Options{Run: run, Out: filepath.Join(dir, fmt.Sprintf("r%d.html", i)), Enrich: tc.enrich, Threshold: 0.5, Hierarchy: tc.method}
			if tc.linker {
				o.Linker = part(&calls)
			}
			res, err := Write(context.Background(), o)
			must(t, err)
			page, err := os.ReadFile(res.HTML)
			must(t, err)
			fixed := bytes.Contains(page, []byte("as fixed codes"))
			if fixed != tc.wantFixed || fixed != (calls == len(smallRun.Ls)-1) ||
				fixed != bytes.Contains(page, []byte("posterior mean of the link 0.88")) ||
				fixed == bytes.Contains(page, []byte("at least half of one&#39;s genes lie in the other")) {
				t.Errorf("fixed codes in the caption: %v, linker called %d times; want fixed codes %v", fixed, calls, tc.wantFixed)
			}
		})
	}
}
