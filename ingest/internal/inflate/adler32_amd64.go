//go:build amd64 && !purego

package inflate

import "golang.org/x/sys/cpu"

// useAVX2 selects adlerBlocks for Adler32; tests switch it off to run the
// Go path.
var useAVX2 = cpu.X86.HasAVX2

// adlerBlocks adds the whole 32-byte blocks at the start of p (at most
// adlerNmax bytes) to the sums s1, s2 (each below adlerMod) with
// adler32Blocks, and returns the sums reduced and the bytes it added; the
// caller adds the rest.
func adlerBlocks(s1, s2 uint32, p []byte) (uint32, uint32, int) {
	n := len(p) &^ 31
	if n == 0 {
		return s1, s2, 0
	}
	sum, weighted, prefix := adler32Blocks(p[:n])
	blocks := uint64(n / 32)
	s2 = uint32((uint64(s2) + 32*blocks*uint64(s1) + 32*prefix + weighted) % adlerMod)
	s1 = uint32((uint64(s1) + sum) % adlerMod)
	return s1, s2, n
}

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
