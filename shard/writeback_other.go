//go:build !linux

package shard

import "os"

// startWriteback fsyncs f where the kernel cannot be asked to start
// writing back without waiting (sync_file_range is Linux's).
func startWriteback(f *os.File) (unsynced bool, err error) {
	return false, f.Sync()
}
