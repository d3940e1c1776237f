package h5gen

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// small is a 4-gene × 3-cell matrix whose middle cell is empty.
var small = CSC{Genes: 4, Cells: 3, Indptr: []int64{0, 2, 2, 5}, Indices: []int64{1, 3, 0, 2, 3}, Data: []float64{5, 1, 2, 7, 300}}

var (
	smallIDs      = []string{"ENSG01", "ENSG02", "ENSG03", "ENSG04"}
	smallNames    = []string{"Xkr4", "Gm1992", "Rp1", "Sox17"}
	smallBarcodes = []string{"AAACCTGAGAAACCAT-1", "AAACCTGAGAAACCGC-1", "AAACCTGAGAAACCTA-1"}
)

func i64f(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// checkStorage asserts the layout and filters of a numeric dataset.
func checkStorage(t *testing.T, path string, r *h5file, ds string, o Options) {
	t.Helper()
	info := r.info[ds]
	if chunked := strings.Contains(info, "chunked"); chunked != (o.Chunk > 0) {
		t.Errorf("%s: %q, want chunked=%v", ds, info, o.Chunk > 0)
	}
	var want []uint16
	if o.Shuffle {
		want = append(want, filterShuffle)
	}
	if o.Deflate > 0 {
		want = append(want, filterDeflate)
	}
	if got := filterIDs(t, path, r.addrs[ds]); !slices.Equal(got, want) {
		t.Errorf("%s: filters %v, want %v", ds, got, want)
	}
}

func TestTenXV2RoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    Options
		data string // type name scigolib reports
		idx  string
	}{
		{"contiguous", Options{}, "integer (size=4", "integer (size=8"},
		{"chunked", Options{Chunk: 2}, "integer (size=4", "integer (size=8"},
		{"chunk larger than data", Options{Chunk: 1000}, "integer (size=4", "integer (size=8"},
		{"shuffle deflate", Options{Chunk: 2, Deflate: 4, Shuffle: true}, "integer (size=4", "integer (size=8"},
		{"deflate only", Options{Chunk: 3, Deflate: 9}, "integer (size=4", "integer (size=8"},
		{"shuffle only", Options{Chunk: 2, Shuffle: true}, "integer (size=4", "integer (size=8"},
		{"float32 int32", Options{Chunk: 2, Deflate: 1, Shuffle: true, DataType: "float32", IndexType: "int32"}, "float (size=4", "integer (size=4"},
		{"float64", Options{DataType: "float64"}, "float (size=8", "integer (size=8"},
		{"int64", Options{DataType: "int64"}, "integer (size=8", "integer (size=8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "v2.h5")
			if err := WriteTenXV2(p, "mm10", small, smallIDs, smallNames, smallBarcodes, tc.o); err != nil {
				t.Fatal(err)
			}
			r := readBack(t, p)
			if r.version != 2 {
				t.Errorf("superblock version %d, want 2", r.version)
			}
			for ds, want := range map[string][]float64{
				"/mm10/data": small.Data, "/mm10/indices": i64f(small.Indices),
				"/mm10/indptr": i64f(small.Indptr), "/mm10/shape": {4, 3},
			} {
				if !slices.Equal(r.nums[ds], want) {
					t.Errorf("%s = %v, want %v", ds, r.nums[ds], want)
				}
			}
			for ds, want := range map[string][]string{"/mm10/genes": smallIDs, "/mm10/gene_names": smallNames, "/mm10/barcodes": smallBarcodes} {
				if !slices.Equal(r.strs[ds], want) {
					t.Errorf("%s = %q, want %q", ds, r.strs[ds], want)
				}
				if !strings.Contains(r.info[ds], "string") {
					t.Errorf("%s: %q, want fixed-length strings", ds, r.info[ds])
				}
			}
			if !strings.Contains(r.info["/mm10/barcodes"], "size=18 bytes") {
				t.Errorf("barcodes %q, want |S18", r.info["/mm10/barcodes"])
			}
			if !strings.Contains(r.info["/mm10/shape"], "integer (size=4") {
				t.Errorf("shape %q, want int32", r.info["/mm10/shape"])
			}
			if !strings.Contains(r.info["/mm10/data"], tc.data) || !strings.Contains(r.info["/mm10/indices"], tc.idx) || !strings.Contains(r.info["/mm10/indptr"], tc.idx) {
				t.Errorf("types: data %q indices %q indptr %q", r.info["/mm10/data"], r.info["/mm10/indices"], r.info["/mm10/indptr"])
			}
			for _, ds := range []string{"/mm10/data", "/mm10/indices", "/mm10/indptr"} {
				checkStorage(t, p, r, ds, tc.o)
			}
			if got := len(r.nums) + len(r.strs); got != 7 {
				t.Errorf("%d datasets, want 7", got)
			}
		})
	}
}

