//go:build amd64 && !purego

package h5

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly plane widening; tests switch it off to run
// the Go loops.
var useAVX2 = cpu.X86.HasAVX2

// The widening kernels read len(dst) rounded down to a multiple of 8
// elements from the byte planes (element i is p0[i], or p0[i] | p1[i]<<8)
// into dst and return how many they did; the caller does the rest.

//go:noescape
func widen1Float64(dst []float64, p0 []byte) int

//go:noescape
func widen2Float64(dst []float64, p0, p1 []byte) int

//go:noescape
func widen1Int32(dst []int32, p0 []byte) int

//go:noescape
func widen2Int32(dst []int32, p0, p1 []byte) int
