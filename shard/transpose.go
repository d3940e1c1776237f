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
				if gatherColumn(&a, src[base+gw:], wordsPerRow, n) == 0 {
					continue
				}
				transpose64(&a)
				lo := max(genes.Lo, gw*64)
				hi := min(genes.Hi, gw*64+64)
				scatterColumn(out[(lo-genes.Lo)*segWords+c:], segWords, a[lo-gw*64:hi-gw*64])
			}
		}
	}
}

// gatherColumn copies the n words src[0], src[stride], … into a, zeroes
// the rest of a, and returns the OR of the words. It and scatterColumn are
// transposeTile's inner loops, apart so that the compiler keeps their
// counters in registers: inlined, they spilled to the stack, which chained
// every iteration through a store and a load.
//
//go:noinline
func gatherColumn(a *[64]uint64, src []uint64, stride, n int) uint64 {
	var any uint64
	i := 0
	for k := range a[:n] {
		w := src[i]
		a[k] = w
		any |= w
		i += stride
	}
	clear(a[n:])
	return any
}

// scatterColumn writes the words of a to out[0], out[stride], ….
//
//go:noinline
func scatterColumn(out []uint64, stride int, a []uint64) {
	i := 0
	for _, w := range a {
		out[i] = w
		i += stride
	}
}
