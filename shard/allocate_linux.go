package shard

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// allocate gives f, of size bytes, its blocks on disk before it is written
// through a mapping: a store into a page that the file system has no room
// for raises SIGBUS, which kills the process (a full disk under ingest
// once did, leaving its temporaries to fill it), where allocating first
// fails with ENOSPC. File systems that refuse fallocate(2) get zeros
// written instead.
func allocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
		return writeZeros(f, size)
	}
	if err != nil {
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	return nil
}
