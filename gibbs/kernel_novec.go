//go:build !(goexperiment.simd && amd64)

package gibbs

// useVectorKernel is false: this build has no vector kernel. Building with
// GOEXPERIMENT=simd on amd64 adds the AVX-512 one (kernel_vec_amd64.go).
var useVectorKernel = false

// vecScratch is the vector kernel's scratch space: none in this build.
type vecScratch struct{}

// condSumsVec is never called in this build (useVectorKernel is false); it
// exists so that the dispatcher in stepSpec.sums compiles everywhere.
func condSumsVec(acc *[MaxL]int64, buf *vecScratch, active, want uint64, L int, planes []uint64, stride int, x, obs []uint64) int64 {
	panic("gibbs: no vector kernel in this build")
}
