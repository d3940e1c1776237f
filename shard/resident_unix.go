//go:build unix

package shard

import "golang.org/x/sys/unix"

// dontNeed drops a shared file mapping's pages from the resident set; the
// data stays in the page cache. Failure only means the pages stay resident.
func dontNeed(b []byte) { unix.Madvise(b, unix.MADV_DONTNEED) }
