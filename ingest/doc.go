// Package ingest turns the count matrices single-cell users have — 10x
// Genomics HDF5 (CellRanger v2 and v3+, spaceranger), 10x MTX folders and
// Matrix Market files, AnnData .h5ad — into bit-packed shards (package
// shard) with cells as rows and genes as columns.
//
// The idea: every format is a source that streams its stored entries as
// (cell, gene, value) batches, already oriented, validating as it goes
// (indices against the shape, pointers against lengths, entry counts against
// headers, values non-negative and finite). Run reads the source in two
// passes, after two reads for the ambient RNA's levels (ambient.go) unless
// Options.Ambient is 0:
//
//  1. Count: the cells expressing each gene and the genes expressed by each
//     cell, where "expressed" means count > Threshold (the paper binarises
//     non-zero counts) and, by default, above what ambient RNA explains
//     (ambient.go), plus the number and sum of stored values; the
//     expressed entries go to a spill, about a byte each: its first 256
//     MiB in memory, the rest to a temporary file beside the output,
//     written and read back around the page cache (O_DIRECT) where the
//     file system allows.
//  2. Write: with the gene filters (ExcludeGenes, by name; MinCellFrac,
//     MinCells: the paper drops genes expressed in fewer than 1% of cells;
//     then SelectGenes, the genes of largest binomial deviance, whose sums
//     the counting pass also takes, see deviance.go) and the cell filter
//     (MinGenes) decided from those counts, set the kept bits read back
//     from the spill through a shard.Writer, which writes a temporary
//     folder and renames it into place only when complete. An input that
//     stores a cell and gene twice is refused here, before anything is
//     installed: its copies were counted and thresholded one by one.
//
// Memory holds O(cells + genes) counters, annotations and index pointers,
// fixed read buffers and at most 256 MiB of spill; the matrix itself is
// never held. When cells
// arrive in order (10x, AnnData CSR, sorted Matrix Market) the write pass
// builds a few cell blocks at a time in memory (at most 256 MiB) and each is
// written and transposed as soon as it is complete; otherwise the bits go
// straight into the writer's memory-mapped row blocks, so no transpose is
// needed even for inputs stored genes × cells.
//
// Formats are detected from content (Detect): the HDF5 signature, then the
// groups (/matrix for 10x v3, genome groups for v2, X/obs for AnnData), or
// the %%MatrixMarket banner (gzip or not) for text.
//
// RunRatings reads user–item ratings instead (MovieLens u.data, ratings.dat
// and ratings.csv layouts): users become cells and items genes, a rating
// above the threshold (the global mean by default) is 1, and an unrated
// entry is missing, recorded in the shards' observed mask, not 0.
//
//	opt := ingest.DefaultOptions()
//	opt.Input, opt.Output = "filtered_feature_bc_matrix.h5", "pbmc.shards"
//	rep, err := ingest.Run(ctx, opt)
//	if err != nil { ... }
//	fmt.Println(rep.CellsOut, "cells ×", rep.GenesOut, "genes,", rep.Ones, "ones")
package ingest
