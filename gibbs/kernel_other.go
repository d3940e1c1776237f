//go:build !amd64 || purego

package gibbs

// useVectorKernel is false: this build has no vector kernel. On amd64
// without the purego tag, kernel_amd64.s adds the AVX-512 one.
var useVectorKernel = false

// vecScratch is the vector kernel's scratch space: none in this build.
type vecScratch struct{}

// condSumsVec is never called in this build (useVectorKernel is false); it
// exists so that the dispatcher in stepSpec.scan compiles everywhere.
func condSumsVec(acc *[MaxL]int64, buf *vecScratch, active, want uint64, L int, planes []uint64, stride int, x, obs []uint64) int64 {
	panic("gibbs: no vector kernel in this build")
}
