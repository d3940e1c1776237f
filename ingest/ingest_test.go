package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"scpipe/shard"

	"scpipe/internal/testkit"
)

// sharedData returns the shared test data folder, skipping the test when it
// is absent (a checkout without ../shared beside it).
func sharedData(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared test data not found at %s (it lives beside the project as ../shared): %v", dir, err)
	}
	return dir
}

// exact returns options that keep every gene and cell, so that the shard
// holds exactly the input's nonzero pattern.
func exact(in, out string) Options {
	return Options{Input: in, Output: out}
}

// ingest runs opt and opens the result.
func ingest(t *testing.T, opt Options) (*Report, *shard.Shard) {
	t.Helper()
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatalf("Run(%s): %v", opt.Input, err)
	}
	s, err := shard.Open(opt.Output)
	if err != nil {
		t.Fatalf("opening shards of %s: %v", opt.Input, err)
	}
	t.Cleanup(func() { s.Close() })
	return rep, s
}

// barcodes reads the barcodes of shards s.
func barcodes(t *testing.T, s *shard.Shard) []string {
	t.Helper()
	bcs, err := s.Barcodes()
	if err != nil {
		t.Fatal(err)
	}
	return bcs
}

// TestSharedData ingests every matrix under ../shared/data and checks the
// shape, stored-entry count and value sum stated in the folders' READMEs.
// A sum of -1 means the README gives none.
func TestSharedData(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	cases := []struct {
		in            string
		genome, layer string
		format        Format
		genes, cells  int
		nnz           int64
		sum           float64
	}{
		{"scanpy-10x/10x_data/1.2.0/filtered_gene_bc_matrices_h5.h5", "", "", FormatTenXH5V2, 343, 12, 12, 12},
		{"scanpy-10x/10x_data/1.2.0/multiple_genomes.h5", "hg19_chr21", "", FormatTenXH5V2, 343, 12, -1, 12},
		{"scanpy-10x/10x_data/1.2.0/multiple_genomes.h5", "another_genome", "", FormatTenXH5V2, 343, 12, -1, 13},
		{"scanpy-10x/10x_data/1.2.0/filtered_gene_bc_matrices", "", "", FormatMTX, 343, 12, 12, 12},
		{"scanpy-10x/10x_data/1.2.0/filtered_gene_bc_matrices/hg19_chr21/matrix.mtx", "", "", FormatMTX, 343, 12, 12, 12},
		{"scanpy-10x/10x_data/3.0.0/filtered_feature_bc_matrix.h5", "", "", FormatTenXH5V3, 507, 1107, 23866, 41549},
		{"scanpy-10x/10x_data/3.0.0/filtered_feature_bc_matrix", "", "", FormatMTX, 507, 1107, 23866, 41549},
		{"scanpy-10x/10x_data/int-ids", "", "", FormatMTX, 6, 5, 3, -1},
		{"scanpy-10x/visium_data/1.0.0/filtered_feature_bc_matrix.h5", "", "", FormatTenXH5V3, 100, 100, 656, 932},
		{"scanpy-10x/visium_data/2.1.0/raw_probe_bc_matrix.h5", "", "", FormatTenXH5V3, 1000, 4987, 858, 3372},
		{"scp-500pbmc-v3/500_PBMC_3p_LT_Chromium_X_50genes/filtered_feature_bc_matrix.h5", "", "", FormatTenXH5V3, 50, 587, 6280, 274980},
		{"scp-500pbmc-v3/500_PBMC_3p_LT_Chromium_X_50genes/filtered_feature_bc_matrix", "", "", FormatMTX, 50, 587, 6280, 274980},
		{"scp-500pbmc-v3/500_PBMC_3p_LT_Chromium_X_50genes/filtered_feature_bc_matrix_272barcodes.h5", "", "", FormatTenXH5V3, 50, 272, 2876, -1},
		{"scp-500pbmc-v3/GSE164378_RNA_3P_P1_subsetted.h5", "", "", FormatTenXH5V3, 50, 200, 1113, -1},
		{"scp-500pbmc-v3/GSE164378_RNA_ADT_3P_P1_subsetted.h5", "", "", FormatTenXH5V3, 80, 200, 6819, 155996},
		{"seurat-testdata", "", "", FormatMTX, 240, 80, 4814, 23110},
		{"seurat-testdata/cr3.0", "", "", FormatMTX, 5, 5, 8, 80147},
		{"seurat-testdata/visium/filtered_feature_bc_matrix.h5", "", "", FormatTenXH5V3, 100, 2695, 50355, 132231},
		{"anndata-h5ad/v0.5.0/adata.h5ad", "", "raw", FormatH5AD, 765, 700, 174400, -1},
		{"anndata-h5ad/v0.7.0/adata.h5ad", "", "", FormatH5AD, 20, 30, -1, -1},
		{"anndata-h5ad/v0.7.8/adata.h5ad", "", "", FormatH5AD, 20, 30, -1, -1},
		{"anndata-h5ad/v0.7.8/adata.h5ad", "", "raw", FormatH5AD, 40, 30, -1, -1},
		{"brain1m-10k-subset/derived_v2_filtered_gene_bc_matrices_h5.h5", "", "", FormatTenXH5V2, 1000, 10000, 691914, 1597698},
		{"brain1m-10k-subset/derived_v2_filtered_gene_bc_matrices", "", "", FormatMTX, 1000, 10000, 691914, 1597698},
		{"brain1m-10k-subset/derived_v3_filtered_feature_bc_matrix", "", "", FormatMTX, 1000, 10000, 691914, 1597698},
		{"brain1m-10k-subset/derived_anndata080.h5ad", "", "", FormatH5AD, 1000, 10000, 691914, 1597698},
		{"brain1m-10k-subset/derived_anndata080_gzip.h5ad", "", "", FormatH5AD, 1000, 10000, 691914, 1597698},
	}
	for _, c := range cases {
		t.Run(c.in+"/"+c.genome+c.layer, func(t *testing.T) {
			t.Parallel()
			in := filepath.Join(data, c.in)
			opt := exact(in, filepath.Join(t.TempDir(), "shards"))
			opt.Genome, opt.Layer = c.genome, c.layer
			rep, s := ingest(t, opt)
			if rep.Format != c.format {
				t.Errorf("format %v, want %v", rep.Format, c.format)
			}
			if rep.CellsIn != c.cells || rep.GenesIn != c.genes {
				t.Errorf("input %d cells × %d genes, want %d × %d", rep.CellsIn, rep.GenesIn, c.cells, c.genes)
			}
			if c.nnz >= 0 && rep.NNZ != c.nnz {
				t.Errorf("%d stored entries, want %d", rep.NNZ, c.nnz)
			}
			if c.sum >= 0 && math.Abs(rep.ValueSum-c.sum) > 1e-6*c.sum {
				t.Errorf("value sum %v, want %v", rep.ValueSum, c.sum)
			}
			// No filter: everything kept, and every stored entry of these
			// files is a positive count, so each is a one.
			m := s.Manifest()
			if m.Cells != c.cells || m.Genes != c.genes || rep.CellsOut != c.cells || rep.GenesOut != c.genes {
				t.Errorf("shard %d × %d, report %d × %d, want %d × %d", m.Cells, m.Genes, rep.CellsOut, rep.GenesOut, c.cells, c.genes)
			}
			if m.Ones != rep.Ones || rep.Ones != rep.OnesIn || rep.Ones != rep.NNZ {
				t.Errorf("ones: shard %d, report %d, before filters %d, stored %d: want all equal", m.Ones, rep.Ones, rep.OnesIn, rep.NNZ)
			}
			if bcs := barcodes(t, s); len(bcs) != c.cells || len(m.GeneIDs) != c.genes {
				t.Errorf("%d barcodes and %d gene ids, want %d and %d", len(bcs), len(m.GeneIDs), c.cells, c.genes)
			}
			if m.Source.Format != c.format.String() || len(m.Source.SHA256) != 64 || m.Source.Bytes <= 0 {
				t.Errorf("manifest source %+v", m.Source)
			}
			if err := s.Verify(context.Background(), 0); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSHA256 checks the manifest's hash against one computed independently,
// for an HDF5 input (hashed in the background) and a gzip MTX (hashed while
// read).
func TestSHA256(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	for _, c := range []struct{ in, hashed string }{
		{"scp-500pbmc-v3/GSE164378_RNA_3P_P1_subsetted.h5", "scp-500pbmc-v3/GSE164378_RNA_3P_P1_subsetted.h5"},
		{"seurat-testdata/cr3.0", "seurat-testdata/cr3.0/matrix.mtx.gz"},
	} {
		rep, _ := ingest(t, exact(filepath.Join(data, c.in), filepath.Join(t.TempDir(), "s")))
		want := sha256File(t, filepath.Join(data, c.hashed))
		if rep.SHA256 != want {
			t.Errorf("%s: sha256 %s, want %s", c.in, rep.SHA256, want)
		}
	}
}

// readCSV reads a dense integer matrix.
func readCSV(t *testing.T, path string) [][]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row []int
		for _, v := range strings.Split(strings.TrimRight(sc.Text(), ","), ",") {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			row = append(row, n)
		}
		out = append(out, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// TestExpectedMatrix compares the shards of the 500-PBMC matrix, from HDF5
// and from MTX, bit by bit with cellranger's dense mat2csv output (genes ×
// cells): bit (cell, gene) is 1 exactly when the count is positive. At
// thresholds 0 and 2 the binarisation is checked too.
func TestExpectedMatrix(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(sharedData(t), "scp-500pbmc-v3", "500_PBMC_3p_LT_Chromium_X_50genes")
	want := readCSV(t, filepath.Join(dir, "expected_matrix.csv"))
	ids := readLines(t, filepath.Join(dir, "expected_feature_ids.csv"))
	bcs := readLines(t, filepath.Join(dir, "expected_barcodes.csv"))
	for _, in := range []string{"filtered_feature_bc_matrix.h5", "filtered_feature_bc_matrix"} {
		for _, thr := range []float64{0, 2} {
			opt := exact(filepath.Join(dir, in), filepath.Join(t.TempDir(), "s"))
			opt.Threshold = thr
			_, s := ingest(t, opt)
			m := s.Manifest()
			if len(want) != m.Genes || len(want[0]) != m.Cells {
				t.Fatalf("%s: shard %d cells × %d genes, expected matrix %d genes × %d cells", in, m.Cells, m.Genes, len(want), len(want[0]))
			}
			if strings.Join(m.GeneIDs, ",") != strings.Join(ids, ",") || strings.Join(barcodes(t, s), ",") != strings.Join(bcs, ",") {
				t.Errorf("%s: gene ids or barcodes differ from expected_*.csv", in)
			}
			x := s.X()
			var ones int64
			for g, row := range want {
				for c, v := range row {
					if got := x.At(c, g); got != (float64(v) > thr) {
						t.Fatalf("%s threshold %v: bit (cell %d, gene %d) = %v, count %d", in, thr, c, g, got, v)
					}
					if float64(v) > thr {
						ones++
					}
				}
			}
			if m.Ones != ones {
				t.Errorf("%s threshold %v: %d ones, want %d", in, thr, m.Ones, ones)
			}
		}
	}
}

// dataFiles returns the contents of a shard folder's bit files (X and Xᵀ).
func dataFiles(t *testing.T, dir string, s *shard.Shard) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range s.Manifest().Files {
		if f.Kind != shard.KindX && f.Kind != shard.KindXT {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = b
	}
	if len(out) == 0 {
		t.Fatalf("%s: no data files", dir)
	}
	return out
}

// TestBrainSubsetIdentical ingests the same 10k-cell brain matrix from five
// copies in four formats, with the default gene filter, and requires
// byte-identical bit files.
func TestBrainSubsetIdentical(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(sharedData(t), "brain1m-10k-subset")
	inputs := []string{
		"derived_v2_filtered_gene_bc_matrices_h5.h5",
		"derived_v2_filtered_gene_bc_matrices/mm10",
		"derived_v3_filtered_feature_bc_matrix",
		"derived_anndata080.h5ad",
		"derived_anndata080_gzip.h5ad",
	}
	var ref map[string][]byte
	var refRep *Report
	for _, in := range inputs {
		opt := DefaultOptions()
		opt.Input, opt.Output = filepath.Join(dir, in), filepath.Join(t.TempDir(), "s")
		rep, s := ingest(t, opt)
		files := dataFiles(t, opt.Output, s)
		if ref == nil {
			ref, refRep = files, rep
			if rep.GenesOut >= rep.GenesIn || rep.GenesOut == 0 {
				t.Fatalf("default filter kept %d of %d genes; the test needs some dropped", rep.GenesOut, rep.GenesIn)
			}
			continue
		}
		if rep.GenesOut != refRep.GenesOut || rep.Ones != refRep.Ones {
			t.Errorf("%s: %d genes, %d ones; %s: %d genes, %d ones", in, rep.GenesOut, rep.Ones, inputs[0], refRep.GenesOut, refRep.Ones)
		}
		if len(files) != len(ref) {
			t.Fatalf("%s: %d data files, %s: %d", in, len(files), inputs[0], len(ref))
		}
		for name, b := range ref {
			if !bytes.Equal(files[name], b) {
				t.Errorf("%s: %s differs from %s's", in, name, inputs[0])
			}
		}
	}
}

// TestGeneFilter checks the default filter (genes expressed in < 1% of
// cells dropped) against counts computed from the unfiltered shard, and the
// manifest's record of it; and MinCells and MinGenes likewise.
func TestGeneFilter(t *testing.T) {
	t.Parallel()
	in := filepath.Join(sharedData(t), "scanpy-10x", "10x_data", "3.0.0", "filtered_feature_bc_matrix.h5")
	// The filters are decided on the bits the default binarisation sets.
	all := exact(in, filepath.Join(t.TempDir(), "full"))
	all.Ambient = defaultAmbient
	_, full := ingest(t, all)
	fm := full.Manifest()
	cellsPerGene := make([]int, fm.Genes)
	genesPerCell := make([]int, fm.Cells)
	for c := range fm.Cells {
		for g := range fm.Genes {
			if full.X().At(c, g) {
				cellsPerGene[g]++
				genesPerCell[c]++
			}
		}
	}
	cases := []struct {
		name     string
		frac     float64
		minCells int
		minGenes int
	}{
		{"default 1%", defaultMinCellFrac, 0, 0},
		{"5%", 0.05, 0, 0},
		{"min cells 30", 0, 30, 0},
		{"min genes 40", 0, 0, 40},
		{"all three", 0.02, 25, 30},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := DefaultOptions()
			opt.Input, opt.Output = in, filepath.Join(t.TempDir(), "s")
			opt.MinCellFrac, opt.MinCells, opt.MinGenes = c.frac, c.minCells, c.minGenes
			rep, s := ingest(t, opt)
			var keptGenes, keptCells []int
			for g, n := range cellsPerGene {
				if float64(n) >= c.frac*float64(fm.Cells) && n >= c.minCells {
					keptGenes = append(keptGenes, g)
				}
			}
			for i, n := range genesPerCell {
				if n >= c.minGenes {
					keptCells = append(keptCells, i)
				}
			}
			m := s.Manifest()
			if m.Genes != len(keptGenes) || m.Cells != len(keptCells) {
				t.Fatalf("kept %d cells × %d genes, want %d × %d", m.Cells, m.Genes, len(keptCells), len(keptGenes))
			}
			if len(keptGenes) == fm.Genes && len(keptCells) == fm.Cells {
				t.Fatalf("case filters nothing")
			}
			f := m.Filters
			if f.GenesBefore != fm.Genes || f.GenesAfter != len(keptGenes) || f.CellsBefore != fm.Cells || f.CellsAfter != len(keptCells) ||
				f.MinCellFrac != c.frac || f.MinCells != c.minCells || f.MinGenes != c.minGenes || f.OnesBefore != fm.Ones {
				t.Errorf("manifest filters %+v", f)
			}
			bcs, fullBcs := barcodes(t, s), barcodes(t, full)
			var ones int64
			for i, c := range keptCells {
				for j, g := range keptGenes {
					want := full.X().At(c, g)
					if s.X().At(i, j) != want {
						t.Fatalf("bit (%d, %d) differs from input bit (%d, %d)", i, j, c, g)
					}
					if want {
						ones++
					}
				}
				if bcs[i] != fullBcs[c] {
					t.Fatalf("barcode %d = %s, want %s", i, bcs[i], fullBcs[c])
				}
			}
			if m.Ones != ones || rep.Ones != ones {
				t.Errorf("%d ones (report %d), want %d", m.Ones, rep.Ones, ones)
			}
			for j, g := range keptGenes {
				if m.GeneIDs[j] != fm.GeneIDs[g] {
					t.Fatalf("gene %d = %s, want %s", j, m.GeneIDs[j], fm.GeneIDs[g])
				}
			}
		})
	}
}

// TestMultiGenome: a v2 file with two genome groups needs Genome; the error
// lists the genomes.
func TestMultiGenome(t *testing.T) {
	t.Parallel()
	in := filepath.Join(sharedData(t), "scanpy-10x", "10x_data", "1.2.0", "multiple_genomes.h5")
	out := filepath.Join(t.TempDir(), "s")
	_, err := Run(context.Background(), exact(in, out))
	if err == nil || !strings.Contains(err.Error(), "hg19_chr21") || !strings.Contains(err.Error(), "another_genome") ||
		!strings.Contains(err.Error(), "--genome") || !strings.Contains(err.Error(), "multiple_genomes.h5") {
		t.Fatalf("error %v: want one naming the file, both genomes and --genome", err)
	}
	assertNoOutput(t, out)
	opt := exact(in, out)
	opt.Genome = "nope"
	if _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "another_genome") {
		t.Fatalf("unknown genome: error %v, want one listing the genomes", err)
	}
	opt.Genome = "another_genome"
	rep, s := ingest(t, opt)
	if rep.ValueSum != 13 || s.Manifest().Source.Genome != "another_genome" {
		t.Errorf("sum %v genome %q, want 13 and another_genome", rep.ValueSum, s.Manifest().Source.Genome)
	}
}

// TestFeatureType: the mixed Gene Expression + Antibody Capture file keeps
// only gene expression by default and reports the antibodies dropped.
func TestFeatureType(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	for _, c := range []struct {
		in              string
		ftype           string
		genes, dropped  int
		wantTypePresent string
	}{
		{"scp-500pbmc-v3/GSE164378_RNA_ADT_3P_P1_subsetted.h5", geneExpression, 50, 30, geneExpression},
		{"scp-500pbmc-v3/GSE164378_RNA_ADT_3P_P1_subsetted.h5", "Antibody Capture", 30, 50, "Antibody Capture"},
		{"seurat-testdata/cr3.0", geneExpression, 3, 2, geneExpression},
		{"seurat-testdata/cr3.0", "Antibody Capture", 2, 3, "Antibody Capture"},
	} {
		opt := exact(filepath.Join(data, c.in), filepath.Join(t.TempDir(), "s"))
		opt.FeatureType = c.ftype
		rep, s := ingest(t, opt)
		m := s.Manifest()
		if rep.GenesOut != c.genes || rep.DroppedByFeatureType != c.dropped || m.Filters.DroppedByFeatureType != c.dropped {
			t.Errorf("%s %q: kept %d, dropped %d (manifest %d); want %d, %d", c.in, c.ftype, rep.GenesOut, rep.DroppedByFeatureType, m.Filters.DroppedByFeatureType, c.genes, c.dropped)
		}
		for _, ft := range m.FeatureTypes {
			if ft != c.wantTypePresent {
				t.Fatalf("%s: kept a feature of type %q", c.in, ft)
			}
		}
		if m.Source.FeatureType != c.ftype {
			t.Errorf("manifest feature type %q", m.Source.FeatureType)
		}
	}
	// A type absent from the file is an error listing the types present.
	opt := exact(filepath.Join(data, "seurat-testdata/cr3.0"), filepath.Join(t.TempDir(), "s"))
	opt.FeatureType = "CRISPR Guide Capture"
	if _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "Antibody Capture") {
		t.Errorf("absent feature type: error %v", err)
	}
}

// TestLZF: the anndata 0.7 fixtures compress every chunked dataset with
// h5py's LZF filter. A wrong decoder yields garbage: here X must be small
// whole counts and the dense layer values in [0, 1), as the fixtures were
// generated.
func TestLZF(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	for _, v := range []string{"v0.7.0", "v0.7.8"} {
		in := filepath.Join(data, "anndata-h5ad", v, "adata.h5ad")
		for _, layer := range []string{"X", "raw", "array"} {
			opt := Options{Input: in, Layer: layer, Workers: 2}
			src, err := openSource(&opt)
			if err != nil {
				t.Fatalf("%s %s: %v", v, layer, err)
			}
			var n int
			err = src.scan(context.Background(), func(b *batch) error {
				for _, x := range b.val {
					n++
					if layer == "array" && !(x > 0 && x < 1) || layer != "array" && !(x >= 1 && x <= 100 && x == math.Trunc(x)) {
						t.Fatalf("%s %s: value %v", v, layer, x)
					}
				}
				return nil
			})
			src.close()
			if err != nil {
				t.Fatal(err)
			}
			cells, genes := src.shape()
			if layer == "array" && n != cells*genes || n < cells {
				t.Errorf("%s %s: %d entries in %d × %d", v, layer, n, cells, genes)
			}
		}
	}
}

// TestScaledData: the anndata 0.5 fixture's X is scaled (negative values);
// it is refused with an error suggesting --layer, and raw.X is read instead
// with Layer "raw".
func TestScaledData(t *testing.T) {
	t.Parallel()
	in := filepath.Join(sharedData(t), "anndata-h5ad", "v0.5.0", "adata.h5ad")
	out := filepath.Join(t.TempDir(), "s")
	_, err := Run(context.Background(), exact(in, out))
	if err == nil || !strings.Contains(err.Error(), "negative") || !strings.Contains(err.Error(), "--layer") || !strings.Contains(err.Error(), "adata.h5ad") {
		t.Fatalf("error %v: want negative values refused with a --layer hint", err)
	}
	assertNoOutput(t, out)
}

// TestTranspose: reading a file with Transpose swaps cells and genes.
func TestTranspose(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	// A bare Matrix Market file (no side files: their lengths would no
	// longer match once transposed).
	bare := filepath.Join(t.TempDir(), "counts.mtx")
	copyFile(t, filepath.Join(data, "seurat-testdata", "matrix.mtx"), bare)
	for _, in := range []string{bare, filepath.Join(data, "scanpy-10x/visium_data/1.0.0/filtered_feature_bc_matrix.h5"), filepath.Join(data, "anndata-h5ad/v0.7.8/adata.h5ad")} {
		_, a := ingest(t, exact(in, filepath.Join(t.TempDir(), "a")))
		opt := exact(in, filepath.Join(t.TempDir(), "b"))
		opt.Transpose = true
		_, b := ingest(t, opt)
		am, bm := a.Manifest(), b.Manifest()
		if am.Cells != bm.Genes || am.Genes != bm.Cells || am.Ones != bm.Ones {
			t.Fatalf("%s: %d × %d (%d ones) transposed to %d × %d (%d ones)", in, am.Cells, am.Genes, am.Ones, bm.Cells, bm.Genes, bm.Ones)
		}
		for c := range am.Cells {
			for g := range am.Genes {
				if a.X().At(c, g) != b.X().At(g, c) {
					t.Fatalf("%s: bit (%d, %d) not transposed", in, c, g)
				}
			}
		}
	}
}

// TestDetect checks format detection from content, whatever the name.
func TestDetect(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	dir := t.TempDir()
	mtxAsH5 := filepath.Join(dir, "matrix.h5")
	copyFile(t, filepath.Join(data, "seurat-testdata", "cr3.0", "matrix.mtx.gz"), mtxAsH5)
	h5adAsTxt := filepath.Join(dir, "data.txt")
	copyFile(t, filepath.Join(data, "anndata-h5ad", "v0.7.0", "adata.h5ad"), h5adAsTxt)
	for _, c := range []struct {
		in   string
		want Format
	}{
		{filepath.Join(data, "scanpy-10x/10x_data/1.2.0/filtered_gene_bc_matrices_h5.h5"), FormatTenXH5V2},
		{filepath.Join(data, "scanpy-10x/10x_data/3.0.0/filtered_feature_bc_matrix.h5"), FormatTenXH5V3},
		{filepath.Join(data, "anndata-h5ad/v0.5.0/adata.h5ad"), FormatH5AD},
		{filepath.Join(data, "brain1m-10k-subset/derived_anndata080.h5ad"), FormatH5AD},
		{filepath.Join(data, "seurat-testdata"), FormatMTX},
		{mtxAsH5, FormatMTX},
		{h5adAsTxt, FormatH5AD},
	} {
		got, err := Detect(c.in)
		if err != nil || got != c.want {
			t.Errorf("Detect(%s) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// TestInputNotAFile: ingest reads its input more than once (to detect the
// format, then in two or three passes), so a named pipe (a process
// substitution, <(zcat …)) is refused at once, naming it, rather than
// read in part (its first bytes gone to the detection: "no banner") or
// waited on for a writer, deaf to Ctrl-C.
func TestInputNotAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "counts.mtx")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	for _, tc := range []struct{ name, in string }{
		{"named pipe", fifo},
		{"character device", os.DevNull},
	} {
		out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
		_, err := Run(context.Background(), exact(tc.in, out))
		if err == nil || !strings.Contains(err.Error(), tc.in+" is not a regular file") {
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.in)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: %s written (%v)", tc.name, out, err)
		}
	}
}

// TestForce: an existing output is refused without Force and replaced with it.
func TestForce(t *testing.T) {
	t.Parallel()
	in := filepath.Join(sharedData(t), "seurat-testdata", "cr3.0")
	out := filepath.Join(t.TempDir(), "s")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(out, "keep")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), exact(in, out))
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("existing output: error %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("existing output touched: %v", err)
	}
	opt := exact(in, out)
	opt.Force = true
	ingest(t, opt)
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("old output not replaced")
	}
}

