package shard

import (
	"os"

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
