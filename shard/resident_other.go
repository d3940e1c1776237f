//go:build !unix

package shard

// dontNeed is a no-op where madvise is not available: the pages stay
// resident until the mapping is unmapped at Commit.
func dontNeed([]byte) {}
