//go:build amd64 && !purego

package inflate

import "golang.org/x/sys/cpu"

// useAVX2 selects adler32Blocks for Adler32; tests switch it off to run the
// Go path.
var useAVX2 = cpu.X86.HasAVX2

// adler32Blocks returns, for the 32-byte blocks of p (len(p) a positive
// multiple of 32, at most 5536), the sum of its bytes, Σ_k Σ_i (32−i)·B_k[i]
// and Σ_k (bytes of the blocks before B_k): what the serial loop
//
//	for _, b := range p { s1 += b; s2 += s1 }
//
// adds to s2 beyond 32·blocks·s1 is 32·prefix + weighted.
//
//go:noescape
func adler32Blocks(p []byte) (sum, weighted, prefix uint64)
