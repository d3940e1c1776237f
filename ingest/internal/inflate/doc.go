// Package inflate decodes whole zlib streams (RFC 1950, carrying RFC 1951
// DEFLATE data) from one buffer into another.
//
// HDF5's deflate filter stores each chunk as a complete zlib stream whose
// decoded size the chunk index gives, so a chunk never needs the streaming
// machinery of compress/flate: no sliding window to copy through, no
// io.ByteReader to pull bits from one byte at a time. Decoding straight into
// the caller's buffer, with a 64-bit bit buffer refilled eight bytes at a
// time and two-level Huffman tables, is what this package adds; the format
// itself is exactly RFC 1951's, and the zlib trailer's Adler-32 is verified.
//
//	var d inflate.Decoder
//	n, err := d.Zlib(dst, src) // dst holds the first n decoded bytes
//
// A stream that decodes to more than len(dst) bytes is an error
// (errTooLong), never a write past dst. Every malformed stream gives an
// error wrapping errCorrupt; the package never panics on bad input
// (FuzzDecode checks it against compress/flate).
package inflate
