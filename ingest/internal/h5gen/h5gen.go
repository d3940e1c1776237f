package h5gen

import (
	"errors"
	"fmt"
	"math"
)

// CSC is a sparse matrix of Genes × Cells in 10x orientation: column j (a
// cell) holds rows Indices[Indptr[j]:Indptr[j+1]] with values
// Data[Indptr[j]:Indptr[j+1]].
//
// The writers store a CSC exactly as given, even when it is inconsistent, so
// that tests can craft bad input; Validate says whether it is well formed.
type CSC struct {
	Genes, Cells int
	Indptr       []int64
	Indices      []int64
	Data         []float64
}

// CSR is a sparse matrix of Rows (cells) × Cols (genes) in AnnData
// orientation: row i holds columns Indices[Indptr[i]:Indptr[i+1]] with
// values Data[Indptr[i]:Indptr[i+1]].
type CSR struct {
	Rows, Cols int
	Indptr     []int64
	Indices    []int64
	Data       []float64
}

// Validate reports the first inconsistency of m: an indptr of the wrong
// length, not starting at 0 or decreasing, index and data arrays of
// different lengths, or a row index outside [0, Genes).
func (m CSC) Validate() error {
	if err := validateCompressed(m.Cells, m.Genes, m.Indptr, m.Indices, m.Data); err != nil {
		return fmt.Errorf("h5gen: CSC %d×%d: %w", m.Genes, m.Cells, err)
	}
	return nil
}

// Validate reports the first inconsistency of x, as CSC.Validate does.
func (x CSR) Validate() error {
	if err := validateCompressed(x.Rows, x.Cols, x.Indptr, x.Indices, x.Data); err != nil {
		return fmt.Errorf("h5gen: CSR %d×%d: %w", x.Rows, x.Cols, err)
	}
	return nil
}

// validateCompressed checks a compressed sparse matrix with major outer
// dimension and minor index range.
func validateCompressed(major, minor int, indptr, indices []int64, data []float64) error {
	if major < 0 || minor < 0 {
		return errors.New("negative dimension")
	}
	if len(indptr) != major+1 {
		return fmt.Errorf("indptr has %d entries, want %d", len(indptr), major+1)
	}
	if indptr[0] != 0 {
		return fmt.Errorf("indptr[0] = %d, want 0", indptr[0])
	}
	for j := 1; j < len(indptr); j++ {
		if indptr[j] < indptr[j-1] {
			return fmt.Errorf("indptr decreases at %d: %d < %d", j, indptr[j], indptr[j-1])
		}
	}
	if n := indptr[major]; n != int64(len(indices)) || n != int64(len(data)) {
		return fmt.Errorf("indptr ends at %d but there are %d indices and %d values", n, len(indices), len(data))
	}
	for k, i := range indices {
		if i < 0 || i >= int64(minor) {
			return fmt.Errorf("index %d at position %d out of range [0, %d)", i, k, minor)
		}
	}
	return nil
}

// Options say how the numeric arrays of a file (data, indices, indptr) are
// stored. The zero value writes contiguous, unfiltered datasets with the
// default types of each layout.
type Options struct {
	// Chunk is the number of elements per chunk; 0 writes contiguous
	// datasets. A chunk larger than a dataset is shrunk to the dataset.
	Chunk int
	// Deflate is the zlib (HDF5 filter 1) level 1..9; 0 means no
	// compression. It needs Chunk > 0.
	Deflate int
	// Shuffle adds the byte-shuffle filter (HDF5 filter 2) before deflate.
	// It needs Chunk > 0.
	Shuffle bool
	// DataType is the element type of the data array: "int32", "int64",
	// "float32" or "float64". Empty means int32 for 10x files and float32
	// for h5ad files. Integer types refuse non-integral values.
	DataType string
	// IndexType is the element type of indices and indptr: "int32" or
	// "int64". Empty means int64 (as CellRanger writes).
	IndexType string
	// Workers is the number of goroutines that draw cells and compress
	// chunks, at least 1 (GenerateTenXV2Stream only). The file does not
	// depend on it.
	Workers int
}

// validate checks the option values, not their fit to any dataset.
func (o Options) validate() error {
	switch {
	case o.Chunk < 0:
		return fmt.Errorf("h5gen: Options.Chunk %d is negative", o.Chunk)
	case o.Deflate < 0 || o.Deflate > 9:
		return fmt.Errorf("h5gen: Options.Deflate %d outside 0..9", o.Deflate)
	case (o.Deflate > 0 || o.Shuffle) && o.Chunk == 0:
		return errors.New("h5gen: Options.Deflate and Options.Shuffle need Options.Chunk > 0")
	}
	switch o.DataType {
	case "", "int32", "int64", "float32", "float64":
	default:
		return fmt.Errorf("h5gen: Options.DataType %q is not int32, int64, float32 or float64", o.DataType)
	}
	switch o.IndexType {
	case "", "int32", "int64":
	default:
		return fmt.Errorf("h5gen: Options.IndexType %q is not int32 or int64", o.IndexType)
	}
	return nil
}

// storage returns o's filters, chunking and workers without its types,
// for arrays whose type is fixed by the caller.
func (o Options) storage() Options {
	return Options{Chunk: o.Chunk, Deflate: o.Deflate, Shuffle: o.Shuffle, Workers: o.Workers}
}

// convert returns v as a slice of the named element type. Integer targets
// refuse values that are not integral or do not fit.
func convert(v []float64, typ string) (any, error) {
	switch typ {
	case "float64":
		return v, nil
	case "float32":
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x)
		}
		return out, nil
	case "int32":
		out := make([]int32, len(v))
		for i, x := range v {
			if x != math.Trunc(x) || x < math.MinInt32 || x > math.MaxInt32 {
				return nil, fmt.Errorf("value %v at %d is not an int32", x, i)
			}
			out[i] = int32(x)
		}
		return out, nil
	case "int64":
		out := make([]int64, len(v))
		for i, x := range v {
			if x != math.Trunc(x) || x < -(1<<63) || x >= 1<<63 {
				return nil, fmt.Errorf("value %v at %d is not an int64", x, i)
			}
			out[i] = int64(x)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown type %q", typ)
}

// convertIndex returns v as []int32 or []int64.
func convertIndex(v []int64, typ string) (any, error) {
	if typ == "int64" {
		return v, nil
	}
	out := make([]int32, len(v))
	for i, x := range v {
		if x < math.MinInt32 || x > math.MaxInt32 {
			return nil, fmt.Errorf("index %d at %d does not fit int32", x, i)
		}
		out[i] = int32(x)
	}
	return out, nil
}
