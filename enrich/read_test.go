package enrich

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"scpipe/internal/testkit"
)

// TestReadOutput reads back what Run wrote for the fixed fit: the settings,
// every index row against the programs Run built, and the best terms of
// each program against the tests' results.
func TestReadOutput(t *testing.T) {
	t.Parallel()
	run, lib, dir := fixture(t)
	o := DefaultOptions()
	o.Run, o.Out, o.Libraries, o.Threshold = run, filepath.Join(dir, "out"), []string{lib}, 0.45
	rep, err := Run(context.Background(), o)
	must(t, err)
	out, err := ReadOutput(o.Out)
	must(t, err)
	if out.Run != run || out.Threshold != 0.45 || out.Background != backgroundKept || out.Organism != "mouse" ||
		!slices.Equal(out.Libraries, []string{lib}) || len(out.Notes) != len(rep.Notes) {
		t.Errorf("settings: run %q threshold %v background %q organism %q libraries %v, %d notes (want %d)",
			out.Run, out.Threshold, out.Background, out.Organism, out.Libraries, len(out.Notes), len(rep.Notes))
	}
	var progs []*Program
	for _, lv := range rep.Levels {
		for i := range lv.Programs {
			progs = append(progs, &lv.Programs[i])
		}
	}
	if len(out.Index) != len(progs) {
		t.Fatalf("%d index rows, want %d", len(out.Index), len(progs))
	}
	for i, r := range out.Index {
		p := progs[i]
		stab := r.Stability == p.Stability || (math.IsNaN(r.Stability) && math.IsNaN(p.Stability))
		if r.Program != p.Name() || r.L != p.L || r.Code != p.Code || r.Status != p.Status || r.Genes != len(p.Genes) ||
			r.Unique != len(p.Unique) || r.Cells != p.Cells || r.CellFrac != p.CellFrac || !stab {
			t.Errorf("index row %d = %+v, program %s: %s, %d genes, %d unique, %d cells, stability %v", i, r, p.Name(),
				p.Status, len(p.Genes), len(p.Unique), p.Cells, p.Stability)
		}
		if (r.GenesFile == "") != (p.Status != StatusProgram) {
			t.Errorf("%s: genes file %q for a code of status %s", r.Program, r.GenesFile, p.Status)
		}
	}
	if len(out.Enrichment) != 1 || out.Enrichment[0].Library != "markers" {
		t.Fatalf("enrichment tables %+v, want markers", out.Enrichment)
	}
	for _, k := range []int{1, 2, 100} {
		terms, err := ReadTopTerms(out.Enrichment[0].Path, k)
		must(t, err)
		var want []Term
		for _, pt := range rep.Enrichment[0].Tests {
			for _, r := range pt.Results[:min(k, len(pt.Results))] {
				want = append(want, Term{Program: pt.Program.Name(), L: pt.Program.L, Code: pt.Program.Code, Query: pt.Query,
					Term: r.Term, Overlap: r.Overlap, SetSize: r.TermSize, P: r.P(), AdjP: r.Q()})
			}
		}
		if len(terms) != len(want) {
			t.Fatalf("k = %d: %d terms, want %d", k, len(terms), len(want))
		}
		for i, w := range want {
			g := terms[i]
			if g.Program != w.Program || g.L != w.L || g.Code != w.Code || g.Query != w.Query || g.Term != w.Term ||
				g.Overlap != w.Overlap || g.SetSize != w.SetSize || !close(g.P, w.P) || !close(g.AdjP, w.AdjP) ||
				len(g.Genes) != g.Overlap {
				t.Errorf("k = %d, term %d = %+v, want %+v", k, i, g, w)
			}
		}
	}
}

// close reports whether two p-values written and read back in the
// shortest form agree.
func close(a, b float64) bool { return a == b || math.Abs(a-b) <= 1e-15*math.Abs(b) }

// TestReadOutputErrors: a folder that is not an output of enrich, or a
// damaged one, is an error naming the file.
func TestReadOutputErrors(t *testing.T) {
	t.Parallel()
	run, lib, dir := fixture(t)
	o := DefaultOptions()
	o.Run, o.Out, o.Libraries = run, filepath.Join(dir, "out"), []string{lib}
	_, err := Run(context.Background(), o)
	must(t, err)
	copies := 0
	damage := func(name, text string) string {
		copies++
		d := filepath.Join(dir, fmt.Sprintf("damaged%d", copies))
		must(t, os.CopyFS(d, os.DirFS(o.Out)))
		must(t, os.WriteFile(filepath.Join(d, name), []byte(text), 0o644))
		return d
	}
	noLog := filepath.Join(dir, "nolog")
	must(t, os.CopyFS(noLog, os.DirFS(o.Out)))
	must(t, os.Remove(filepath.Join(noLog, LogFile)))
	for _, tc := range []struct {
		name, dir string
		want      []string
	}{
		{"not an output", run, []string{LogFile}},
		{"no log", noLog, []string{filepath.Join(noLog, LogFile)}},
		{"other log", damage(LogFile, "something else\nthreshold\t0.5\n"), []string{LogFile, "not a log of scpipe enrich"}},
		{"no threshold", damage(LogFile, "scpipe enrich\nrun\tx\n"), []string{LogFile, "no threshold"}},
		{"bad threshold", damage(LogFile, "scpipe enrich\nthreshold\thalf\n"), []string{LogFile, `threshold "half"`}},
		{"index header", damage(IndexFile, "L\tcode\n"), []string{IndexFile, "header"}},
		{"index row", damage(IndexFile, strings.Join(indexColumns, "\t")+"\n2\t1\tL02_code1\n"), []string{IndexFile, "line 2", "3 fields"}},
		{"index number", damage(IndexFile, strings.Join(indexColumns, "\t")+"\n2\tone\tL02_code1\tprogram\t1\t1\t1\t0.5\tNA\tNA\tNA\tNA\n"),
			[]string{IndexFile, "line 2", "column code"}},
	} {
		_, err := ReadOutput(tc.dir)
		testkit.ErrorSays(t, tc.name, err, tc.want)
	}
	table := filepath.Join(dir, "bad.tsv")
	must(t, os.WriteFile(table, []byte(strings.Join(enrichmentColumns, "\t")+"\nL02_code1\t2\t1\tall\tT\t3\t0.1\t0.1\t1\t1\tA\n"), 0o644))
	if _, err := ReadTopTerms(table, 3); err == nil || !strings.Contains(err.Error(), "bad.tsv line 2") || !strings.Contains(err.Error(), "Overlap") {
		t.Errorf("overlap without k/K: %v", err)
	}
}
