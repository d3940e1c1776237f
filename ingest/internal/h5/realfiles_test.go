package h5

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/scigolib/hdf5"
)

// dataDir returns ../shared/data relative to the repository root, skipping
// the test when it is absent.
func dataDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared test data not found at %s (expected ../shared/data beside the repository): %v", dir, err)
	}
	return dir
}

// countMatrix describes a sparse matrix group and the README's figures.
type countMatrix struct {
	file    string
	group   string
	nnz     int64
	sum     float64 // NaN: not stated
	shape   [2]int64
	libWork bool // scigolib's own Read works on these datasets
}

var countMatrices = []countMatrix{
	{"brain1m-10k-subset/derived_v2_filtered_gene_bc_matrices_h5.h5", "/mm10", 691914, 1597698, [2]int64{1000, 10000}, true},
	{"brain1m-10k-subset/derived_anndata080.h5ad", "/X", 691914, 1597698, [2]int64{10000, 1000}, true},
	{"brain1m-10k-subset/derived_anndata080_gzip.h5ad", "/X", 691914, 1597698, [2]int64{10000, 1000}, true},
	{"scanpy-10x/10x_data/1.2.0/filtered_gene_bc_matrices_h5.h5", "/hg19_chr21", 12, 12, [2]int64{343, 12}, true},
	{"scanpy-10x/10x_data/1.2.0/multiple_genomes.h5", "/hg19_chr21", 12, 12, [2]int64{343, 12}, true},
	{"scanpy-10x/10x_data/1.2.0/multiple_genomes.h5", "/another_genome", 12, 13, [2]int64{343, 12}, true},
	{"scanpy-10x/10x_data/3.0.0/filtered_feature_bc_matrix.h5", "/matrix", 23866, 41549, [2]int64{507, 1107}, true},
	{"scanpy-10x/visium_data/1.0.0/filtered_feature_bc_matrix.h5", "/matrix", 656, 932, [2]int64{100, 100}, true},
	{"scanpy-10x/visium_data/2.1.0/raw_probe_bc_matrix.h5", "/matrix", 858, 3372, [2]int64{1000, 4987}, true},
	{"scp-500pbmc-v3/500_PBMC_3p_LT_Chromium_X_50genes/filtered_feature_bc_matrix.h5", "/matrix", 6280, 274980, [2]int64{50, 587}, true},
	{"scp-500pbmc-v3/500_PBMC_3p_LT_Chromium_X_50genes/filtered_feature_bc_matrix_272barcodes.h5", "/matrix", 2876, math.NaN(), [2]int64{50, 272}, true},
	{"scp-500pbmc-v3/GSE164378_RNA_3P_P1_subsetted.h5", "/matrix", 1113, math.NaN(), [2]int64{50, 200}, true},
	{"scp-500pbmc-v3/GSE164378_RNA_ADT_3P_P1_subsetted.h5", "/matrix", 6819, 155996, [2]int64{80, 200}, true},
	{"seurat-testdata/visium/filtered_feature_bc_matrix.h5", "/matrix", 50355, 132231, [2]int64{100, 2695}, true},
	{"anndata-h5ad/v0.5.0/adata.h5ad", "/raw.X", 174400, math.NaN(), [2]int64{700, 765}, true},
	{"anndata-h5ad/v0.7.0/adata.h5ad", "/X", -1, math.NaN(), [2]int64{30, 20}, false},
	{"anndata-h5ad/v0.7.0/adata.h5ad", "/raw/X", -1, math.NaN(), [2]int64{30, 40}, false},
	{"anndata-h5ad/v0.7.8/adata.h5ad", "/X", -1, math.NaN(), [2]int64{30, 20}, false},
	{"anndata-h5ad/v0.7.8/adata.h5ad", "/raw/X", -1, math.NaN(), [2]int64{30, 40}, false},
}

