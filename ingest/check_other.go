//go:build !amd64 || purego

package ingest

// This build has no assembly: useAVX2 is false, so the Go loops check and
// count every entry, and the assembly's stand-ins, should they be called,
// do none of the work and say so (see gaps_other.go).

// useAVX2 is false: this build has no AVX2 assembly.
var useAVX2 = false

// checkEntriesAVX2 vouches for no entry in this build: the caller's loop
// checks them all.
func checkEntriesAVX2(minor []int32, val []float64, lim uint32) bool { return false }
