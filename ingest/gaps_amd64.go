//go:build amd64 && !purego

package ingest

// addCountedAVX2 does addCounted's loop for a run whose genes are all of
// kept types, eight entries at a time where it can:
//
//	for _, v := range val { // i counting up from 0
//		if x := gene[i]; v > thr {
//			cpg[x]++
//			r.n = putGap(out, r.n, x-r.prev)
//			r.prev = x
//			r.k++
//		}
//	}
//
// It stops before an entry whose gene is not in cpg or whose gap might not
// fit in out, and returns the entries it read. It needs AVX2 (useAVX2).
//
//go:noescape
func addCountedAVX2(val []float64, gene []int32, thr float64, cpg []int32, out []byte, r *gapRun) int
