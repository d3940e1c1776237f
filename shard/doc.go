// Package shard stores a binary cells × genes matrix X in the on-disk form
// the Gibbs sampler streams: bit-packed, memory-mapped files holding X by
// rows (cells) and Xᵀ by rows (genes), both cut at the same cell-block
// boundaries.
//
// Each cell block of X is one file of whole-word rows; each cell block also
// has one or more Xᵀ tile files (gene tile × cell block). A process that owns
// a range of cell blocks therefore reads only its own files in both
// orientations, which is how a fit can later be split across nodes. Every
// file is mapped read-only at offset 0, so no data is copied or decoded: a
// row is a []uint64 that aliases the page cache. The layout, annotations,
// provenance and CRC-32C checksums live in manifest.json, genes.tsv and
// barcodes.tsv; README.md beside this file specifies the format byte by byte.
//
// Writing happens through a Writer whose row blocks are memory-mapped
// read-write in a temporary folder, so bits may arrive in any order without
// the Go heap growing with the number of ones; Commit builds Xᵀ by 64×64 bit
// transposes, one cell block per worker, and renames the folder into place.
// A writer that produces cells in order may instead finish each block as it
// completes (FinishBlock, or WriteBlock with rows built in memory), so that
// the transposition overlaps the writing of later blocks. New files go to
// the device with O_DIRECT where the file system allows (a shard is read
// back much later, and through the page cache each byte cost the kernel a
// fresh page); Commit then fsyncs every file in one round before the
// rename:
//
//	w, err := shard.Create("pbmc.shard", shard.Layout{Cells: n, Genes: d}, shard.CreateOptions{})
//	if err != nil { … }
//	defer w.Abort()
//	for cell, genes := range expressed { w.SetRow(cell, genes) }
//	err = w.Commit(ctx, shard.Manifest{GeneIDs: ids, Barcodes: barcodes, Source: src})
//
// Reading maps the files and hands out matrices that satisfy gibbs.BitMatrix:
//
//	s, err := shard.Open("pbmc.shard")
//	if err != nil { … }
//	defer s.Close()
//	x, xt := s.X(), s.XT() // X: one segment; Xᵀ: one segment per cell block
package shard
