// Package h5 reads the parts of HDF5 files that single-cell count matrices
// use: the group tree, attributes, string datasets and large 1-D numeric
// arrays (10x Genomics `data`/`indices`/`indptr`, AnnData `X`).
//
// Groups and attribute messages come from github.com/scigolib/hdf5. Datasets
// are read by this package's own code, because bulk reads need things that
// library lacks: the chunk index is walked once and kept (version-1 B-trees
// as PyTables and h5py write them, plus the single-chunk, implicit and
// unpaged fixed-array indexes of newer files), chunks are read with ReadAt,
// and the filter pipeline (deflate, shuffle, Fletcher32, LZF) is undone
// before elements are decoded straight into int32, int64, float32 or float64
// from any 1/2/4/8-byte integer or 4/8-byte float of either byte order.
// Anything else — an unknown filter, a packed or exotic type, an extensible
// array or version-2 B-tree index — is an error naming the file, the dataset
// and what is unsupported; reads never return partial data.
//
// Reads of consecutive ranges are cheap: the last decoded chunk is cached,
// and a range covering several chunks is decoded on GOMAXPROCS goroutines,
// each writing its own part of the destination.
//
//	f, err := h5.Open("filtered_feature_bc_matrix.h5")
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
