// Package h5 reads the parts of HDF5 files that single-cell count matrices
// use: the group tree, attributes, string datasets and large 1-D numeric
// arrays (10x Genomics `data`/`indices`/`indptr`, AnnData `X`).
//
// Everything is read by this package's own code, from the superblock
// (versions 0 to 3) through object headers (versions 1 and 2), groups
// (symbol tables with their B-trees and local heaps, link messages, and
// dense storage in fractal heaps indexed by version-2 B-trees) and
// attributes (compact and dense) to datasets. Every size read from the file
// is checked against the file's size, and the dataset's shape, before
// anything is allocated for it, so that a corrupted file is an error, never
// an out-of-memory abort: no block of metadata is read beyond the file's
// end, no dataset holds more than the file could decode to, no chunk
// buffer is larger than its stored bytes can inflate to.
//
// For bulk reads, the chunk index is walked once and kept (version-1
// B-trees as PyTables and h5py write them, plus the single-chunk, implicit
// and unpaged fixed-array indexes of newer files), chunks are read with ReadAt,
// and the filter pipeline (deflate, shuffle, Fletcher32, LZF) is undone
// before elements are decoded straight into int32, int64, float32 or float64
// from any 1/2/4/8-byte integer or 4/8-byte float of either byte order.
// Anything else — an unknown filter, a packed or exotic type, an extensible
// array or version-2 B-tree index — is an error naming the file, the dataset
// and what is unsupported; reads never return partial data.
//
// Reads of consecutive ranges are cheap: the last decoded chunk is cached,
// and a range covering several chunks is decoded on the workers Open was
// given, each writing its own part of the destination.
//
//	f, err := h5.Open("filtered_feature_bc_matrix.h5", 8)
//	if err != nil { ... }
//	defer f.Close()
//	ind, err := f.Dataset("/matrix/indices")
//	if err != nil { ... }
//	buf := make([]int32, 1<<20)
//	for start := int64(0); start < ind.Len(); start += int64(len(buf)) {
//		n := min(int64(len(buf)), ind.Len()-start)
//		if err := ind.ReadInt32(start, buf[:n]); err != nil { ... }
//	}
package h5
