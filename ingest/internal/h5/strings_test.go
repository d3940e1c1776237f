package h5

import (
	"path/filepath"
	"testing"
)

func TestStrings(t *testing.T) {
	dir := dataDir(t)
	tests := []struct {
		file, path string
		n          int
		first      string
	}{
		{"brain1m-10k-subset/derived_v2_filtered_gene_bc_matrices_h5.h5", "/mm10/barcodes", 10000, "AAACCTGAGATAGGAG-1"},
		{"brain1m-10k-subset/derived_v2_filtered_gene_bc_matrices_h5.h5", "/mm10/genes", 1000, "ENSMUSG00000051951"},
		{"brain1m-10k-subset/derived_v2_filtered_gene_bc_matrices_h5.h5", "/mm10/gene_names", 1000, "Xkr4"},
		{"brain1m-10k-subset/derived_anndata080_gzip.h5ad", "/var/_index", 1000, "Xkr4"},                         // vlen, chunked
		{"anndata-h5ad/v0.11.4/adata.h5ad", "/obs/_index", 10, "0"},                                              // vlen, contiguous
		{"anndata-h5ad/v0.7.0/adata.h5ad", "/obs/_index", 30, "cell0"},                                           // vlen, LZF
		{"anndata-h5ad/v0.7.8/adata.h5ad", "/var/_index", 20, "gene0"},                                           // vlen, LZF
		{"scanpy-10x/visium_data/2.1.0/raw_probe_bc_matrix.h5", "/matrix/features/name", 1000, "Itgb2l|2ef1e7b"}, // 256-byte fixed
		{"scp-500pbmc-v3/GSE164378_RNA_3P_P1_subsetted.h5", "/matrix/features/id", 50, "NEXN"},
		{"seurat-testdata/visium/filtered_feature_bc_matrix.h5", "/matrix/barcodes", 2695, "AAACAAGTATCTCCCA-1"},
	}
	for _, tc := range tests {
		t.Run(tc.file+tc.path, func(t *testing.T) {
			f, err := Open(filepath.Join(dir, tc.file), 4)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ss, err := f.Strings(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) != tc.n || ss[0] != tc.first {
				t.Fatalf("got %d strings starting %q, want %d starting %q", len(ss), ss[0], tc.n, tc.first)
			}
			for i, s := range ss {
				if s == "" {
					t.Fatalf("string %d is empty", i)
				}
			}
		})
	}
}

func TestCompoundStringsAndAttrs(t *testing.T) {
	dir := dataDir(t)
	f, err := Open(filepath.Join(dir, "anndata-h5ad/v0.5.0/adata.h5ad"), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	obs, err := f.CompoundStrings("/obs", "index")
	if err != nil || len(obs) != 700 || obs[0] != "AAAGCCTGGCTAAC-1" {
		t.Fatalf("obs index: %d %v %v", len(obs), obs[:1], err)
	}
	if _, err := f.CompoundStrings("/obs", "nope"); err == nil {
		t.Error("missing compound field: no error")
	}
	if s, ok, err := f.AttrString("/raw.X", "h5sparse_format"); s != "csr" || !ok || err != nil {
		t.Errorf("h5sparse_format = %q %v %v", s, ok, err)
	}
	if v, ok, err := f.AttrInt64s("/raw.X", "h5sparse_shape"); !ok || err != nil || len(v) != 2 || v[0] != 700 || v[1] != 765 {
		t.Errorf("h5sparse_shape = %v %v %v", v, ok, err)
	}
	if _, ok, err := f.AttrString("/raw.X", "absent"); ok || err != nil {
		t.Errorf("absent attribute: ok=%v err=%v", ok, err)
	}
	// Dense chunked 2-D X (700 x 765, chunks 44 x 96) read against
	// row-by-row reads, which take the N-D clipping path differently.
	d, err := f.Dataset("/X")
	if err != nil {
		t.Fatal(err)
	}
	all := make([]float32, d.Len())
	if err := d.ReadFloat32(0, all); err != nil {
		t.Fatal(err)
	}
	row := make([]float32, 765+13)
	for _, r := range []int64{0, 43, 44, 699 - 1} {
		if err := d.ReadFloat32(r*765+5, row); err != nil {
			t.Fatal(err)
		}
		for j, v := range row {
			if v != all[r*765+5+int64(j)] {
				t.Fatalf("row %d col %d: %v vs %v", r, j, v, all[r*765+5+int64(j)])
			}
		}
	}
	compareWithLib(t, filepath.Join(dir, "anndata-h5ad/v0.5.0/adata.h5ad"), "/X", f32ToF64(all))

	g, err := Open(filepath.Join(dir, "scanpy-10x/10x_data/3.0.0/filtered_feature_bc_matrix.h5"), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	kids, err := g.Children("/matrix")
	if err != nil || len(kids) != 6 || kids[0].Name != "barcodes" || !g.IsGroup("/matrix/features") || g.IsGroup("/matrix/data") {
		t.Errorf("Children(/matrix) = %v, %v", kids, err)
	}
	if s, ok, err := g.AttrString("/", "filetype"); s != "matrix" || !ok || err != nil { // vlen string attribute
		t.Errorf("filetype = %q %v %v", s, ok, err)
	}
}

func f32ToF64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