func TestDeflateShrinksCompressibleData(t *testing.T) {
	t.Parallel()
	n := 50000
	m := CSC{Genes: n, Cells: 1, Indptr: []int64{0, int64(n)}, Indices: make([]int64, n), Data: make([]float64, n)}
	for i := range n {
		m.Indices[i], m.Data[i] = int64(i), 1
	}
	ids := make([]string, n)
	dir := t.TempDir()
	size := map[bool]int64{}
	for _, deflate := range []bool{false, true} {
		o := Options{Chunk: 4096}
		if deflate {
			o.Deflate, o.Shuffle = 6, true
		}
		p := filepath.Join(dir, "f.h5")
		if err := WriteTenXV2(p, "g", m, ids, ids, []string{"A-1"}, o); err != nil {
			t.Fatal(err)
		}
		r := readBack(t, p)
		if !slices.Equal(r.nums["/g/indices"], i64f(m.Indices)) || !slices.Equal(r.nums["/g/data"], m.Data) {
			t.Fatalf("deflate=%v: values differ after reading back", deflate)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		size[deflate] = st.Size()
	}
	// The strings stay uncompressed; the 600 KB of indices and data should
	// shrink to a few KB under shuffle+deflate.
	if saved := size[false] - size[true]; saved < 570000 {
		t.Errorf("deflated file %d bytes, plain %d: saved %d, want ≥ 570000", size[true], size[false], saved)
	}
}

func TestTenXV2Multi(t *testing.T) {
	t.Parallel()
	other := CSC{Genes: 2, Cells: 3, Indptr: []int64{0, 1, 1, 1}, Indices: []int64{1}, Data: []float64{13}}
	p := filepath.Join(t.TempDir(), "multi.h5")
	err := writeTenXV2Multi(p, []GenomeMatrix{
		{Genome: "hg19_chr21", M: small, Genes: smallIDs, GeneNames: smallNames, Barcodes: smallBarcodes},
		{Genome: "another_genome", M: other, Genes: []string{"a", "b"}, GeneNames: []string{"A", "B"}, Barcodes: smallBarcodes},
	}, Options{Chunk: 2, Deflate: 1, Shuffle: true})
	if err != nil {
		t.Fatal(err)
	}
	r := readBack(t, p)
	if !r.groups["/hg19_chr21"] || !r.groups["/another_genome"] {
		t.Fatalf("groups %v, want both genomes", r.groups)
	}
	if got := r.nums["/another_genome/data"]; !slices.Equal(got, []float64{13}) {
		t.Errorf("another_genome data %v", got)
	}
	if got := r.nums["/another_genome/shape"]; !slices.Equal(got, []float64{2, 3}) {
		t.Errorf("another_genome shape %v", got)
	}
	if got := r.nums["/hg19_chr21/data"]; !slices.Equal(got, small.Data) {
		t.Errorf("hg19_chr21 data %v", got)
	}
}

func TestTenXV3RoundTrip(t *testing.T) {
	t.Parallel()
	empty := CSC{Genes: 4, Cells: 3, Indptr: []int64{0, 0, 0, 0}}
	types := []string{"Gene Expression", "Gene Expression", "Antibody Capture", "Gene Expression"}
	genomes := []string{"GRCh38", "GRCh38", "", "GRCh38"}
	for _, tc := range []struct {
		name string
		m    CSC
		o    Options
	}{
		{"counts", small, Options{Chunk: 4, Deflate: 4, Shuffle: true}},
		{"empty matrix", empty, Options{}},
		{"empty matrix chunked", empty, Options{Chunk: 8, Deflate: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "v3.h5")
			if err := WriteTenXV3(p, tc.m, smallIDs, smallNames, types, genomes, smallBarcodes, tc.o); err != nil {
				t.Fatal(err)
			}
			r := readBack(t, p)
			if !r.groups["/matrix/features"] {
				t.Fatalf("groups %v, want /matrix/features", r.groups)
			}
			for ds, want := range map[string][]float64{
				"/matrix/data": tc.m.Data, "/matrix/indices": i64f(tc.m.Indices),
				"/matrix/indptr": i64f(tc.m.Indptr), "/matrix/shape": {4, 3},
			} {
				if len(want) == 0 {
					want = []float64{}
					if !strings.Contains(r.info[ds], "[0]") {
						t.Errorf("%s: %q, want shape [0]", ds, r.info[ds])
					}
				}
				if !slices.Equal(r.nums[ds], want) {
					t.Errorf("%s = %v, want %v", ds, r.nums[ds], want)
				}
			}
			for ds, want := range map[string][]string{
				"/matrix/barcodes": smallBarcodes, "/matrix/features/id": smallIDs, "/matrix/features/name": smallNames,
				"/matrix/features/feature_type": types, "/matrix/features/genome": genomes,
			} {
				if !slices.Equal(r.strs[ds], want) {
					t.Errorf("%s = %q, want %q", ds, r.strs[ds], want)
				}
			}
		})
	}
}

