//go:build !linux

package shard

import "os"

// allocate gives f, of size bytes, its blocks on disk before it is written
// through a mapping (see the Linux version): here by writing zeros.
func allocate(f *os.File, size int64) error { return writeZeros(f, size) }
