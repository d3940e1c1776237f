package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/internal/testkit"
)

// TestExportChecksEveryOutputFirst: export -o FILE --cnmf RUN once
// replaced FILE and then refused --cnmf (issue 44 item 3); without
// --force it left a new FILE behind. Every output is checked before any
// is written.
func TestExportChecksEveryOutputFirst(t *testing.T) {
	dir, _, _, rd := hostileRun(t)
	precious := filepath.Join(dir, "out.h5ad")
	if err := os.WriteFile(precious, []byte("precious\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "new.h5ad")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", rd, "-o", precious, "--cnmf", rd, "--force", "-q"}, "is the input"},
		{[]string{"export", rd, "-o", fresh, "--cnmf", rd, "-q"}, "is the input"},
		{[]string{"export", rd, "-o", fresh, "--cnmf", filepath.Join(dir, "cnmf"), "--into", fresh, "-q"}, "is the input"},
		{[]string{"export", rd, "-o", fresh, "--cnmf", dir, "--force", "-q"}, "holds the input"},
	} {
		err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("scpipe %s: %v, want %q", strings.Join(tc.args, " "), err, tc.want)
		}
		if b, err := os.ReadFile(precious); string(b) != "precious\n" {
			t.Errorf("scpipe %s: %s replaced (%d bytes, %v)", strings.Join(tc.args, " "), precious, len(b), err)
		}
		if _, err := os.Stat(fresh); err == nil {
			t.Errorf("scpipe %s: left %s behind", strings.Join(tc.args, " "), fresh)
		}
	}
}

// copyTree copies the files under src to dst, replacing dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	testkit.CopyDir(t, src, dst)
}

// TestRunFilesFromAnotherRun: a fit mask, or a fit's tables, copied from
// another run (or another fit of the run) into a run, are refused by every
// command that reads them, naming the file and the cause (issue 44 item
// 7): hB's mask (30% held out) over hA's once made summarize and evaluate
// score 1.6 million "held-out" entries the fits had trained on, and fit
// --resume said only "field 12 of the configuration fingerprint". Tables
// of L = 3 in an L02 folder said "does not match the shards" (item 11).
func TestRunFilesFromAnotherRun(t *testing.T) {
	dir, _, shards, _ := hostileRun(t)
	fit := func(out string, extra ...string) string {
		t.Helper()
		p := filepath.Join(dir, out)
		args := append([]string{"fit", shards, "-o", p, "--chains", "1", "--starts", "1", "--burn-in", "3", "--samples", "3", "-j", "2", "-q"}, extra...)
		if err := run(t, args...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
		return p
	}
	hA := fit("hA", "--L", "2..3", "--holdout", "0.05")
	hB := fit("hB", "--L", "2", "--holdout", "0.3")
	// No consensus in hC: where an L has one, enrich reads it and not the
	// L's chains, and this case is about a chain's tables.
	hC := fit("hC", "--L", "2", "--chains", "2", "--holdout", "0.05", "--consensus-chains", "0")
	resume := []string{"fit", shards, "--L", "2..3", "--chains", "1", "--starts", "1", "--burn-in", "3", "--samples", "3", "--holdout", "0.05", "--resume", "-q"}
	for _, tc := range []struct {
		name  string
		from  string // copied over to
		to    string
		cmds  [][]string
		wants []string
	}{
		{"another run's fit mask", filepath.Join(hB, "fitmask"), filepath.Join(hA, "fitmask"),
			[][]string{{"summarize", hA, "-q"}, {"evaluate", hA, "-o", filepath.Join(dir, "ev"), "-q"}, append(resume, "-o", hA)},
			[]string{filepath.Join(hA, "fitmask"), "written by another run or fit", "a fit mask copied from another run"}},
		{"another run's chain", filepath.Join(hB, "L02", "chain1"), filepath.Join(hC, "L02", "chain2"),
			[][]string{{"summarize", hC, "-q"}, {"enrich", hC, "-o", filepath.Join(dir, "en"), "-q"}},
			[]string{filepath.Join(hC, "L02", "chain2"), "a table copied from another run's fit"}},
		{"another L's tables", filepath.Join(hA, "L03", "chain1"), filepath.Join(hA, "L02", "chain1"),
			[][]string{{"summarize", hA, "-q"}, {"export", hA, "-o", filepath.Join(dir, "x.h5ad"), "--L", "2", "--chain", "1", "-q"}},
			[]string{filepath.Join(hA, "L02", "chain1"), "written by the fit of L = 3, chain 1, and lies in the folder of the fit of L = 2, chain 1"}},
	} {
		keep := filepath.Join(dir, "keep")
		copyTree(t, tc.to, keep)
		copyTree(t, tc.from, tc.to)
		for _, args := range tc.cmds {
			err := run(t, args...)
			for _, w := range tc.wants {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("%s: scpipe %s: %v, want it to say %q", tc.name, strings.Join(args, " "), err, w)
					break
				}
			}
		}
		copyTree(t, keep, tc.to)
	}
}