func TestH5ADCSR(t *testing.T) {
	t.Parallel()
	x := CSR{Rows: 3, Cols: 4, Indptr: []int64{0, 2, 2, 5}, Indices: []int64{1, 3, 0, 2, 3}, Data: []float64{0.5, 1, 2, 7, 3.25}}
	cells := []string{"AAAC-1", "AAAG-1", "CCCC-1"}
	p := filepath.Join(t.TempDir(), "x.h5ad")
	if err := WriteH5ADCSR(p, x, cells, smallNames, Options{Chunk: 2, Deflate: 4, IndexType: "int32"}); err != nil {
		t.Fatal(err)
	}
	r := readBack(t, p)
	if !slices.Equal(r.nums["/X/data"], x.Data) || !slices.Equal(r.nums["/X/indices"], i64f(x.Indices)) || !slices.Equal(r.nums["/X/indptr"], i64f(x.Indptr)) {
		t.Errorf("X = %v %v %v", r.nums["/X/data"], r.nums["/X/indices"], r.nums["/X/indptr"])
	}
	if !strings.Contains(r.info["/X/data"], "float (size=4") || !strings.Contains(r.info["/X/indices"], "integer (size=4") {
		t.Errorf("types %q %q, want float32 data and int32 indices", r.info["/X/data"], r.info["/X/indices"])
	}
	if !slices.Equal(r.strs["/obs/_index"], cells) || !slices.Equal(r.strs["/var/_index"], smallNames) {
		t.Errorf("obs %q var %q", r.strs["/obs/_index"], r.strs["/var/_index"])
	}
	if !strings.Contains(r.info["/obs/_index"], "class_9") {
		t.Errorf("obs/_index %q, want variable-length strings", r.info["/obs/_index"])
	}
	want := map[string]map[string]any{
		"/X":   {"encoding-type": "csr_matrix", "encoding-version": "0.1.0", "shape": []int64{3, 4}},
		"/obs": {"_index": "_index", "encoding-type": "dataframe", "encoding-version": "0.2.0"},
		"/var": {"_index": "_index", "encoding-type": "dataframe", "encoding-version": "0.2.0"},
	}
	for obj, attrs := range want {
		for name, v := range attrs {
			got := r.attrs[obj][name]
			if s, ok := v.([]int64); ok {
				if g, ok := got.([]int64); !ok || !slices.Equal(g, s) {
					t.Errorf("%s@%s = %#v, want %v", obj, name, got, s)
				}
				continue
			}
			if got != v {
				t.Errorf("%s@%s = %#v, want %#v", obj, name, got, v)
			}
		}
	}
}

