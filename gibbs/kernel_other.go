//go:build !amd64 || purego

package gibbs

// vectorKernel names an assembly variant of the vector kernel: there are
// none in this build (vectorKernels is empty), so every Sampler sweeps with
// the Go kernel. On amd64 without the purego tag, kernel_amd64.go lists the
// assembly ones.
type vectorKernel struct{ name string }

var vectorKernels []vectorKernel

// vecScratch is the vector kernel's scratch space: none in this build.
type vecScratch struct{}

// vecRow is the vector kernel's per-row state: none in this build, whose
// sweeps never call its methods (Sampler.vector is false); they exist so
// that stepSpec.scan compiles everywhere. As the other packages' stand-ins
// for assembly do, they do no work: scans sum nothing and report no
// mismatch.
type vecRow struct{}

func (v *vecRow) prepare(active, want uint64, stride int) {}

func (v *vecRow) scan(kern vectorKernel, buf *vecScratch, planes []uint64, x, obs []uint64) uint64 {
	return 0
}

func (v *vecRow) scanLift(kern vectorKernel, buf *vecScratch, planes []uint64, x, obs []uint64, lift []uint64, lstride int) uint64 {
	return 0
}

func (v *vecRow) add(acc, lev *[MaxL]uint64) {}

func (v *vecRow) setTotals(t *[MaxL]int64) {}

// hasSumsX reports whether k can leave Σ popcount(s) to a stepTotals: no
// kernel can in this build.
func (k vectorKernel) hasSumsX() bool { return false }
