// Package directio writes and reads files around the page cache where the
// system allows it, and through it where it does not.
//
// Why: ingest writes each byte of a shard, and of its temporary entry
// file, once and does not read it again soon (the entry file is read once,
// the shard much later and often on another node). Through the page cache
// every such byte costs the kernel a freshly allocated page and a copy; on
// a virtual machine that was 0.6–0.9 CPU-s per 300 MiB, as much as all of
// a shard's transposition and checksums. With O_DIRECT the device reads
// the caller's buffer instead.
//
// O_DIRECT needs the buffer's address, the file offset and the length to
// be multiples of the device's logical block size. Align, the page size,
// is a multiple of every Linux block device's; Aligned allocates such
// buffers.
//
// Whether to go around the page cache is the caller's choice, per file:
// network file systems such as NFS, where each direct write is a
// synchronous round trip to the server, are better off without it, so the
// writers take an option (shard.CreateOptions.Cached, ingest's
// Options.Cached) that leaves Set and WriteNew uncalled.
package directio

import (
	"errors"
	"os"
	"unsafe"
)

// Align is the alignment of buffers, offsets and lengths that direct I/O
// is given.
const Align = 4096

// Aligned returns a zeroed slice of length n whose first byte is aligned
// to Align and whose capacity is n rounded up to a multiple of Align.
func Aligned(n int) []byte {
	up := RoundUp(n)
	b := make([]byte, up+Align)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (Align - 1))
	return b[off : off+n : off+up]
}

// IsAligned reports whether b starts on an Align boundary.
func IsAligned(b []byte) bool {
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%Align == 0
}

// RoundUp rounds n up to a multiple of Align.
func RoundUp(n int) int { return (n + Align - 1) &^ (Align - 1) }

// minDirect is the smallest write worth sending around the page cache.
const minDirect = 64 << 10

// WriteNew writes data to f, a new empty file, from offset 0: its whole
// pages directly when data is large and aligned and the file system
// allows it, the rest through the page cache. The file still needs an
// fsync for its size and extents (and tail) to be durable.
func WriteNew(f *os.File, data []byte) error {
	n := len(data) &^ (Align - 1)
	if n < minDirect || !IsAligned(data) || !Set(f, true) {
		_, err := f.Write(data)
		return err
	}
	if err := WriteAt(f, data[:n], 0); err != nil {
		return err
	}
	if !Set(f, false) {
		return &os.PathError{Op: "fcntl", Path: f.Name(), Err: errClear}
	}
	_, err := f.WriteAt(data[n:], int64(n))
	return err
}

// The transfers WriteAt and ReadAt try first; a test makes them fail as a
// device that refuses an alignment would.
var (
	directWrite = (*os.File).WriteAt
	directRead  = (*os.File).ReadAt
)

// WriteAt writes b at off in f, directly when f has O_DIRECT set (see
// Set). Where the device refuses the transfer (EINVAL: an alignment it
// does not take), O_DIRECT is cleared for good and b goes through the
// page cache.
func WriteAt(f *os.File, b []byte, off int64) error {
	return transfer(f, b, off, directWrite, (*os.File).WriteAt)
}

// ReadAt fills b from off in f as WriteAt writes: directly when f has
// O_DIRECT set, through the page cache once the device refuses.
func ReadAt(f *os.File, b []byte, off int64) error {
	return transfer(f, b, off, directRead, (*os.File).ReadAt)
}

// transfer makes a transfer with direct, and again with cached once
// O_DIRECT is cleared where the device refused it.
func transfer(f *os.File, b []byte, off int64, direct, cached func(*os.File, []byte, int64) (int, error)) error {
	_, err := direct(f, b, off)
	if err != nil && isInvalid(err) && Set(f, false) {
		_, err = cached(f, b, off)
	}
	return err
}

// errClear is WriteNew's error when O_DIRECT cannot be cleared for the tail.
var errClear = errors.New("cannot clear O_DIRECT")
