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
package directio

import (
	"os"
	"sync/atomic"
	"unsafe"
)

// disabled turns direct I/O off for the process (SetEnabled).
var disabled atomic.Bool

// SetEnabled turns direct I/O on (the default) or off for the whole
// process: off, Set never sets O_DIRECT and everything goes through the
// page cache. Network file systems such as NFS, where each direct write is
// a synchronous round trip to the server, are better off without it.
func SetEnabled(on bool) { disabled.Store(!on) }

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
	if _, err := f.Write(data[:n]); err != nil {
		if !isInvalid(err) || !Set(f, false) {
			return err
		}
		// Alignment the device refuses: start again through the cache.
		_, err = f.WriteAt(data, 0)
		return err
	}
	if !Set(f, false) {
		return &os.PathError{Op: "fcntl", Path: f.Name(), Err: errClear}
	}
	_, err := f.Write(data[n:])
	return err
}