func TestWriteRawCraftsBadInput(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "bad.h5")
	nan := math.NaN()
	err := WriteRaw(p, []RawDataset{
		{Path: "/mm10/data", Values: []float32{1, -2, float32(nan)}, Options: Options{Chunk: 2, Deflate: 1}},
		{Path: "/mm10/indices", Values: []int32{0, 99, -1}},
		{Path: "/mm10/indptr", Values: []int64{0, 3}},
		{Path: "/mm10/shape", Values: []int32{4, 7}}, // indptr says 1 cell
		{Path: "/mm10/barcodes", Values: []string{"A-1"}},
		{Path: "/mm10/empty", Values: []float64{}},
		{Path: "/mm10/nostrings", Values: []string{}},
		{Path: "/obs/_index", Values: []string{"c1", "much longer name"}, VLen: true},
	}, []RawAttr{
		{Path: "/mm10/data", Name: "units", Value: "counts"},
		{Path: "/obs", Name: "encoding-type", Value: "dataframe"},
		{Path: "/uns", Name: "version", Value: int32(3)},
		{Path: "/mm10", Name: "weights", Value: []float64{0.5, nan}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := readBack(t, p)
	d := r.nums["/mm10/data"]
	if len(d) != 3 || d[0] != 1 || d[1] != -2 || !math.IsNaN(d[2]) {
		t.Errorf("data = %v, want [1 -2 NaN]", d)
	}
	if got := r.nums["/mm10/indices"]; !slices.Equal(got, []float64{0, 99, -1}) {
		t.Errorf("indices = %v", got)
	}
	if got := r.nums["/mm10/shape"]; !slices.Equal(got, []float64{4, 7}) {
		t.Errorf("shape = %v", got)
	}
	if got := r.nums["/mm10/empty"]; len(got) != 0 || !strings.Contains(r.info["/mm10/empty"], "[0]") {
		t.Errorf("empty = %v (%s)", got, r.info["/mm10/empty"])
	}
	if got := r.strs["/mm10/nostrings"]; len(got) != 0 {
		t.Errorf("nostrings = %q", got)
	}
	if _, ok := r.nums["/mm10/genes"]; ok {
		t.Error("an unlisted dataset was written")
	}
	if got := r.strs["/obs/_index"]; !slices.Equal(got, []string{"c1", "much longer name"}) {
		t.Errorf("obs/_index = %q", got)
	}
	if got := r.attrs["/mm10/data"]["units"]; got != "counts" {
		t.Errorf("data@units = %#v", got)
	}
	if !r.groups["/uns"] || r.attrs["/uns"]["version"] != int32(3) {
		t.Errorf("uns@version = %#v (groups %v)", r.attrs["/uns"]["version"], r.groups)
	}
	if w, ok := r.attrs["/mm10"]["weights"].([]float64); !ok || len(w) != 2 || w[0] != 0.5 || !math.IsNaN(w[1]) {
		t.Errorf("mm10@weights = %#v", r.attrs["/mm10"]["weights"])
	}
}

func TestErrorsLeaveNoFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "x.h5")
	nonInt := CSC{Genes: 1, Cells: 1, Indptr: []int64{0, 1}, Indices: []int64{0}, Data: []float64{0.5}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"root attribute", WriteRaw(p, []RawDataset{{Path: "/a", Values: []int32{1}}}, []RawAttr{{Path: "/", Name: "x", Value: "y"}}), "root"},
		{"attribute below a dataset", WriteRaw(p, []RawDataset{{Path: "/a", Values: []int32{1}}}, []RawAttr{{Path: "/a/b", Name: "x", Value: "y"}}), "/a"},
		{"relative path", WriteRaw(p, []RawDataset{{Path: "a", Values: []int32{1}}}, nil), "not absolute"},
		{"duplicate", WriteRaw(p, []RawDataset{{Path: "/a", Values: []int32{1}}, {Path: "/a", Values: []int32{1}}}, nil), "twice"},
		{"unsupported values", WriteRaw(p, []RawDataset{{Path: "/a", Values: []uint8{1}}}, nil), "unsupported"},
		{"non-integral int32", WriteTenXV2(p, "g", nonInt, []string{"a"}, []string{"a"}, []string{"b"}, Options{}), "not an int32"},
		{"bad data type", WriteTenXV2(p, "g", small, smallIDs, smallNames, smallBarcodes, Options{DataType: "int8"}), "DataType"},
		{"deflate without chunks", WriteTenXV2(p, "g", small, smallIDs, smallNames, smallBarcodes, Options{Deflate: 4}), "Chunk"},
		{"deflate level", WriteTenXV2(p, "g", small, smallIDs, smallNames, smallBarcodes, Options{Chunk: 1, Deflate: 10}), "Deflate"},
		{"index overflow", WriteTenXV2(p, "g", CSC{Genes: 1, Cells: 1, Indptr: []int64{0, 1}, Indices: []int64{1 << 40}, Data: []float64{1}}, []string{"a"}, []string{"a"}, []string{"b"}, Options{IndexType: "int32"}), "int32"},
		{"no genomes", writeTenXV2Multi(p, nil, Options{}), "no genomes"},
		{"zero cells", func() error { _, err := GenerateTenXV2(p, 10, 0, 0.1, 1, Options{}); return err }(), "positive"},
		{"density", func() error { _, err := GenerateTenXV2(p, 10, 10, 0.95, 1, Options{}); return err }(), "density"},
	}
	for _, tc := range tests {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, tc.err, tc.want)
		}
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("failed writes left %d files behind, e.g. %s", len(left), left[0].Name())
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    CSC
		want string // "" = valid
	}{
		{"valid", small, ""},
		{"empty", CSC{Genes: 2, Cells: 2, Indptr: []int64{0, 0, 0}}, ""},
		{"short indptr", CSC{Genes: 2, Cells: 2, Indptr: []int64{0, 0}}, "indptr has 2"},
		{"indptr start", CSC{Genes: 2, Cells: 1, Indptr: []int64{1, 1}}, "indptr[0]"},
		{"decreasing", CSC{Genes: 2, Cells: 2, Indptr: []int64{0, 1, 0}, Indices: []int64{0}, Data: []float64{1}}, "decreases"},
		{"lengths", CSC{Genes: 2, Cells: 1, Indptr: []int64{0, 1}, Indices: []int64{0}}, "1 indices and 0 values"},
		{"out of range", CSC{Genes: 2, Cells: 1, Indptr: []int64{0, 1}, Indices: []int64{2}, Data: []float64{1}}, "out of range"},
	}
	for _, tc := range tests {
		err := tc.m.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Validate() = %v, want %q", tc.name, err, tc.want)
		}
		x := CSR{Rows: tc.m.Cells, Cols: tc.m.Genes, Indptr: tc.m.Indptr, Indices: tc.m.Indices, Data: tc.m.Data}
		if (x.Validate() == nil) != (err == nil) {
			t.Errorf("%s: CSR.Validate() = %v, CSC.Validate() = %v", tc.name, x.Validate(), err)
		}
	}
}

