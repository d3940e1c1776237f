package shard

// transpose64Go transposes a 64×64 bit matrix in place: afterwards bit r of
// a[c] is what bit c of a[r] was. It is the portable twin of
// transpose64GFNI. It replaces the reference loop
//
//	for r := range 64 { for c := range 64 { out[c] |= (a[r]>>c&1) << r } }
//
// by six rounds of block swaps (Hacker's Delight §7-3, adapted to
// least-significant-bit-first columns): round j exchanges the top-right and
// bottom-left j×j sub-blocks of every 2j×2j diagonal block.
func transpose64Go(a *[64]uint64) {
	m := uint64(0x00000000FFFFFFFF)
	for j := 32; j != 0; {
		for k := 0; k < 64; k = (k + j + 1) &^ j {
			t := ((a[k] >> j) ^ a[k+j]) & m
			a[k] ^= t << j
			a[k+j] ^= t
		}
		j >>= 1
		m ^= m << j
	}
}

// transposeTile writes tile genes of the transpose of a row block into out.
//
// src holds rows×wordsPerRow words (rows of X, genes as columns); out
// receives genes.Len() rows of segWords = ceil(rows/64) words, gene g of the
// tile in row g-genes.Lo, and must be zero on entry. Bits past rows in the
// last word of every output row stay zero.
func transposeTile(out, src []uint64, rows, wordsPerRow int, genes Range) {
	// Loop order: a band of 8 gene words (one cache line of every source
	// row) at a time, walking down the cells within it, so that a source line
	// is read once and the band's 512 output rows are written sequentially.
	const band = 8
	segWords := ceilDiv(rows, 64)
	var a [64]uint64
	for gw0 := genes.Lo / 64; gw0*64 < genes.Hi; gw0 += band {
		gw1 := min(gw0+band, ceilDiv(genes.Hi, 64))
		for c := 0; c < segWords; c++ {
			n := min(64, rows-c*64)
			base := c * 64 * wordsPerRow
			for gw := gw0; gw < gw1; gw++ {
				var any uint64
				for k := 0; k < n; k++ {
					w := src[base+k*wordsPerRow+gw]
					a[k] = w
					any |= w
				}
				if any == 0 {
					continue
				}
				for k := n; k < 64; k++ {
					a[k] = 0
				}
				transpose64(&a)
				lo := max(genes.Lo, gw*64)
				hi := min(genes.Hi, gw*64+64)
				for g := lo; g < hi; g++ {
					out[(g-genes.Lo)*segWords+c] = a[g-gw*64]
				}
			}
		}
	}
}
