package anndata_test

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"scpipe/ingest"
	"scpipe/internal/anndata"
	"scpipe/shard"
)

// csr draws a rows × cols 0/1 matrix in CSR: entry (i, j) is set when a
// hash of it says so, with density about 1/p.
func csr(rows, cols, p int) (indptr []int64, indices []int32, data []float32) {
	indptr = []int64{0}
	for i := range rows {
		for j := range cols {
			if (i*7919+j*104729+i*j)%p == 0 {
				indices = append(indices, int32(j))
				data = append(data, 1)
			}
		}
		indptr = append(indptr, int64(len(indices)))
	}
	return
}

func names(prefix string, n int) []string {
	v := make([]string, n)
	for i := range v {
		v[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return v
}

// TestIngestReadsWhatItWrites writes AnnData files with this package and
// ingests them with scpipe's own HDF5 reader (ingest/internal/h5, written
// independently from the format specification): the matrix, barcodes and
// gene names come back. The sizes cross a word of bits, a symbol-table node
// (32 members in a group, here obs's columns) and a name wider than 8
// bytes.
func TestIngestReadsWhatItWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		rows, cols, p int
		obsCols       int
		longNames     bool
	}{
		{"small", 5, 3, 2, 0, false},
		{"word boundary", 17, 65, 3, 1, false},
		{"many columns", 40, 130, 5, 70, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "x.h5ad")
			indptr, indices, data := csr(tc.rows, tc.cols, tc.p)
			barcodes, genes := names("cell-", tc.rows), names("GENE", tc.cols)
			if tc.longNames {
				for i := range genes {
					genes[i] += strings.Repeat("x", i%23)
				}
			}
			w, err := anndata.Create(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			var cols []anndata.Column
			for k := range tc.obsCols {
				v := make([]float64, tc.rows)
				v[0] = float64(k)
				cols = append(cols, anndata.Column{Name: fmt.Sprintf("A%02d", k), Float64: v})
			}
			w.Dataframe("/obs", barcodes, cols...)
			w.Dataframe("/var", genes, anndata.Column{Name: "gene_ids", Strings: names("ENSG", tc.cols)})
			w.CSR("/X", tc.rows, tc.cols, indptr, indices, data)
			w.Dict("/uns")
			w.String("/uns/note", "made by a test")
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "shards")
			if _, err := ingest.Run(context.Background(), ingest.Options{Input: path, Output: out, MinCellFrac: 0}); err != nil {
				t.Fatal(err)
			}
			s, err := shard.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			m := s.Manifest()
			bcs, err := s.Barcodes()
			if err != nil {
				t.Fatal(err)
			}
			if m.Cells != tc.rows || m.Genes != tc.cols || !slices.Equal(bcs, barcodes) {
				t.Fatalf("ingested %d × %d, barcodes %v", m.Cells, m.Genes, bcs)
			}
			if !slices.Equal(m.GeneIDs, genes) && !slices.Equal(m.GeneNames, genes) {
				t.Errorf("gene ids %v names %v, want %v", m.GeneIDs, m.GeneNames, genes)
			}
			for i := range tc.rows {
				var got []int32
				for w, word := range s.X().Segment(i, 0) {
					for ; word != 0; word &= word - 1 {
						got = append(got, int32(w*64+bits.TrailingZeros64(word)))
					}
				}
				if want := indices[indptr[i]:indptr[i+1]]; !slices.Equal(got, want) {
					t.Fatalf("row %d: %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestWriterErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		write func(w *anndata.Writer) error
		want  string
	}{
		{"NUL in a string", func(w *anndata.Writer) error { return w.Strings("/s", []string{"a\x00b"}) }, "NUL"},
		{"two datasets of one name", func(w *anndata.Writer) error {
			w.Float64s("/a", []float64{1})
			return w.Float64s("/a", []float64{2})
		}, "already exists"},
		{"a dataset as a group", func(w *anndata.Writer) error {
			w.Float64s("/a", []float64{1})
			return w.Float64s("/a/b", []float64{2})
		}, "is a dataset"},
		{"bad CSR", func(w *anndata.Writer) error {
			return w.CSR("/X", 2, 2, []int64{0, 1}, []int32{0}, []float32{1})
		}, "inconsistent CSR"},
		{"columns not ascending", func(w *anndata.Writer) error {
			return w.BinaryCSR("/X", 1, 5, func(i int, buf []int32) []int32 { return append(buf, 3, 1) })
		}, "not ascending"},
		{"a column out of range", func(w *anndata.Writer) error {
			return w.BinaryCSR("/X", 1, 5, func(i int, buf []int32) []int32 { return append(buf, 5) })
		}, "not ascending in 0..4"},
		{"matrix shape", func(w *anndata.Writer) error { return w.Matrix("/m", 2, 2, []float64{1}) }, "2 × 2"},
		{"dataframe column length", func(w *anndata.Writer) error {
			return w.Dataframe("/obs", []string{"a", "b"}, anndata.Column{Name: "x", Float64: []float64{1}})
		}, "not one array of 2"},
		{"a group too large", func(w *anndata.Writer) error {
			for i := range 1025 {
				w.Int64(fmt.Sprintf("/g/k%d", i), int64(i))
			}
			return nil
		}, "more than 1024 members"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "bad.h5ad")
			w, err := anndata.Create(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			werr := tc.write(w)
			err = w.Commit()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("Commit: %v (write: %v), want an error naming %s and %q", err, werr, path, tc.want)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed write left %s", path)
			}
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"))
			if len(left) > 0 {
				t.Errorf("temporaries left: %v", left)
			}
		})
	}
}

// TestStringsVariableLength: string arrays are written variable-length,
// as anndata writes them, so that one long name costs its own length:
// as fixed-length strings, one gene name of 65 003 characters made each
// name column as wide (issue 44 item 4: a 1.86 GB h5ad where 4.8 MB was
// due). ingest's reader reads every string back, across global heap
// collections (70 000 barcodes, more than one collection's 65 535
// objects) and with empty strings among them.
func TestStringsVariableLength(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "long.h5ad")
	barcodes, genes, ids := names("cell-", 70_000), names("GENE", 500), names("ENSG", 500)
	genes[17] = strings.Repeat("L", 65_003)
	ids[3], ids[499] = "", ""
	w, err := anndata.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	w.Dataframe("/obs", barcodes)
	w.Dataframe("/var", genes, anndata.Column{Name: "gene_ids", Strings: ids})
	w.CSR("/X", len(barcodes), len(genes), make([]int64, len(barcodes)+1), nil, nil)
	w.Dict("/uns")
	w.String("/uns/long", genes[17])
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// The strings' bytes, 32 bytes of heap and reference a string, the
	// indptr; fixed-length strings took 65 MB.
	if limit := int64(3*65_003 + 70_500*(32+16) + 8*70_001 + 1<<20); fi.Size() > limit {
		t.Errorf("the file is %d bytes, want at most %d", fi.Size(), limit)
	}
	obs, vars, geneIDs, err := ingest.AnnDataNames(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(obs, barcodes) || !slices.Equal(vars, genes) || !slices.Equal(geneIDs, ids) {
		t.Errorf("names read back differ: %d obs, %d var, %d ids", len(obs), len(vars), len(geneIDs))
	}
}

// TestStopped: once its context is done, a Writer's streamed matrix and
// Commit fail with the context's error, Append copies nothing, and nothing
// is left: no file, no temporary.
func TestStopped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.h5ad")
	w, err := anndata.Create(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	w.Dataframe("/obs", []string{"a", "b"})
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		write func(out string) error
	}{
		{"Create, a streamed matrix", func(out string) error {
			w, err := anndata.Create(ctx, out)
			if err != nil {
				return err
			}
			if err := w.BinaryCSR("/X", 3, 2, func(i int, buf []int32) []int32 { return append(buf, 1) }); !errors.Is(err, context.Canceled) {
				t.Errorf("BinaryCSR: %v, want context.Canceled", err)
			}
			return w.Commit()
		}},
		{"Create, a small file", func(out string) error {
			w, err := anndata.Create(ctx, out)
			if err != nil {
				return err
			}
			w.Dataframe("/obs", []string{"a"})
			return w.Commit()
		}},
		{"Append", func(out string) error {
			w, err := anndata.Append(ctx, src, out)
			if err != nil {
				return err
			}
			return w.Commit()
		}},
	} {
		out := filepath.Join(t.TempDir(), "out.h5ad")
		if err := tc.write(out); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), out) && !strings.Contains(err.Error(), src) {
			t.Errorf("%s: %v, want context.Canceled naming the file", tc.name, err)
		}
		if left, _ := os.ReadDir(filepath.Dir(out)); len(left) > 0 {
			t.Errorf("%s: left %s", tc.name, left[0].Name())
		}
	}
}
