package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"scpipe/ingest/internal/h5gen"
)

// assertNoOutput checks that out does not exist and that no temporary folder
// was left beside it.
func assertNoOutput(t *testing.T, out string) {
	t.Helper()
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		t.Errorf("output %s left behind (stat: %v)", out, err)
	}
	entries, err := os.ReadDir(filepath.Dir(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), filepath.Base(out)) {
			t.Errorf("%s left beside the output", e.Name())
		}
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// mtxFolder writes a 10x v3-style folder holding matrix (gzipped when gz),
// features and barcodes for a genes × cells matrix; empty side contents are
// not written.
func mtxFolder(t *testing.T, matrix string, genes, cells int, gz bool, withBarcodes bool) string {
	t.Helper()
	dir := t.TempDir()
	var feat, bcs strings.Builder
	for g := range genes {
		fmt.Fprintf(&feat, "G%d\tgene%d\tGene Expression\n", g, g)
	}
	for c := range cells {
		fmt.Fprintf(&bcs, "BC%d-1\n", c)
	}
	write := func(name, s string) {
		b := []byte(s)
		if gz {
			name += ".gz"
			b = gzipBytes(t, b)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("matrix.mtx", matrix)
	write("features.tsv", feat.String())
	if withBarcodes {
		write("barcodes.tsv", bcs.String())
	}
	return dir
}

// goodMTX is a 4 genes × 3 cells matrix; every gene is in at least one cell.
const goodMTX = `%%MatrixMarket matrix coordinate integer general
%metadata_json: {"format_version": 2}
4 3 5
1 1 3
2 1 1
3 2 7
4 3 2
1 3 1
`

// tenxCSC is a valid 4 genes × 3 cells matrix for the HDF5 cases.
func tenxCSC() h5gen.CSC {
	return h5gen.CSC{
		Genes: 4, Cells: 3,
		Indptr:  []int64{0, 2, 3, 5},
		Indices: []int64{0, 1, 2, 0, 3},
		Data:    []float64{3, 1, 7, 1, 2},
	}
}

func names(prefix string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return s
}

// writeTenXV3 writes m as a 10x v3 file, with float64 data so that NaN and
// negative values can be stored.
func writeTenXV3(t *testing.T, m h5gen.CSC) string {
	t.Helper()
	return writeTenXV3Chunked(t, m, 4)
}

// writeTenXV3Chunked is writeTenXV3 in chunks of chunk elements.
func writeTenXV3Chunked(t *testing.T, m h5gen.CSC, chunk int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "filtered_feature_bc_matrix.h5")
	types := make([]string, m.Genes)
	for i := range types {
		types[i] = geneExpression
	}
	err := h5gen.WriteTenXV3(p, m, names("G", m.Genes), names("gene", m.Genes), types, names("GRCh38-", m.Genes)[:m.Genes], names("BC", m.Cells),
		h5gen.Options{DataType: "float64", Chunk: chunk})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGoodGenerated is the control for TestBadInput: the generated inputs,
// unbroken, ingest to the same matrix.
func TestGoodGenerated(t *testing.T) {
	t.Parallel()
	inputs := []string{
		mtxFolder(t, goodMTX, 4, 3, true, true),
		mtxFolder(t, goodMTX, 4, 3, false, true),
		writeTenXV3(t, tenxCSC()),
	}
	for _, in := range inputs {
		rep, s := ingest(t, exact(in, filepath.Join(t.TempDir(), "s")))
		if rep.CellsIn != 3 || rep.GenesIn != 4 || rep.NNZ != 5 || rep.ValueSum != 14 || s.Manifest().Ones != 5 {
			t.Errorf("%s: %+v", in, rep)
		}
		for _, bit := range [][2]int{{0, 0}, {0, 1}, {1, 2}, {2, 0}, {2, 3}} {
			if !s.X().At(bit[0], bit[1]) {
				t.Errorf("%s: bit %v not set", in, bit)
			}
		}
	}
}

// TestBadInput: each broken input gives an error naming the file and the
// problem, and leaves no output.
func TestBadInput(t *testing.T) {
	t.Parallel()
	replace := func(old, new string) string { return strings.Replace(goodMTX, old, new, 1) }
	truncated := func() string {
		dir := mtxFolder(t, goodMTX, 4, 3, true, true)
		p := filepath.Join(dir, "matrix.mtx.gz")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b[:len(b)*2/3], 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	textH5 := func() string {
		p := filepath.Join(t.TempDir(), "counts.h5")
		if err := os.WriteFile(p, []byte("gene,cell,count\nA,B,1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tenx := func(edit func(*h5gen.CSC)) func() string {
		return func() string {
			m := tenxCSC()
			edit(&m)
			return writeTenXV3(t, m)
		}
	}
	h5ad := func(edit func(*h5gen.CSR)) func() string {
		return func() string {
			x := h5gen.CSR{Rows: 3, Cols: 4, Indptr: []int64{0, 2, 3, 5}, Indices: []int64{0, 1, 2, 0, 3}, Data: []float64{3, 1, 7, 1, 2}}
			edit(&x)
			p := filepath.Join(t.TempDir(), "adata.h5ad")
			if err := h5gen.WriteH5ADCSR(p, x, names("BC", 3), names("gene", 4), h5gen.Options{DataType: "float64"}); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	noX := func() string {
		p := filepath.Join(t.TempDir(), "empty.h5ad")
		err := h5gen.WriteRaw(p, []h5gen.RawDataset{
			{Path: "/obs/_index", Values: names("BC", 3), VLen: true},
			{Path: "/var/_index", Values: names("gene", 4), VLen: true},
		}, []h5gen.RawAttr{{Path: "/obs", Name: "_index", Value: "_index"}, {Path: "/var", Name: "_index", Value: "_index"}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name  string
		input func() string
		opt   func(*Options)
		file  string // the file the error must name
		want  []string
	}{
		{"truncated gzip", truncated, nil, "matrix.mtx.gz", []string{"truncated or corrupt gzip"}},
		// A layer names a matrix of an AnnData file; elsewhere it was
		// ignored, and the user's counts layer silently became X.
		{"layer of an MTX folder", func() string { return mtxFolder(t, goodMTX, 4, 3, false, true) }, func(o *Options) { o.Layer = "counts" },
			"", []string{`--layer "counts"`, "AnnData"}},
		{"layer of a bare mtx", func() string { return filepath.Join(mtxFolder(t, goodMTX, 4, 3, false, true), "matrix.mtx") }, func(o *Options) { o.Layer = "raw" },
			"", []string{`--layer "raw"`, "AnnData"}},
		{"layer of a 10x HDF5 file", tenx(func(*h5gen.CSC) {}), func(o *Options) { o.Layer = "counts" },
			"", []string{`--layer "counts"`, "AnnData"}},
		{"header count too high", func() string { return mtxFolder(t, replace("4 3 5", "4 3 7"), 4, 3, true, true) }, nil,
			"matrix.mtx.gz", []string{"declares 7 entries", "has 5"}},
		{"header count too low", func() string { return mtxFolder(t, replace("4 3 5", "4 3 4"), 4, 3, false, true) }, nil,
			"matrix.mtx", []string{"line 8", "more entries than the 4"}},
		{"mtx column out of range", func() string { return mtxFolder(t, replace("4 3 2", "4 9 2"), 4, 3, true, true) }, nil,
			"matrix.mtx.gz", []string{"line 7", "column 9 out of range 1..3"}},
		{"mtx row zero", func() string { return mtxFolder(t, replace("2 1 1", "0 1 1"), 4, 3, true, true) }, nil,
			"matrix.mtx.gz", []string{"line 5", "row 0 out of range 1..4"}},
		{"mtx negative", func() string { return mtxFolder(t, replace("3 2 7", "3 2 -7"), 4, 3, false, true) }, nil,
			"matrix.mtx", []string{"line 6", "negative value -7"}},
		{"mtx NaN", func() string {
			return mtxFolder(t, strings.Replace(replace("3 2 7", "3 2 nan"), "integer", "real", 1), 4, 3, false, true)
		}, nil, "matrix.mtx", []string{"line 6", "NaN"}},
		{"mtx fraction in integer matrix", func() string { return mtxFolder(t, replace("3 2 7", "3 2 7.5"), 4, 3, false, true) }, nil,
			"matrix.mtx", []string{"line 6", "integer matrix"}},
		{"mtx garbage", func() string { return mtxFolder(t, replace("3 2 7", "3 two 7"), 4, 3, false, true) }, nil,
			"matrix.mtx", []string{"line 6", "bad entry"}},
		// Refused rather than read with a warning: without its banner the
		// file does not say whether it is coordinate or array, integer or
		// real, general or symmetric, and each changes what the numbers mean.
		{"mtx without banner", func() string { return mtxFolder(t, strings.SplitN(goodMTX, "\n", 2)[1], 4, 3, false, true) }, nil,
			"matrix.mtx", []string{"line 1", "%%MatrixMarket banner"}},
		{"mtx.gz without banner", func() string { return mtxFolder(t, strings.SplitN(goodMTX, "\n", 3)[2], 4, 3, true, true) }, nil,
			"matrix.mtx.gz", []string{"line 1", "%%MatrixMarket banner"}},
		{"bare mtx without banner", func() string {
			return filepath.Join(mtxFolder(t, strings.SplitN(goodMTX, "\n", 2)[1], 4, 3, false, true), "matrix.mtx")
		}, nil, "matrix.mtx", []string{"no %%MatrixMarket banner"}},
		{"mtx array format", func() string { return mtxFolder(t, replace("coordinate", "array"), 4, 3, false, true) }, nil,
			"matrix.mtx", []string{"line 1", "array"}},
		{"genes file too short", func() string { return mtxFolder(t, replace("4 3 5", "5 3 5"), 4, 3, true, true) }, nil,
			"features.tsv.gz", []string{"4 lines, want 5"}},
		{"missing barcodes", func() string { return mtxFolder(t, goodMTX, 4, 3, true, false) }, nil,
			"", []string{"missing barcodes.tsv"}},
		{"mtx empty", func() string {
			return mtxFolder(t, "%%MatrixMarket matrix coordinate integer general\n4 3 0\n", 4, 3, true, true)
		}, nil, "matrix.mtx.gz", []string{"empty matrix"}},
		{"mtx repeated entry", func() string {
			return mtxFolder(t, strings.Replace(replace("4 3 5", "4 3 6"), "2 1 1\n", "2 1 1\n2 1 4\n", 1), 4, 3, false, true)
		}, nil, "matrix.mtx", []string{"1 entry repeats a cell and gene", "cell BC0-1", "sum_duplicates"}},
		{"mtx repeated entry out of order", func() string {
			return mtxFolder(t, replace("4 3 5", "4 3 7")+"3 2 1\n2 1 5\n", 4, 3, true, true)
		}, nil, "matrix.mtx.gz", []string{"2 entries repeat a cell and gene", "cell BC0-1"}},
		// The hostile test run's MTX folders (issue 30): a size line of 2
		// billion rows exhausted memory from a 41 KB file; 1e20, duplicate
		// barcodes and two matrix files were accepted without a word.
		{"size line of 2 billion genes", func() string { return mtxFolder(t, replace("4 3 5", "2000000000 3 5"), 4, 3, true, true) }, nil,
			"features.tsv.gz", []string{"4 lines, want 2000000000"}},
		{"size line of 2 billion cells", func() string { return mtxFolder(t, replace("4 3 5", "4 2000000000 5"), 4, 3, false, true) }, nil,
			"barcodes.tsv", []string{"3 lines, want 2000000000"}},
		{"bare mtx of 2 billion cells", func() string {
			return filepath.Join(mtxFolder(t, replace("4 3 5", "4 2000000000 5"), 4, 3, false, false), "matrix.mtx")
		}, nil, "matrix.mtx", []string{"line 3", "declares 2000000000 cells and no file names them", "--barcodes"}},
		{"integer 1e20", func() string { return mtxFolder(t, replace("3 2 7", "3 2 100000000000000000000"), 4, 3, false, true) }, nil,
			"matrix.mtx", []string{"line 6", "value 100000000000000000000 in an integer matrix", "2^53"}},
		{"integer 1e20 as float", func() string { return mtxFolder(t, replace("3 2 7", "3 2 1e20"), 4, 3, true, true) }, nil,
			"matrix.mtx.gz", []string{"line 6", "value 1e20 in an integer matrix"}},
		{"duplicate barcodes", func() string {
			dir := mtxFolder(t, goodMTX, 4, 3, false, true)
			if err := os.WriteFile(filepath.Join(dir, "barcodes.tsv"), []byte("BC0-1\nBC1-1\nBC0-1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, nil, "barcodes.tsv", []string{`barcode "BC0-1" names two cells (cells 1 and 3)`}},
		{"h5 duplicate barcodes", func() string {
			p := filepath.Join(t.TempDir(), "filtered_feature_bc_matrix.h5")
			types := []string{geneExpression, geneExpression, geneExpression, geneExpression}
			if err := h5gen.WriteTenXV3(p, tenxCSC(), names("G", 4), names("gene", 4), types, names("GRCh38-", 4),
				[]string{"BC0", "BC1", "BC1"}, h5gen.Options{DataType: "float64"}); err != nil {
				t.Fatal(err)
			}
			return p
		}, nil,
			"filtered_feature_bc_matrix.h5", []string{"names two cells (cells 2 and 3)"}},
		{"matrix.mtx and matrix.mtx.gz", func() string {
			dir := mtxFolder(t, goodMTX, 4, 3, true, true)
			if err := os.WriteFile(filepath.Join(dir, "matrix.mtx"), []byte(goodMTX), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, nil, "", []string{"both matrix.mtx.gz and matrix.mtx"}},
		{"features.tsv.gz and genes.tsv", func() string {
			dir := mtxFolder(t, goodMTX, 4, 3, true, true)
			if err := os.WriteFile(filepath.Join(dir, "genes.tsv"), []byte("G0\nG1\nG2\nG3\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, nil, "", []string{"both features.tsv.gz and genes.tsv"}},
		{"text named .h5", textH5, nil, "counts.h5", []string{"not an HDF5 file"}},
		{"every gene filtered", func() string { return mtxFolder(t, goodMTX, 4, 3, true, true) },
			func(o *Options) { o.MinCellFrac = 0.9 }, "matrix.mtx.gz", []string{"every gene filtered out", "at least 3 of 3 cells"}},
		{"min cells above all", func() string { return mtxFolder(t, goodMTX, 4, 3, true, true) },
			func(o *Options) { o.MinCells = 4 }, "matrix.mtx.gz", []string{"every gene filtered out"}},
		{"h5 indptr vs shape", tenx(func(m *h5gen.CSC) { m.Cells = 4 }), nil,
			"filtered_feature_bc_matrix.h5", []string{"indptr", "inconsistent with shape"}},
		{"h5 indptr vs data length", tenx(func(m *h5gen.CSC) { m.Indptr[3] = 6 }), nil,
			"filtered_feature_bc_matrix.h5", []string{"indptr ends at 6", "5 entries"}},
		{"h5 indptr decreasing", tenx(func(m *h5gen.CSC) { m.Indptr[1] = 4 }), nil,
			"filtered_feature_bc_matrix.h5", []string{"decreases"}},
		{"h5 index out of range", tenx(func(m *h5gen.CSC) { m.Indices[4] = 4 }), nil,
			"filtered_feature_bc_matrix.h5", []string{"/matrix/indices[4] = 4 out of range 0..3"}},
		{"h5 negative", tenx(func(m *h5gen.CSC) { m.Data[2] = -1.5 }), nil,
			"filtered_feature_bc_matrix.h5", []string{"/matrix/data[2]", "negative value -1.5", "--layer"}},
		{"h5 NaN", tenx(func(m *h5gen.CSC) { m.Data[0] = math.NaN() }), nil,
			"filtered_feature_bc_matrix.h5", []string{"/matrix/data[0]", "NaN"}},
		{"h5 infinity", tenx(func(m *h5gen.CSC) { m.Data[1] = math.Inf(1) }), nil,
			"filtered_feature_bc_matrix.h5", []string{"/matrix/data[1]", "+Inf"}},
		{"h5 empty", tenx(func(m *h5gen.CSC) { m.Indptr, m.Indices, m.Data = []int64{0, 0, 0, 0}, []int64{}, []float64{} }), nil,
			"filtered_feature_bc_matrix.h5", []string{"empty matrix"}},
		{"h5ad indptr vs shape", h5ad(func(x *h5gen.CSR) { x.Rows = 2 }), nil, "adata.h5ad", []string{"/X/indptr", "inconsistent with shape"}},
		{"h5ad index out of range", h5ad(func(x *h5gen.CSR) { x.Indices[1] = 7 }), nil, "adata.h5ad", []string{"/X/indices[1] = 7 out of range 0..3"}},
		{"h5ad negative", h5ad(func(x *h5gen.CSR) { x.Data[3] = -2 }), nil, "adata.h5ad", []string{"negative", "--layer"}},
		{"h5ad repeated entry", h5ad(func(x *h5gen.CSR) { x.Indices[4] = 0 }), nil, "adata.h5ad", []string{"1 entry repeats", "cell BC2"}},
		{"h5ad missing layer", h5ad(func(*h5gen.CSR) {}), func(o *Options) { o.Layer = "counts" }, "adata.h5ad", []string{`no layer "counts"`}},
		{"h5ad without X", noX, nil, "empty.h5ad", []string{"empty matrix", "no X"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.input()
			out := filepath.Join(t.TempDir(), "shards")
			opt := exact(in, out)
			if c.opt != nil {
				c.opt(&opt)
			}
			_, err := Run(context.Background(), opt)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			t.Log(msg)
			named := in // the folder, or the file itself
			if fi, err := os.Stat(in); err == nil && fi.IsDir() && c.file != "" {
				named = filepath.Join(in, c.file)
			}
			if !strings.HasPrefix(msg, "ingest: ") || !strings.Contains(msg, named) {
				t.Errorf("error %q does not name %s", msg, named)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			assertNoOutput(t, out)
		})
	}
}

// TestTenXV3Genome: in a v3 file whose features span two genomes, Genome
// keeps one genome's features and counts the others as dropped; an unknown
// genome is an error listing those present.
func TestTenXV3Genome(t *testing.T) {
	t.Parallel()
	m := tenxCSC()
	p := filepath.Join(t.TempDir(), "barnyard.h5")
	types := []string{geneExpression, geneExpression, geneExpression, geneExpression}
	genomes := []string{"GRCh38", "mm10", "GRCh38", "mm10"}
	if err := h5gen.WriteTenXV3(p, m, names("G", 4), names("gene", 4), types, genomes, names("BC", 3), h5gen.Options{}); err != nil {
		t.Fatal(err)
	}
	opt := exact(p, filepath.Join(t.TempDir(), "s"))
	opt.Genome = "mm10"
	rep, s := ingest(t, opt)
	if rep.GenesOut != 2 || rep.DroppedByGenome != 2 || s.Manifest().GeneIDs[0] != "G1" || s.Manifest().Source.Genome != "mm10" {
		t.Errorf("kept %d genes (%v), dropped %d by genome", rep.GenesOut, s.Manifest().GeneIDs, rep.DroppedByGenome)
	}
	// Gene 1 is set in cell 0 only, gene 3 in cell 2 only.
	if !s.X().At(0, 0) || !s.X().At(2, 1) || s.Manifest().Ones != 2 {
		t.Errorf("wrong bits: %d ones", s.Manifest().Ones)
	}
	opt.Genome, opt.Output = "hg19", filepath.Join(t.TempDir(), "t")
	if _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "GRCh38, mm10") {
		t.Errorf("unknown genome: error %v", err)
	}
	assertNoOutput(t, opt.Output)
}

// TestBareMTX: a Matrix Market file under any name, gzip detected from
// content, with GenesFile and BarcodesFile, gives the folder's shards.
func TestBareMTX(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(sharedData(t), "seurat-testdata", "cr3.0")
	bare := filepath.Join(t.TempDir(), "counts.txt")
	copyFile(t, filepath.Join(dir, "matrix.mtx.gz"), bare)
	_, ref := ingest(t, exact(dir, filepath.Join(t.TempDir(), "ref")))
	opt := exact(bare, filepath.Join(t.TempDir(), "bare"))
	opt.GenesFile, opt.BarcodesFile = filepath.Join(dir, "features.tsv.gz"), filepath.Join(dir, "barcodes.tsv.gz")
	_, s := ingest(t, opt)
	a, b := ref.Manifest(), s.Manifest()
	ab, bb := barcodes(t, ref), barcodes(t, s)
	if strings.Join(a.GeneIDs, ",") != strings.Join(b.GeneIDs, ",") || strings.Join(ab, ",") != strings.Join(bb, ",") || a.Ones != b.Ones {
		t.Fatalf("bare file: genes %v barcodes %v ones %d; folder: %v %v %d", b.GeneIDs, bb, b.Ones, a.GeneIDs, ab, a.Ones)
	}
	for c := range a.Cells {
		for g := range a.Genes {
			if ref.X().At(c, g) != s.X().At(c, g) {
				t.Fatalf("bit (%d, %d) differs", c, g)
			}
		}
	}
	// Without side files the names are numbers.
	opt = exact(bare, filepath.Join(t.TempDir(), "nameless"))
	_, s = ingest(t, opt)
	if m, bcs := s.Manifest(), barcodes(t, s); m.GeneIDs[0] != "1" || bcs[4] != "5" {
		t.Errorf("generated names %v %v", m.GeneIDs, bcs)
	}
}

// TestH5ADFeatureColumns: an h5ad whose var holds feature_types (as
// anndata 0.8+ writes it, a categorical) and genome (plain strings) is
// filtered by --feature-type and --genome as a 10x file is; codes outside
// the categories are an error naming the column.
func TestH5ADFeatureColumns(t *testing.T) {
	t.Parallel()
	write := func(codes []int32) string {
		p := filepath.Join(t.TempDir(), "cite.h5ad")
		err := h5gen.WriteRaw(p, []h5gen.RawDataset{
			{Path: "/X/data", Values: []float64{3, 1, 7, 1, 2}},
			{Path: "/X/indices", Values: []int64{0, 1, 2, 0, 3}},
			{Path: "/X/indptr", Values: []int64{0, 2, 3, 5}},
			{Path: "/obs/_index", Values: names("BC", 3), VLen: true},
			{Path: "/var/_index", Values: []string{"CD3E", "CD4", "CD3-TotalSeqB", "Cd8a"}, VLen: true},
			{Path: "/var/feature_types/categories", Values: []string{"Antibody Capture", "Gene Expression"}, VLen: true},
			{Path: "/var/feature_types/codes", Values: codes},
			{Path: "/var/genome", Values: []string{"GRCh38", "GRCh38", "", "mm10"}, VLen: true},
		}, []h5gen.RawAttr{
			{Path: "/X", Name: "encoding-type", Value: "csr_matrix"},
			{Path: "/X", Name: "shape", Value: []int64{3, 4}},
			{Path: "/obs", Name: "_index", Value: "_index"},
			{Path: "/var", Name: "_index", Value: "_index"},
			{Path: "/var/feature_types", Name: "encoding-type", Value: "categorical"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	in := write([]int32{1, 1, 0, 1})
	for _, tc := range []struct {
		featureType, genome string
		want                []string
	}{
		{geneExpression, "", []string{"CD3E", "CD4", "Cd8a"}},
		{"", "", []string{"CD3E", "CD4", "CD3-TotalSeqB", "Cd8a"}},
		{"Antibody Capture", "", []string{"CD3-TotalSeqB"}},
		{geneExpression, "mm10", []string{"Cd8a"}},
	} {
		opt := DefaultOptions()
		opt.Input, opt.Output = in, filepath.Join(t.TempDir(), "s")
		opt.FeatureType, opt.Genome = tc.featureType, tc.genome
		_, s := ingest(t, opt)
		if got := s.Manifest().GeneIDs; !slices.Equal(got, tc.want) {
			t.Errorf("feature type %q genome %q: genes %v, want %v", tc.featureType, tc.genome, got, tc.want)
		}
	}
	bad := write([]int32{1, 1, 5, 1})
	_, err := Run(context.Background(), exact(bad, filepath.Join(t.TempDir(), "bad")))
	if err == nil || !strings.Contains(err.Error(), "/var/feature_types/codes[2] = 5") || !strings.Contains(err.Error(), bad) {
		t.Errorf("codes outside the categories: error %v", err)
	}
}

// TestFirstBadEntry: in a file read in ranges on all cores, of which two
// hold a bad entry, the error names the first in the file, however the
// ranges' reads interleave.
func TestFirstBadEntry(t *testing.T) {
	defer func(m int64) { minRange = m }(minRange)
	minRange = 4096 // eight ranges of 4096 entries
	m := h5gen.CSC{Genes: 100, Cells: 3000, Indptr: []int64{0}}
	for c := range m.Cells {
		for g := c % 7; g < m.Genes; g += 10 {
			m.Indices = append(m.Indices, int64(g))
			m.Data = append(m.Data, 1)
		}
		m.Indptr = append(m.Indptr, int64(len(m.Indices)))
	}
	m.Data[9000], m.Indices[20000] = -1, 100
	p := writeTenXV3Chunked(t, m, 1024)
	for range 5 {
		_, err := Run(context.Background(), exact(p, filepath.Join(t.TempDir(), "s")))
		if err == nil || !strings.Contains(err.Error(), "/matrix/data[9000]") {
			t.Fatalf("error %v, want one about /matrix/data[9000]", err)
		}
	}
}

// TestFileHasher wants the SHA-256 of the file whether or not the hash
// was started before result asks for it, and a cancel that returns (an
// error from result after it) whether or not it was.
func TestFileHasher(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.h5")
	data := bytes.Repeat([]byte("0123456789abcdef"), 200_000) // several reads
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	for _, tc := range []struct {
		name          string
		start, cancel bool
	}{
		{"started", true, false},
		{"never started", false, false},
		{"cancelled before start", false, true},
		{"cancelled after start", true, true},
	} {
		h := hashFile(path)
		if tc.start {
			h.start()
		}
		if tc.cancel {
			h.cancel()
			if _, err := h.result(); !tc.start && err == nil {
				t.Errorf("%s: result after cancel: no error", tc.name)
			}
			continue
		}
		got, err := h.result()
		if err != nil || got != want {
			t.Errorf("%s: result = %q, %v; want %q", tc.name, got, err, want)
		}
		h.cancel() // as close does after a complete hash
	}
}

// TestRepeatedGeneIDsWarned: a features file that repeats a gene id is
// ingested (some references do) with a warning naming the id and both
// genes, which joins by id would confuse; unique ids warn of nothing.
func TestRepeatedGeneIDsWarned(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, features, want string
	}{
		{"unique", "G0\tgene0\tGene Expression\nG1\tgene1\tGene Expression\nG2\tgene2\tGene Expression\nG3\tgene3\tGene Expression\n", ""},
		{"repeated", "G0\tgene0\tGene Expression\nG1\tgene1\tGene Expression\nG0\tgene0\tGene Expression\nG3\tgene3\tGene Expression\n", `id=G0 genes="1 and 3"`},
	} {
		dir := mtxFolder(t, goodMTX, 4, 3, false, true)
		if err := os.WriteFile(filepath.Join(dir, "features.tsv"), []byte(tc.features), 0o644); err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		opt := exact(dir, filepath.Join(t.TempDir(), "shards"))
		opt.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if _, err := Run(context.Background(), opt); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if warned := strings.Contains(log.String(), "gene id names two genes"); warned != (tc.want != "") || !strings.Contains(log.String(), tc.want) {
			t.Errorf("%s: log %q, want a warning saying %q", tc.name, log.String(), tc.want)
		}
	}
}

// TestSideFilesBOM: a UTF-8 byte-order mark at the head of a side file
// (a barcodes.tsv or features.tsv saved from a spreadsheet, with CRLF
// line ends) is dropped, gzipped or not: it stuck to the first barcode and
// the first gene id, so that joins by barcode or id missed them.
func TestSideFilesBOM(t *testing.T) {
	t.Parallel()
	for _, gz := range []bool{false, true} {
		dir := mtxFolder(t, goodMTX, 4, 3, false, false)
		write := func(name, text string) {
			b := []byte("\ufeff" + strings.ReplaceAll(text, "\n", "\r\n"))
			if gz {
				name, b = name+".gz", gzipBytes(t, b)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Remove(filepath.Join(dir, "features.tsv")); err != nil {
			t.Fatal(err)
		}
		write("features.tsv", "G0\tgene0\tGene Expression\nG1\tgene1\tGene Expression\nG2\tgene2\tGene Expression\nG3\tgene3\tGene Expression\n")
		write("barcodes.tsv", "BC0-1\nBC1-1\nBC2-1\n")
		opt := exact(dir, filepath.Join(t.TempDir(), "out"))
		opt.MinCellFrac = 0
		_, s := ingest(t, opt)
		bcs, err := s.Barcodes()
		if err != nil {
			t.Fatal(err)
		}
		if ids := s.Manifest().GeneIDs; bcs[0] != "BC0-1" || ids[0] != "G0" {
			t.Errorf("gzip %v: first barcode %q, first gene id %q; want BC0-1 and G0", gz, bcs[0], ids[0])
		}
	}
}
