//go:build !amd64 || purego

package ingest

// addCountedAVX2 reads no entry in this build (useAVX2 is false): the
// caller's loop counts and encodes them all.
func addCountedAVX2(val []float64, gene []int32, thr float64, cpg []int32, out []byte, r *gapRun) int {
	return 0
}