func TestCountMatrices(t *testing.T) {
	dir := dataDir(t)
	for _, tc := range countMatrices {
		t.Run(tc.file+tc.group, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, tc.file)
			f, err := Open(path, 4)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			data := readAllF64(t, f, tc.group+"/data")
			indices := readAllI64(t, f, tc.group+"/indices")
			indptr := readAllI64(t, f, tc.group+"/indptr")
			if tc.nnz >= 0 && int64(len(data)) != tc.nnz {
				t.Errorf("nnz = %d, want %d", len(data), tc.nnz)
			}
			if len(indices) != len(data) {
				t.Fatalf("len(indices) = %d, len(data) = %d", len(indices), len(data))
			}
			sum := 0.0
			for _, v := range data {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("non-finite value %v", v)
				}
				sum += v
			}
			if !math.IsNaN(tc.sum) && math.Abs(sum-tc.sum) > 1e-6*tc.sum {
				t.Errorf("sum(data) = %v, want %v", sum, tc.sum)
			}
			// 10x files store genes x cells column-major (indptr over cells);
			// h5ad CSR has indptr over rows.
			var major, minor int64
			if f.Exists(tc.group + "/shape") {
				shape := readAllI64(t, f, tc.group+"/shape")
				if shape[0] != tc.shape[0] || shape[1] != tc.shape[1] {
					t.Errorf("shape = %v, want %v", shape, tc.shape)
				}
				major, minor = shape[1], shape[0]
			} else {
				major, minor = tc.shape[0], tc.shape[1]
				if s, ok, err := f.AttrInt64s(tc.group, "shape"); err != nil {
					t.Fatal(err)
				} else if ok && (s[0] != tc.shape[0] || s[1] != tc.shape[1]) {
					t.Errorf("shape attribute = %v, want %v", s, tc.shape)
				}
			}
			if tc.libWork {
				compareWithLib(t, path, tc.group+"/data", data)
				compareWithLib(t, path, tc.group+"/indices", i64ToF64(indices))
				compareWithLib(t, path, tc.group+"/indptr", i64ToF64(indptr))
			}
			checkCompressed(t, indptr, indices, major, minor)
		})
	}
}

// checkCompressed checks the CSR/CSC invariants.
func checkCompressed(t *testing.T, indptr, indices []int64, major, minor int64) {
	t.Helper()
	if int64(len(indptr)) != major+1 {
		t.Fatalf("len(indptr) = %d, want %d", len(indptr), major+1)
	}
	if indptr[0] != 0 || indptr[major] != int64(len(indices)) {
		t.Fatalf("indptr runs %d..%d, want 0..%d", indptr[0], indptr[major], len(indices))
	}
	// Indices need not be sorted (some writers leave them unsorted) but
	// must be distinct within a slice.
	seen := make(map[int64]bool)
	for i := int64(0); i < major; i++ {
		if indptr[i] > indptr[i+1] {
			t.Fatalf("indptr decreases at %d", i)
		}
		clear(seen)
		for p := indptr[i]; p < indptr[i+1]; p++ {
			if indices[p] < 0 || indices[p] >= minor {
				t.Fatalf("index %d at %d out of range 0..%d", indices[p], p, minor)
			}
			if seen[indices[p]] {
				t.Fatalf("index %d repeated in slice %d", indices[p], i)
			}
			seen[indices[p]] = true
		}
	}
}

func readAllF64(t *testing.T, f *File, path string) []float64 {
	t.Helper()
	d, err := f.Dataset(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, d.Len())
	if err := d.ReadFloat64(0, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func readAllI64(t *testing.T, f *File, path string) []int64 {
	t.Helper()
	d, err := f.Dataset(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, d.Len())
	if err := d.ReadInt64(0, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func i64ToF64(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// compareWithLib checks values against scigolib's own reader.
func compareWithLib(t *testing.T, file, path string, got []float64) {
	t.Helper()
	lf, err := hdf5.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	var want []float64
	lf.Walk(func(p string, o hdf5.Object) {
		if ds, ok := o.(*hdf5.Dataset); ok && p == path {
			want, err = ds.Read()
		}
	})
	if err != nil {
		t.Fatalf("scigolib reading %s: %v", path, err)
	}
	if len(want) != len(got) {
		t.Fatalf("%s: %d values, scigolib has %d", path, len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s[%d] = %v, scigolib has %v", path, i, got[i], want[i])
		}
	}
}
