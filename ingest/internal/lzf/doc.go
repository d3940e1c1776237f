// Package lzf decodes LZF-compressed blocks, the format of h5py's LZF HDF5
// filter (filter id 32000) used by older AnnData (.h5ad) writers.
//
// An LZF stream is a sequence of runs, each introduced by a control byte c:
//
//   - c < 32: a literal run; the next c+1 bytes are copied to the output.
//   - c >= 32: a back-reference of length (c>>5)+2, where a length field of 7
//     continues in the next byte (adding up to 255); the distance back from the
//     current output position is ((c&31)<<8 | next byte) + 1. The source may
//     overlap the bytes being written (a run-length repeat), so copying goes
//     byte by byte in that case.
//
// The stream carries no length header: the caller knows the decompressed size
// (for HDF5, the chunk size) and passes a destination of exactly that size.
// Decode validates every length and distance, so hostile input yields an
// error, never a panic or an out-of-bounds write.
//
//	n, err := lzf.Decode(dst, compressed)
//	if err != nil { ... }
//	dst = dst[:n]
package lzf
