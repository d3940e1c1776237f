package report_test

// These tests fit a run through package pipeline before they report it,
// as a user's commands do; they live in package report_test, apart from
// the report's own tests, which read fixtures made in code.

import (
	"context"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/enrich"
	"scpipe/ingest"
	"scpipe/pipeline"
	"scpipe/report"
)

// TestRealDataReport runs ingest, a short fit of two chains, enrich against
// the shared libraries and the report on real data (human PBMCs and mouse
// brain cells), and checks the page: a strict, self-contained document
// with every figure, each program's best term shown, and enrich's note on
// how mouse symbols met the human libraries.
func TestRealDataReport(t *testing.T) {
	data := filepath.Join("..", "..", "shared", "data")
	if _, err := os.Stat(data); err != nil {
		t.Skipf("shared test data not found at %s (it lives beside the project as ../shared): %v", data, err)
	}
	libs := []string{
		filepath.Join(data, "genesets", "GO_Biological_Process_2022_human.gmt.gz"),
		filepath.Join(data, "genesets", "celltype-markers.gmt"),
	}
	for _, tc := range []struct {
		name, input, genome, note string
	}{
		{"pbmc3k-600", filepath.Join(data, "pbmc3k-600"), "", "organism human"},
		{"brain1m-10k-subset", filepath.Join(data, "brain1m-10k-subset", "derived_v2_filtered_gene_bc_matrices_h5.h5"), "mm10",
			"organism mouse: gene symbols are matched to the libraries case-insensitively"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := ingest.DefaultOptions()
			in.Input, in.Output, in.Genome = tc.input, filepath.Join(dir, "shards"), tc.genome
			if _, err := ingest.Run(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			cfg := pipeline.DefaultFitConfig()
			cfg.Shards, cfg.Output = in.Output, filepath.Join(dir, "run")
			cfg.L, cfg.Chains, cfg.BurnIn, cfg.Samples, cfg.Threads = pipeline.LSizes{2, 3, 4}, 2, 6, 6, 2
			cfg.StartSweeps = min(cfg.StartSweeps, 6)
			if _, err := pipeline.Fit(context.Background(), cfg, pipeline.FitOptions{}); err != nil {
				t.Fatal(err)
			}
			eo := enrich.DefaultOptions()
			eo.Run, eo.Out, eo.Libraries = cfg.Output, cfg.Output+"-enrich", libs
			rep, err := enrich.Run(context.Background(), eo)
			if err != nil {
				t.Fatal(err)
			}
			o := report.DefaultOptions()
			o.Run = cfg.Output
			res, err := report.Write(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Enrich != eo.Out {
				t.Errorf("the report used enrich output %q, want %s beside the run", res.Enrich, eo.Out)
			}
			page, err := os.ReadFile(res.HTML)
			if err != nil {
				t.Fatal(err)
			}
			figs, err := report.CheckPage(page)
			if err != nil {
				t.Fatalf("the page: %v", err)
			}
			if len(figs) != 3+2*3 || len(res.Figures) != len(figs) {
				t.Errorf("figures in the page %v, %d files; want selection, traces, hierarchy and two per L", figs, len(res.Figures))
			}
			// Every program's best term of its top genes is in its row.
			shown := 0
			for _, lib := range rep.Enrichment {
				for _, pt := range lib.Tests {
					if pt.Query == "top" && len(pt.Results) > 0 {
						shown++
						if term := pt.Results[0].Term; !strings.Contains(string(page), escape(term)) {
							t.Errorf("%s: its top term in %s, %q, is not in the page", pt.Program.Name(), lib.Collection.Library.Name, term)
						}
					}
				}
			}
			if shown == 0 {
				t.Error("no program has a term")
			}
			if !strings.Contains(string(page), tc.note) {
				t.Errorf("the page does not carry enrich's note %q", tc.note)
			}
		})
	}
}

// escape writes s as the page's template writes text.
func escape(s string) string {
	var b strings.Builder
	template.Must(template.New("").Parse("{{.}}")).Execute(&b, s)
	return b.String()
}