// TestEnrichInRunAndReport: report --help names RUN/enrich as the place it
// looks for an enrichment, and enrich RUN -o RUN/enrich was refused as
// lying inside the run (issue 44 item 11). It is written now, and found by
// the report; any other folder of the run is still refused.
func TestEnrichInRunAndReport(t *testing.T) {
	_, _, _, rd := hostileRun(t)
	if err := run(t, "enrich", rd, "-o", filepath.Join(rd, "enrich"), "-q"); err != nil {
		t.Fatalf("enrich into RUN/enrich: %v", err)
	}
	if err := run(t, "enrich", rd, "-o", filepath.Join(rd, "enrich"), "--force", "-q"); err != nil {
		t.Fatalf("enrich into RUN/enrich again, --force: %v", err)
	}
	for _, out := range []string{filepath.Join(rd, "L02"), filepath.Join(rd, "fitmask"), filepath.Join(rd, "L02", "enrich")} {
		if err := run(t, "enrich", rd, "-o", out, "--force", "-q"); err == nil || !strings.Contains(err.Error(), "would destroy the input") {
			t.Errorf("enrich -o %s --force: %v, want a refusal", out, err)
		}
	}
	if err := run(t, "summarize", rd, "-q"); err != nil {
		t.Errorf("summarize with RUN/enrich in the run: %v", err)
	}
	if err := run(t, "report", rd, "-q"); err != nil {
		t.Fatalf("report: %v", err)
	}
	page, err := os.ReadFile(filepath.Join(rd, "report.html"))
	if err != nil || !strings.Contains(string(page), "Enrichment from "+filepath.Join(rd, "enrich")) {
		t.Errorf("the report does not show RUN/enrich (%v)", err)
	}
}

// TestHoldoutLeavingNothing: fit --holdout 0.9999999 fitted about no entry
// without a word, log-likelihood 0 (issue 44 item 11); it is refused
// naming the setting, and a large fraction that leaves entries is fitted.
func TestHoldoutLeavingNothing(t *testing.T) {
	dir, _, shards, _ := hostileRun(t)
	args := []string{"fit", shards, "--L", "2", "--chains", "1", "--starts", "1", "--burn-in", "3", "--samples", "3", "-j", "2", "-q"}
	err := run(t, append(args, "-o", filepath.Join(dir, "h1"), "--holdout", "0.9999999")...)
	if err == nil || !strings.Contains(err.Error(), "holdout = 0.9999999 hides every observed entry") {
		t.Errorf("fit --holdout 0.9999999: %v, want a refusal", err)
	}
	if err := run(t, append(args, "-o", filepath.Join(dir, "h2"), "--holdout", "0.9")...); err != nil {
		t.Errorf("fit --holdout 0.9: %v", err)
	}
}