func TestGenerateIsRealistic(t *testing.T) {
	t.Parallel()
	const genes, cells, density = 400, 500, 0.05
	m := generate(genes, cells, density, 7)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	want := density * genes * cells
	if n := float64(len(m.Data)); math.Abs(n-want) > 0.05*want {
		t.Errorf("nnz %v, want %v ± 5%%", n, want)
	}
	detected := make([]int, genes)
	for k, g := range m.Indices {
		detected[g]++
		if v := m.Data[k]; v < 1 || v != math.Trunc(v) {
			t.Fatalf("value %v is not a positive count", v)
		}
	}
	for j := range cells {
		if !slices.IsSorted(m.Indices[m.Indptr[j]:m.Indptr[j+1]]) {
			t.Fatalf("cell %d: gene indices not sorted", j)
		}
	}
	slices.Sort(detected)
	median, top := detected[genes/2], detected[genes-genes/100]
	if top < 8*max(median, 1) {
		t.Errorf("detections: median gene %d cells, 99th percentile %d: want rare and common genes", median, top)
	}
	if same := generate(genes, cells, density, 7); !slices.Equal(same.Indices, m.Indices) || !slices.Equal(same.Data, m.Data) {
		t.Error("same seed gave a different matrix")
	}
	if other := generate(genes, cells, density, 8); slices.Equal(other.Indices, m.Indices) {
		t.Error("different seeds gave the same matrix")
	}
	if z := generate(genes, cells, 0, 7); len(z.Data) != 0 {
		t.Errorf("density 0 gave %d nonzeros", len(z.Data))
	}
}

