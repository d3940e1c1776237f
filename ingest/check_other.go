//go:build !amd64 || purego

package ingest

// useAVX2 is false: this build has no AVX2 assembly.
var useAVX2 = false

func checkEntriesAVX2(minor []int32, val []float64, lim uint32) bool { return false }
