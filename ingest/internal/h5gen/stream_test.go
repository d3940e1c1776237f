package h5gen

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"scpipe/ingest/internal/h5"
)

// TestGenerateTenXV2Stream checks that the streamed file holds the matrix
// generate draws, read by scigolib and by ingest's own reader, with chunk
// B-trees of one to three levels, with and without filters, and with a
// last chunk that is padded; and, for one chunking, that it reads as the
// in-memory file does in every dataset.
func TestGenerateTenXV2Stream(t *testing.T) {
	t.Parallel()
	const genes, cells, density, seed = 400, 3000, 0.05, 5
	m := generate(genes, cells, density, seed)
	ids, names, barcodes := generatedNames(genes, cells)
	root := "/" + generatedGenome + "/"
	for _, tc := range []struct {
		o          Options
		againstMem bool
	}{
		{Options{Chunk: 1000, Deflate: 4, Shuffle: true}, true}, // one leaf
		{Options{Chunk: 40, Deflate: 1, Shuffle: true}, false},  // two levels
		{Options{Chunk: 8, Deflate: 4, Shuffle: true}, false},   // three levels
		{Options{Chunk: 4096}, false},                           // no filters
		{Options{Chunk: 512, Deflate: 4, DataType: "float32", IndexType: "int32"}, false},
	} {
		tc.o.Workers = 3
		t.Run(fmt.Sprintf("%+v", tc.o), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "stream.h5")
			n, err := GenerateTenXV2Stream(context.Background(), path, genes, cells, density, seed, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(len(m.Data)) || n < 50000 {
				t.Fatalf("%d nonzeros streamed, %d drawn", n, len(m.Data))
			}
			got := readBack(t, path)
			want := map[string][]float64{
				root + "data": m.Data, root + "indices": toFloats(m.Indices), root + "indptr": toFloats(m.Indptr),
				root + "shape": {genes, cells},
			}
			for p, w := range want {
				if !reflect.DeepEqual(got.nums[p], w) {
					t.Fatalf("scigolib reads %s as %d values, not the %d drawn", p, len(got.nums[p]), len(w))
				}
			}
			for p, w := range map[string][]string{root + "genes": ids, root + "gene_names": names, root + "barcodes": barcodes} {
				if !reflect.DeepEqual(got.strs[p], w) {
					t.Fatalf("scigolib reads %s wrong", p)
				}
			}
			f, err := h5.Open(path, 4)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, name := range []string{"data", "indices"} {
				d, err := f.Dataset(root + name)
				if err != nil {
					t.Fatal(err)
				}
				vals := make([]float64, d.Len())
				if err := d.ReadFloat64(0, vals); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(vals, want[root+name]) {
					t.Fatalf("ingest's reader reads %s as %d values, not the %d drawn", name, len(vals), len(want[root+name]))
				}
			}
			if tc.againstMem {
				mem := filepath.Join(dir, "mem.h5")
				if _, err := GenerateTenXV2(mem, genes, cells, density, seed, tc.o); err != nil {
					t.Fatal(err)
				}
				if a := readBack(t, mem); !reflect.DeepEqual(a.nums, got.nums) || !reflect.DeepEqual(a.strs, got.strs) {
					t.Fatal("the streamed and in-memory files read differently")
				}
			}
		})
	}
}

func toFloats(v []int64) []float64 {
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = float64(x)
	}
	return f
}

// TestGenerateStreamCancelled checks that a cancelled generation returns
// the context's error and leaves nothing in the folder.
func TestGenerateStreamCancelled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := GenerateTenXV2Stream(ctx, filepath.Join(dir, "stream.h5"), 500, 20000, 0.05, 1, Options{Chunk: 1000, Workers: 2})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left behind, first %s", len(left), left[0].Name())
	}
}
