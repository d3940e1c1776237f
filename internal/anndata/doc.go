// Package anndata writes AnnData files (.h5ad) in anndata's on-disk
// encoding (dataframes with _index and column-order, arrays, string arrays,
// scalars, dicts, CSR matrices, each with its encoding-type and
// encoding-version attributes) through a small HDF5 writer of its own:
// version-0 structures only (superblock 0, version-1 object headers,
// symbol-table groups, contiguous unfiltered datasets, fixed-length UTF-8
// strings), the subset that every HDF5 reader reads, h5py and scpipe's
// ingest included. It is a production writer, unlike ingest/internal/h5gen
// (scigolib/hdf5 with byte fixes, for generated test inputs): scigolib
// writes string attributes as one-element arrays, which anndata cannot
// read as encoding types.
//
//	w, err := anndata.Create("out.h5ad")
//	w.Dataframe("/obs", barcodes, anndata.Column{Name: "score", Float64: s})
//	w.Dataframe("/var", genes)
//	w.Dict("/obsm")
//	w.Matrix("/obsm/X_pca", len(barcodes), 2, pcs)
//	err = w.Commit() // written beside out.h5ad, then renamed
package anndata
