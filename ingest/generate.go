package ingest

import (
	"context"

	"scpipe/ingest/internal/h5gen"
)

// GenerateTenXV2 writes a CellRanger v2 HDF5 file at path (genome group
// "hg19", as the 1.3M-cell file stores it: PyTables' chunks of 8 192
// elements, shuffle and deflate level 4) of genes × cells random counts with
// about density·genes·cells nonzeros, whose genes' detection rates spread
// over orders of magnitude as real ones do; seed fixes the matrix. It needs
// memory for O(genes + cells) and a few batches of cells, whatever the
// size, so `scpipe bench --e2e` can generate the input of a whole analysis
// of the paper's size. It returns the number of nonzeros; cancelling ctx
// stops it while it draws the cells, leaving no file. It draws and
// compresses on workers goroutines (0: GOMAXPROCS).
func GenerateTenXV2(ctx context.Context, path string, genes, cells int, density float64, seed uint64, workers int) (int64, error) {
	return h5gen.GenerateTenXV2Stream(ctx, path, genes, cells, density, seed,
		h5gen.Options{Chunk: 8192, Deflate: 4, Shuffle: true, Workers: goroutines(workers)})
}
