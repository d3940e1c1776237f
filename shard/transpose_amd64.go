//go:build amd64 && !purego

package shard

import "golang.org/x/sys/cpu"

// useGFNI selects transpose64GFNI, which needs AVX-512 VBMI (VPERMB) and
// GFNI (Intel Ice Lake and later, AMD Zen 4 and later); tests switch it off
// to run the Go path.
var useGFNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VBMI && cpu.X86.HasAVX512GFNI

// transpose64GFNI is transpose64Go in 59 vector instructions
// (transpose_amd64.s).
//
//go:noescape
func transpose64GFNI(a *[64]uint64)

// transpose64 transposes a 64×64 bit matrix in place (see transpose64Go).
func transpose64(a *[64]uint64) {
	if useGFNI {
		transpose64GFNI(a)
		return
	}
	transpose64Go(a)
}
