// Package export hands a run's results to the tools where single-cell users
// work: an AnnData file (.h5ad) for scanpy, written whole or into a copy of
// the user's own file, and cNMF's tables (usages, gene_spectra_score, top
// genes) for Seurat and cNMF users. What each file holds is specified in
// README.md beside this file.
//
//	rep, err := export.Export(ctx, export.Options{Run: "run", Out: "run.h5ad"})
//	// scanpy: a = sc.read_h5ad("run.h5ad"); a.obsm["X_scpipe"]
package export
