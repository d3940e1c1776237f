package main

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPaperScripts runs scripts/paper/run-all.sh on tiny problems, with
// this test binary as its scpipe (through a link named scpipe, which
// TestMain turns into the CLI), so that the scripts that reproduce the
// paper cannot drift from the commands and outputs they read. It checks
// that every experiment ran, the multi-layer ones included, that the summaries hold sound numbers, and that a
// second run into the same folder is refused without --force.
func TestPaperScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every scripts/paper script on tiny problems (about 15 s)")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("scripts/paper needs bash: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	scpipe := filepath.Join(dir, "bin", "scpipe")
	if err := os.MkdirAll(filepath.Dir(scpipe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, scpipe); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../scripts/paper/run-all.sh")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	run := func(args ...string) (string, error) {
		cmd := exec.Command("bash", append([]string{script, "-o", out}, args...)...)
		cmd.Env = append(os.Environ(), "SCPIPE="+scpipe, "SCPIPE_THREADS=1", "QUIET=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		_, err := cmd.Output()
		return stderr.String(), err
	}
	if stderr, err := run("--tiny"); err != nil {
		t.Fatalf("run-all.sh --tiny: %v\n%s", err, stderr)
	}

	times := readTSV(t, filepath.Join(out, "times.tsv"))
	// The generated ratings file is as readable as the files the shell
	// writes (0666 less the umask), not mktemp's 0600: a colleague fits it.
	gen, err1 := os.Stat(filepath.Join(out, "generated-u.data"))
	ref, err2 := os.Stat(filepath.Join(out, "times.tsv"))
	switch {
	case err1 != nil || err2 != nil:
		t.Errorf("generated-u.data: %v; times.tsv: %v", err1, err2)
	case gen.Mode().Perm() != ref.Mode().Perm():
		t.Errorf("generated-u.data: mode %v, want %v as times.tsv", gen.Mode().Perm(), ref.Mode().Perm())
	}
	for _, name := range []string{"factorisation", "completion", "digits", "movielens-generated", "digits-7-4-2", "movielens-generated-4-2", "hierarchy"} {
		row, ok := times[name]
		switch {
		case !ok:
			t.Errorf("times.tsv: no row for %s", name)
		case row["status"] != "done":
			t.Errorf("times.tsv: %s: status %q, want done", name, row["status"])
		}
	}

	// The tiny factorisation (30 x 30, L = 3) at 10% flips: the fit
	// removes most of the noise, so the reconstruction's error against the
	// noise-free matrix is below the flip rate, and the error against the
	// noisy data it saw is close to the flip rate.
	fact := readTSV(t, filepath.Join(out, "factorisation.tsv"))
	r := fact["tiny"]
	if r == nil || r["flip"] != "0.10" {
		t.Fatalf("factorisation.tsv: first tiny row %v, want flip 0.10", r)
	}
	if e := num(t, r, "error_mean"); e >= 0.1 {
		t.Errorf("factorisation at flip 0.10: reconstruction error %g, want below the flip rate", e)
	}
	if e := num(t, r, "observed_error_mean"); math.Abs(e-0.1) > 0.05 {
		t.Errorf("factorisation at flip 0.10: error on the observed data %g, want about 0.10", e)
	}
	for name, col := range map[string]string{"completion": "accuracy_mean", "movielens-generated": "accuracy_mean", "digits": "error_unseen_mean"} {
		for key, row := range readTSV(t, filepath.Join(out, name+".tsv")) {
			if v := num(t, row, col); v < 0 || v > 1 {
				t.Errorf("%s.tsv, %s: %s = %g, outside [0, 1]", name, key, col, v)
			}
		}
	}
	checkDensities(t, filepath.Join(out, "completion", "densities.tsv"))
	checkHierarchy(t, filepath.Join(out, "hierarchy"), filepath.Join(out, "hierarchy.tsv"))

	if _, err := run("--tiny"); err == nil {
		t.Error("run-all.sh into a folder with results and without --force: no error")
	}
}

