package ingest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/ingest/internal/h5gen"
	"scpipe/shard"
)

// TestNamesNoReaderCanHold: a barcode or gene name that a shard folder or
// a reader downstream cannot hold (invalid UTF-8, a NUL, a carriage return
// or another control character, a bidirectional override, more than
// shard.MaxNameBytes bytes) is refused before anything is written, naming
// the side file and its line (issue 44 items 5, 6, 8, 10). 0xE9 once
// passed every command and failed anndata.read_h5ad; a carriage return
// was refused only when the shards were written, naming their line 1 for
// the input's line 3; a 2 MB name was ingested and then failed fit. Names
// that the tables downstream cannot hold unchanged are refused too (item
// 9): a leading =, +, - or @ (a spreadsheet's formula), and a comma or a
// semicolon in a gene (the separators of enrich's lists).
func TestNamesNoReaderCanHold(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("A", shard.MaxNameBytes+1)
	for _, tc := range []struct {
		name, file string
		line       int // the line changed, from 1
		field      string
		want       string
	}{
		{"invalid UTF-8", "barcodes.tsv", 3, "BC2\xe9-1", "not valid UTF-8 (byte 0xE9"},
		{"NUL", "barcodes.tsv", 2, "BC\x001-1", "control character U+0000"},
		{"carriage return", "barcodes.tsv", 3, "BC\r2-1", "control character U+000D"},
		{"escape in a symbol", "features.tsv", 4, "G3\tgene\x1b[31m\tGene Expression", "gene name \"gene\\x1b[31m\": holds the control character U+001B"},
		{"C1 control", "features.tsv", 2, "G1\tgene\u0085\tGene Expression", "control character U+0085"},
		{"right-to-left override", "features.tsv", 1, "G0\tS100A9\u202e\tGene Expression", "bidirectional control U+202E"},
		{"too long", "features.tsv", 2, "G1\t" + long + "\tGene Expression", "4097 bytes long: names are at most 4096 bytes"},
		{"a formula", "barcodes.tsv", 2, "=HYPERLINK(1)", "begins with \"=\": a spreadsheet"},
		{"a minus", "features.tsv", 3, "-G2\tgene2\tGene Expression", "begins with \"-\""},
		{"a list separator", "features.tsv", 2, "G1\tgene,1\tGene Expression", "holds \",\", which separates the genes"},
		{"a semicolon", "features.tsv", 2, "G;1\tgene1\tGene Expression", "gene id \"G;1\": holds"},
	} {
		dir := mtxFolder(t, goodMTX, 4, 3, false, true)
		path := filepath.Join(dir, tc.file)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		lines[tc.line-1] = tc.field + "\n"
		if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "s")
		opt := exact(dir, out)
		opt.MinCellFrac = 0
		_, err = Run(context.Background(), opt)
		where := path + " line " + string(rune('0'+tc.line))
		if err == nil || !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q and %q", tc.name, err, where, tc.want)
		}
		assertNoOutput(t, out)
	}
}

// TestLongNameInH5AD: an AnnData file whose var name is 2 MB (h5ad names
// had no limit) is refused naming the file and the gene; one at the limit
// is ingested and read back (the shard reader once stopped at 1 MiB, after
// ingest had written the shards).
func TestLongNameInH5AD(t *testing.T) {
	t.Parallel()
	write := func(name string) string {
		p := filepath.Join(t.TempDir(), "long.h5ad")
		err := h5gen.WriteRaw(p, []h5gen.RawDataset{
			{Path: "/X/data", Values: []float64{3, 1, 7, 1, 2}},
			{Path: "/X/indices", Values: []int64{0, 1, 2, 0, 3}},
			{Path: "/X/indptr", Values: []int64{0, 2, 3, 5}},
			{Path: "/obs/_index", Values: names("BC", 3), VLen: true},
			{Path: "/var/_index", Values: []string{"CD3E", "CD4", name, "Cd8a"}, VLen: true},
		}, []h5gen.RawAttr{
			{Path: "/X", Name: "encoding-type", Value: "csr_matrix"},
			{Path: "/X", Name: "shape", Value: []int64{3, 4}},
			{Path: "/obs", Name: "_index", Value: "_index"},
			{Path: "/var", Name: "_index", Value: "_index"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write(strings.Repeat("G", 2<<20))
	out := filepath.Join(t.TempDir(), "s")
	opt := exact(bad, out)
	opt.MinCellFrac = 0
	_, err := Run(context.Background(), opt)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "gene id 3") || !strings.Contains(err.Error(), "2097152 bytes long") {
		t.Errorf("a 2 MB gene name: %v, want the file, the gene and its length named", err)
	}
	assertNoOutput(t, out)
	edge := strings.Repeat("G", shard.MaxNameBytes)
	opt = exact(write(edge), filepath.Join(t.TempDir(), "s"))
	opt.MinCellFrac = 0
	_, s := ingest(t, opt)
	if ids := s.Manifest().GeneIDs; len(ids) != 4 || ids[2] != edge {
		t.Errorf("a name of %d bytes: gene ids read back %d", shard.MaxNameBytes, len(ids))
	}
}