func TestGenerateTenXV2File(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "gen.h5")
	nnz, err := GenerateTenXV2(p, 300, 200, 0.1, 3, Options{Chunk: 1000, Deflate: 1, Shuffle: true})
	if err != nil {
		t.Fatal(err)
	}
	m := generate(300, 200, 0.1, 3)
	if nnz != int64(len(m.Data)) {
		t.Errorf("nnz %d, matrix has %d", nnz, len(m.Data))
	}
	r := readBack(t, p)
	g := "/" + generatedGenome
	if !slices.Equal(r.nums[g+"/data"], m.Data) || !slices.Equal(r.nums[g+"/indices"], i64f(m.Indices)) || !slices.Equal(r.nums[g+"/indptr"], i64f(m.Indptr)) {
		t.Error("file differs from the generated matrix")
	}
	bc := r.strs[g+"/barcodes"]
	if len(bc) != 200 || len(r.strs[g+"/genes"]) != 300 || len(r.strs[g+"/gene_names"]) != 300 {
		t.Fatalf("%d barcodes, %d genes", len(bc), len(r.strs[g+"/genes"]))
	}
	seen := map[string]bool{}
	for _, b := range bc {
		if len(b) != 18 || !strings.HasSuffix(b, "-1") || strings.Trim(b[:16], "ACGT") != "" || seen[b] {
			t.Fatalf("barcode %q malformed or repeated", b)
		}
		seen[b] = true
	}
}

func TestGzipToZlib(t *testing.T) {
	t.Parallel()
	for _, level := range []int{1, 4, 6, 9} {
		raw := bytes.Repeat([]byte("shuffle me "), 1000+level)
		var gz bytes.Buffer
		w, _ := gzip.NewWriterLevel(&gz, level)
		w.Write(raw)
		w.Close()
		z, err := gzipToZlib(gz.Bytes(), level)
		if err != nil {
			t.Fatal(err)
		}
		if len(z) != gz.Len()-12 {
			t.Errorf("level %d: zlib %d bytes, gzip %d: want 12 fewer", level, len(z), gz.Len())
		}
		zr, err := zlib.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		back, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(back, raw) {
			t.Errorf("level %d: zlib round trip failed: %v", level, err)
		}
		bad := bytes.Clone(gz.Bytes())
		bad[len(bad)-5]++
		if _, err := gzipToZlib(bad, level); err == nil {
			t.Errorf("level %d: corrupt trailer accepted", level)
		}
	}
}

// TestGenerateBig writes the ingest benchmark input (1e8 nonzeros) once and
// reports its cost; run with SCPIPE_BIG=1 (needs about 3 GB of memory and
// 1 GB of disk).
func TestGenerateBig(t *testing.T) {
	if os.Getenv("SCPIPE_BIG") != "1" {
		t.Skip("set SCPIPE_BIG=1 to generate the 1e8-nonzero benchmark input")
	}
	dir := os.Getenv("SCPIPE_BIG_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	p := filepath.Join(dir, "big_v2.h5")
	start := time.Now()
	nnz, err := GenerateTenXV2(p, 20000, 50000, 0.1, 1, Options{Chunk: 1 << 16, Deflate: 1, Shuffle: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d nonzeros, %.1f MB, written in %v", p, nnz, float64(st.Size())/1e6, time.Since(start).Round(time.Millisecond))
	if nnz < 1e8*0.95 {
		t.Errorf("nnz %d, want about 1e8", nnz)
	}
}
