// Package h5gen writes HDF5 files in the layouts scpipe ingests — CellRanger
// v2 (/<genome>/…), CellRanger v3+ (/matrix/…) and AnnData .h5ad with a CSR
// X — so that tests and benchmarks generate their inputs in code instead of
// committing data files.
//
// The layout writers take a sparse matrix (CSC in 10x orientation, genes ×
// cells; CSR in AnnData orientation, cells × genes) and the name lists, and
// store them exactly as given: a test of bad input passes an inconsistent
// matrix, or uses WriteRaw to write any datasets and attributes at all
// (a shape disagreeing with indptr, NaN data, a missing dataset).
// GenerateTenXV2 draws a realistic random count matrix of any size for
// benchmarks. Options choose chunking, shuffle and deflate and the element
// types, as CellRanger, PyTables and h5py vary them.
//
//	m := h5gen.CSC{Genes: 3, Cells: 2, Indptr: []int64{0, 1, 3},
//		Indices: []int64{2, 0, 1}, Data: []float64{5, 1, 2}}
//	err := h5gen.WriteTenXV2(path, "mm10", m, ids, names, barcodes,
//		h5gen.Options{Chunk: 4096, Deflate: 4, Shuffle: true})
//
// Files are written with github.com/scigolib/hdf5 v0.14.0 and then corrected
// in place where that writer departs from what HDF5 readers expect (see
// fixup.go): its filter-pipeline message and deflate chunks, the padding of
// fixed-length strings, and empty datasets. What a reader of these files
// meets: superblock version 2; groups as symbol tables (v1 group B-tree and
// local heap) in version-2 object headers with Jenkins checksums; datasets
// with dataspace message version 1, layout message version 3, contiguous or
// chunked with a version-1 B-tree chunk index (type 1 nodes, keys holding
// chunk size, filter mask and byte offsets); filter pipeline message version
// 2 with shuffle (id 2) then deflate (id 1, zlib streams); fixed-length
// strings null-padded, variable-length strings in global heaps. A file is
// written to a temporary name beside its destination and renamed into place.
package h5gen
