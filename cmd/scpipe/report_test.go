package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/report"
)

// reportThroughCLI runs scpipe report on the planted run with the enrich
// output enrichThroughCLI wrote (given by name: it sits neither in the run
// nor beside it as RUN-enrich), and checks that the flags reach the report
// and that bad ones are refused with nothing written.
func reportThroughCLI(t *testing.T, runDir, dir string) {
	t.Helper()
	enrichDir := filepath.Join(dir, "enrich")
	out, err := captureStdout(t, func() error { return run(t, "report", runDir, "--enrich", enrichDir, "--quiet") })
	if err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(runDir, report.DefaultFile)
	if strings.TrimSpace(out) != html {
		t.Errorf("scpipe report printed %q, want the report's path %s", out, html)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	// The planted programs label the hierarchy, and the report took the
	// enrich output's threshold (0.6) so that its programs are the same.
	for _, w := range []string{"planted_", "Enrichment from " + enrichDir, "threshold 0.6 from " + enrichDir} {
		if !strings.Contains(string(page), w) {
			t.Errorf("%s does not say %q", html, w)
		}
	}
	if _, err := os.Stat(filepath.Join(report.FiguresDir(html), "hierarchy.svg")); err != nil {
		t.Errorf("figures: %v", err)
	}
	other := filepath.Join(dir, "no-terms.html")
	if err := run(t, "report", runDir, "-o", other, "--no-enrich", "--threshold", "0.7", "--quiet"); err != nil {
		t.Fatal(err)
	}
	if page, err := os.ReadFile(other); err != nil || strings.Contains(string(page), "planted_") ||
		!strings.Contains(string(page), "posterior mean is at least 0.7") {
		t.Errorf("--no-enrich --threshold 0.7: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", runDir, "--enrich", enrichDir}, "already exists (use --force"},
		{[]string{"report", runDir, "--enrich", enrichDir, "--no-enrich", "-o", filepath.Join(dir, "r2.html")}, "--enrich and --no-enrich"},
		{[]string{"report", runDir, "-o", filepath.Join(dir, "r2.txt")}, "ending in .html"},
		{[]string{"report", runDir, "-o", filepath.Join(dir, "r2.html"), "--enrich", runDir}, filepath.Join(runDir, "enrich.log")},
		{[]string{"report", "-o", filepath.Join(dir, "r2.html")}, "missing run directory"},
	} {
		if err := run(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("scpipe %s: error %v, want one containing %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
	for _, p := range []string{filepath.Join(dir, "r2.html"), filepath.Join(dir, "r2-figures")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("a failed report left %s (%v)", p, err)
		}
	}
}
