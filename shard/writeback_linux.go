package shard

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing f's dirty pages to disk
// without waiting for them, so that the disk works while the next block is
// transposed; Commit's fsync of each file then finds little left to wait
// for. An fsync per file as it is written stalled its worker on the disk
// instead.
func startWriteback(f *os.File) (unsynced bool, err error) {
	if err := unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE); err != nil {
		return false, f.Sync() // e.g. a file system without it: fsync now
	}
	return true, nil
}

// directAlign is the alignment of address, offset and length that O_DIRECT
// is given: the page size, which every Linux block device's logical block
// size divides.
const directAlign = 4096

// minDirect is the smallest file worth writing around the page cache.
const minDirect = 64 << 10

// writeDirect writes data to f, a new empty file, from offset 0, with
// O_DIRECT for its whole pages and through the page cache for the tail. It
// reports done = false, having written nothing, where data is too small or
// unaligned or the file system refuses O_DIRECT; the caller then writes it
// the ordinary way.
//
// Why: a shard is written once and read back by memory-mapping much later,
// often on another node. Written through the page cache, its bytes cost the
// kernel a fresh page each (0.6–0.9 CPU-s per 300 MiB on a VM, as much as
// all of the shard's transposition and checksums), and the pages are then
// written back anyway. O_DIRECT hands the device the caller's buffer.
func writeDirect(f *os.File, data []byte) (done bool, err error) {
	n := len(data) &^ (directAlign - 1)
	if n < minDirect || uintptr(unsafe.Pointer(unsafe.SliceData(data)))%directAlign != 0 {
		return false, nil
	}
	if !setDirect(f, true) {
		return false, nil
	}
	if _, err := f.Write(data[:n]); err != nil {
		if !errors.Is(err, unix.EINVAL) {
			return true, err
		}
		// Alignment the device refuses: start again through the cache.
		if !setDirect(f, false) {
			return true, err
		}
		_, err = f.WriteAt(data, 0)
		return true, err
	}
	if n == len(data) {
		return true, nil
	}
	if !setDirect(f, false) {
		return true, errors.New("cannot clear O_DIRECT")
	}
	_, err = f.Write(data[n:])
	return true, err
}

// setDirect sets or clears f's O_DIRECT flag, reporting success.
func setDirect(f *os.File, on bool) bool {
	fd := int(f.Fd())
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return false
	}
	if on {
		flags |= unix.O_DIRECT
	} else {
		flags &^= unix.O_DIRECT
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags)
	return err == nil
}
