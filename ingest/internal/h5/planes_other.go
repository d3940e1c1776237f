//go:build !amd64 || purego

package h5

// This build has no assembly: useAVX2 is false, so widen1 and widen2 widen
// every element in Go, and the widening kernels, should they be called,
// widen none and say so (they return 0).

// useAVX2 is false: this build has no assembly plane widening.
var useAVX2 = false

func widen1Float64(dst []float64, p0 []byte) int     { return 0 }
func widen2Float64(dst []float64, p0, p1 []byte) int { return 0 }
func widen1Int32(dst []int32, p0 []byte) int         { return 0 }
func widen2Int32(dst []int32, p0, p1 []byte) int     { return 0 }
