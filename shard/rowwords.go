package shard

import "fmt"

// SetRowWords ORs a bit-packed row (Layout().WordsPerRow words, gene g at
// bit g%64 of word g/64, padding bits zero) into cell's row of X: the fast
// path for writers that already hold rows as bitsets. It panics if the
// length is wrong or a padding bit is set.
func (w *Writer) SetRowWords(cell int, words []uint64) { w.orRow(w.xw, cell, words) }

// SetObservedRowWords is SetRowWords for the observed mask. It panics if
// the layout is not Masked.
func (w *Writer) SetObservedRowWords(cell int, words []uint64) {
	w.mustMask()
	w.orRow(w.mw, cell, words)
}

func (w *Writer) orRow(plane [][]uint64, cell int, words []uint64) {
	row := w.row(plane, cell)
	w.wrote(row)
	if len(words) != len(row) {
		panic(fmt.Sprintf("shard: cell %d: row of %d words, want %d", cell, len(words), len(row)))
	}
	if g := w.layout.Genes % 64; g != 0 && words[len(words)-1]>>g != 0 {
		panic(fmt.Sprintf("shard: cell %d: padding bits past gene %d are set", cell, w.layout.Genes))
	}
	for i, x := range words {
		row[i] |= x
	}
}
