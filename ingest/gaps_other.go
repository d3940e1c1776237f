//go:build !amd64 || purego

package ingest

func addCountedAVX2(val []float64, gene []int32, thr float64, cpg []int32, out []byte, r *gapRun) int {
	return 0
}