// checkDensities asserts that, for each observed fraction, the densities
// of the right and of the wrong predictions of densities.tsv each
// integrate to 1 over the bins, and that the counts agree with them.
func checkDensities(t *testing.T, path string) {
	t.Helper()
	rows := readRows(t, path)
	sums := map[string][2]float64{}
	for _, r := range rows {
		w := num(t, r, "bin_hi") - num(t, r, "bin_lo")
		s := sums[r["observed"]]
		s[0] += num(t, r, "right_density") * w
		s[1] += num(t, r, "wrong_density") * w
		sums[r["observed"]] = s
	}
	if len(sums) != 2 {
		t.Fatalf("%s: %d observed fractions, want the tiny run's 2", path, len(sums))
	}
	for obs, s := range sums {
		for i, what := range []string{"right", "wrong"} {
			// A fraction with no wrong predictions has density 0 throughout.
			if math.Abs(s[i]-1) > 0.01 && s[i] != 0 {
				t.Errorf("%s, observed %s: %s density integrates to %g, want 1", path, obs, what, s[i])
			}
		}
		if s[0] == 0 {
			t.Errorf("%s, observed %s: no right prediction", path, obs)
		}
	}
}

// checkHierarchy asserts that hierarchy.sh's tiny run (L = 3, 4) wrote a
// hierarchy of sound rows (programs of the smallest L are roots, every
// other program is new or has a parent of the previous L linked with
// posterior mean at least ½, and holds some planted segment), its figures
// and images, and a summary in which both methods saw the same programs.
func checkHierarchy(t *testing.T, dir, summary string) {
	t.Helper()
	rows := readRows(t, filepath.Join(dir, "hierarchy.tsv"))
	Ls := map[string]bool{}
	for _, r := range rows {
		Ls[r["L"]] = true
		switch {
		case r["L"] == "3" && r["event"] != "root":
			t.Errorf("hierarchy.tsv: %s at the smallest L is %s, want root", r["program"], r["event"])
		case r["L"] == "4" && r["event"] != "new" &&
			(!strings.HasPrefix(r["parent"], "L03_") || num(t, r, "link") < 0.5 || num(t, r, "link") > 1):
			t.Errorf("hierarchy.tsv: %s (%s) has parent %q with link %s", r["program"], r["event"], r["parent"], r["link"])
		case r["segments"] == "" || (r["bar"] != "0" && r["bar"] != "1"):
			t.Errorf("hierarchy.tsv: %s: segments %q, bar %q", r["program"], r["segments"], r["bar"])
		}
	}
	if len(Ls) != 2 || len(rows) < 4 {
		t.Errorf("hierarchy.tsv: %d programs at L %v, want the tiny run's L = 3 and 4", len(rows), Ls)
	}
	for _, f := range []string{"figures/calc_hier.svg", "figures/calc_hier.png", "figures/hierarchy.svg", "figures/hierarchy-overlap.svg", "images/L03_chain1.png", "images/L04_chain1.svg", "segments.gmt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("hierarchy.sh: %v", err)
		}
	}
	programs := map[string]map[string]string{} // by L: programs_mean per method
	for _, r := range readRows(t, summary) {
		if programs[r["L"]] == nil {
			programs[r["L"]] = map[string]string{}
		}
		programs[r["L"]][r["method"]] = r["programs_mean"]
		if num(t, r, "bars_mean") > num(t, r, "programs_mean") || num(t, r, "programs_mean") < 1 {
			t.Errorf("hierarchy summary: %v", r)
		}
	}
	for L, m := range programs {
		if len(m) != 2 || m["fixed-codes"] != m["overlap"] {
			t.Errorf("hierarchy summary, L = %s: programs by method %v, want both methods over the same fits", L, m)
		}
	}
}

// readTSV reads a TSV with a header, keyed by its first column (the first
// row of each key).
func readTSV(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	header, rows := readTable(t, path)
	m := map[string]map[string]string{}
	for _, r := range rows {
		if _, ok := m[r[header[0]]]; !ok {
			m[r[header[0]]] = r
		}
	}
	return m
}

// readRows reads a TSV with a header as one map per row.
func readRows(t *testing.T, path string) []map[string]string {
	t.Helper()
	_, rows := readTable(t, path)
	return rows
}

// readTable reads a TSV's header and its rows, each a map from the
// header's names.
func readTable(t *testing.T, path string) ([]string, []map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = '\t'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) < 2 {
		t.Fatalf("%s: %d lines, want a header and rows", path, len(recs))
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, name := range recs[0] {
			row[name] = rec[i]
		}
		rows = append(rows, row)
	}
	return recs[0], rows
}

// num parses column col of row as a number.
func num(t *testing.T, row map[string]string, col string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(row[col], 64)
	if err != nil {
		t.Fatalf("column %s of %v: %v", col, row, err)
	}
	return v
}
