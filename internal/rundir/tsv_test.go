package rundir

import (
	"encoding/csv"
	"strings"
	"testing"
)

// TestTSVField: a field is quoted exactly when it holds a quote, a tab or
// a line break, and a CSV reader of the dialect pandas uses (Go's
// encoding/csv with a tab for the comma) reads every field back as it was.
func TestTSVField(t *testing.T) {
	t.Parallel()
	fields := []string{"AAAC-1", `"AAAC-1`, `a"b`, `"`, "", "a\tb", "a\nb", "a\r\nb", "S100A9 (0.61)", "x,y;z", " lead", "=1+1"}
	want := []string{"AAAC-1", `"""AAAC-1"`, `"a""b"`, `""""`, "", "\"a\tb\"", "\"a\nb\"", "\"a\r\nb\"", "S100A9 (0.61)", "x,y;z", " lead", "=1+1"}
	for i, f := range fields {
		if got := TSVField(f); got != want[i] {
			t.Errorf("TSVField(%q) = %q, want %q", f, got, want[i])
		}
	}
	r := csv.NewReader(strings.NewReader(TSVLine(fields...) + TSVLine("last")))
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', false, -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || len(recs[0]) != len(fields) {
		t.Fatalf("read back %d lines, the first of %d fields; want 2 and %d", len(recs), len(recs[0]), len(fields))
	}
	for i, f := range fields {
		// encoding/csv, like pandas, turns \r\n inside a quoted field into \n.
		if w := strings.ReplaceAll(f, "\r\n", "\n"); recs[0][i] != w {
			t.Errorf("field %d read back as %q, want %q", i, recs[0][i], w)
		}
	}
}