// TestProgressAndCancel: Progress reaches the total of both passes, and a
// cancelled context stops Run leaving nothing.
func TestProgressAndCancel(t *testing.T) {
	t.Parallel()
	in := filepath.Join(sharedData(t), "brain1m-10k-subset", "derived_v2_filtered_gene_bc_matrices_h5.h5")
	opt := exact(in, filepath.Join(t.TempDir(), "s"))
	var last, total int64
	opt.Progress = func(done, tot int64) { last, total = done, tot }
	ingest(t, opt)
	if total != 2*691914 || last != total {
		t.Errorf("progress ended at %d of %d, want %d of %d", last, total, 2*691914, 2*691914)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opt = exact(in, filepath.Join(t.TempDir(), "c"))
	if _, err := Run(ctx, opt); err == nil {
		t.Fatal("cancelled Run succeeded")
	}
	assertNoOutput(t, opt.Output)
}

// TestTransposeMTXFolder: a 10x-style folder whose matrix is cells × genes
// (barcodes.tsv naming its rows) ingests with Transpose to the same shard as
// the genes × cells original, annotations included; Transpose on the
// original is refused with an error naming the side file that no longer fits.
func TestTransposeMTXFolder(t *testing.T) {
	t.Parallel()
	src := filepath.Join(sharedData(t), "scp-500pbmc-v3", "500_PBMC_3p_LT_Chromium_X_50genes", "filtered_feature_bc_matrix")
	dir := t.TempDir()
	for _, name := range []string{"barcodes.tsv.gz", "features.tsv.gz"} {
		copyFile(t, filepath.Join(src, name), filepath.Join(dir, name))
	}
	writeTransposedMTX(t, filepath.Join(src, "matrix.mtx.gz"), filepath.Join(dir, "matrix.mtx.gz"))

	_, a := ingest(t, exact(src, filepath.Join(t.TempDir(), "a")))
	opt := exact(dir, filepath.Join(t.TempDir(), "b"))
	opt.Transpose = true
	_, b := ingest(t, opt)
	am, bm := a.Manifest(), b.Manifest()
	if am.Cells != bm.Cells || am.Genes != bm.Genes || am.Ones != bm.Ones ||
		!slices.Equal(am.GeneIDs, bm.GeneIDs) || !slices.Equal(barcodes(t, a), barcodes(t, b)) {
		t.Fatalf("transposed folder: %d × %d (%d ones), want %d × %d (%d ones) with the same annotations",
			bm.Cells, bm.Genes, bm.Ones, am.Cells, am.Genes, am.Ones)
	}
	for c := range am.Cells {
		for g := range am.Genes {
			if a.X().At(c, g) != b.X().At(c, g) {
				t.Fatalf("bit (%d, %d) differs", c, g)
			}
		}
	}

	opt = exact(src, filepath.Join(t.TempDir(), "c"))
	opt.Transpose = true
	_, err := Run(context.Background(), opt)
	if err == nil || !strings.Contains(err.Error(), "features.tsv.gz") || !strings.Contains(err.Error(), "--transpose") {
		t.Fatalf("Transpose on a genes × cells folder: error %v, want one naming features.tsv.gz and --transpose", err)
	}
	assertNoOutput(t, opt.Output)
}

// writeTransposedMTX writes the Matrix Market file from with rows and
// columns swapped, gzipped, to to.
func writeTransposedMTX(t *testing.T, from, to string) {
	t.Helper()
	zr := bytes.NewReader(testkit.ReadGzip(t, from))
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	sc := bufio.NewScanner(zr)
	header := true
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "%") {
			fmt.Fprintln(zw, line)
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			t.Fatalf("%s: line %q", from, line)
		}
		fields[0], fields[1] = fields[1], fields[0]
		fmt.Fprintln(zw, strings.Join(fields, " "))
		header = false
	}
	if err := sc.Err(); err != nil || header {
		t.Fatalf("%s: %v (entries read: %v)", from, err, !header)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
