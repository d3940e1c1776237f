package inflate

import "encoding/binary"

const (
	adlerMod  = 65521
	adlerNmax = 5552 // the most bytes before s2 could overflow 32 bits
)

// Adler32 returns the Adler-32 checksum of p (RFC 1950), as hash/adler32
// does. Where the CPU has AVX2, whole 32-byte blocks go to adlerBlocks
// (adler32_amd64.s); the rest, and every byte elsewhere, to adler32Words.
func Adler32(p []byte) uint32 {
	s1, s2 := adlerUpdate(1, 0, p)
	return s2<<16 | s1
}

// adlerElided returns the Adler-32 of p read with zeros in the spans
// (increasing, disjoint, within p). Zeros leave s1 as it is and add s1 to
// s2 once per byte.
func adlerElided(p []byte, spans []Span) uint32 {
	s1, s2 := uint32(1), uint32(0)
	at := 0
	for _, z := range spans {
		s1, s2 = adlerUpdate(s1, s2, p[at:z.Lo])
		s2 = uint32((uint64(s2) + uint64(z.Hi-z.Lo)%adlerMod*uint64(s1)) % adlerMod)
		at = z.Hi
	}
	s1, s2 = adlerUpdate(s1, s2, p[at:])
	return s2<<16 | s1
}

// adlerUpdate adds p to the sums s1, s2 (each below adlerMod).
func adlerUpdate(s1, s2 uint32, p []byte) (uint32, uint32) {
	for len(p) > 0 {
		q := p[:min(len(p), adlerNmax&^31)]
		p = p[len(q):]
		if useAVX2 {
			var n int
			s1, s2, n = adlerBlocks(s1, s2, q)
			q = q[n:]
		}
		s1, s2 = adler32Words(s1, s2, q)
	}
	return s1, s2
}

// adler32Words adds p (at most adlerNmax bytes) to the sums s1, s2 (each
// below adlerMod) and returns them reduced, folding 16 bytes per step
// instead of one: bytes b₀ … b₁₅ add Σbᵢ to s1 and 16·s1 + Σ(16−i)·bᵢ to s2.
// Both byte sums come from 64-bit words split into four 16-bit lanes (the
// even and the odd bytes): lanes add without carries, and the weighted sum
// is the top lane of lanes × weights, a product in which no lane reaches
// 2¹⁶.
func adler32Words(s1, s2 uint32, p []byte) (uint32, uint32) {
	const (
		lo   = 0x00ff00ff00ff00ff
		ones = 0x0001000100010001
		// Weights of bytes 0, 2, 4, 6 (even) and 1, 3, 5, 7 (odd) of the
		// first word (16 … 9) and of the second (8 … 1), lane 0 in the top
		// lane so that the product's top lane sums lane·weight.
		w1Even = 16<<48 | 14<<32 | 12<<16 | 10
		w1Odd  = 15<<48 | 13<<32 | 11<<16 | 9
		w2Even = 8<<48 | 6<<32 | 4<<16 | 2
		w2Odd  = 7<<48 | 5<<32 | 3<<16 | 1
	)
	for ; len(p) >= 16; p = p[16:] {
		a := binary.LittleEndian.Uint64(p)
		b := binary.LittleEndian.Uint64(p[8:])
		ae, ao, be, bo := a&lo, a>>8&lo, b&lo, b>>8&lo
		sum := (ae + ao + be + bo) * ones >> 48
		weighted := (ae*w1Even + ao*w1Odd + be*w2Even + bo*w2Odd) >> 48
		s2 += 16*s1 + uint32(weighted)
		s1 += uint32(sum)
	}
	for _, c := range p {
		s1 += uint32(c)
		s2 += s1
	}
	return s1 % adlerMod, s2 % adlerMod
}
