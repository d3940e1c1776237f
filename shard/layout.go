package shard

import (
	"fmt"
)

// Default sizes aimed at by the automatic layout: a cell block of X and a tile
// of Xᵀ are each about this many bytes, large enough to stream at full disk
// speed and small enough that a worker's block stays in cache-friendly pieces.
const targetBlockBytes = 4 << 20

// MaxDim bounds Cells and Genes so that every size computed from a layout fits
// in an int64 and every gene index fits in the int32 used by Writer.SetRow.
const MaxDim = 1<<31 - 1

// Layout is the geometry of a shard folder: the matrix size and how it is cut
// into files. Callers of Create set Cells, Genes, Masked and optionally
// RowsPerBlock and GenesPerTile; Create fills the rest (the derived fields are
// stored in manifest.json so that readers need not recompute them, and Open
// checks that they agree).
type Layout struct {
	// Cells is the number of rows of X (N).
	Cells int `json:"cells"`
	// Genes is the number of columns of X (D).
	Genes int `json:"genes"`
	// RowsPerBlock is the number of cells per cell block, a positive multiple
	// of 64; the last block holds the remainder. 0 asks Create for the
	// automatic choice (blocks of about 4 MiB, never more than the cells
	// rounded up to 64).
	RowsPerBlock int `json:"rows_per_block"`
	// GenesPerTile is the number of genes per tile of Xᵀ within a cell block;
	// the last tile holds the remainder. 0 asks Create for the automatic
	// choice (tiles of about 4 MiB, usually all genes in one tile).
	GenesPerTile int `json:"genes_per_tile"`
	// Masked says the shard also stores observed-mask planes (bit 1 = the
	// entry is observed) in both orientations.
	Masked bool `json:"masked"`

	// WordsPerRow is ceil(Genes/64): the uint64 words of one row of X.
	WordsPerRow int `json:"words_per_row"`
	// CellBlocks is ceil(Cells/RowsPerBlock).
	CellBlocks int `json:"cell_blocks"`
	// GeneTiles is ceil(Genes/GenesPerTile).
	GeneTiles int `json:"gene_tiles"`
}

// Range is the half-open index interval [Lo, Hi).
type Range struct {
	Lo, Hi int
}

// Len returns Hi - Lo.
func (r Range) Len() int { return r.Hi - r.Lo }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// resolve validates the caller's fields and fills the automatic and derived
// ones.
func (l Layout) resolve() (Layout, error) {
	if l.Cells < 1 || l.Cells > MaxDim {
		return l, fmt.Errorf("layout: cells = %d, want 1..%d", l.Cells, MaxDim)
	}
	if l.Genes < 1 || l.Genes > MaxDim {
		return l, fmt.Errorf("layout: genes = %d, want 1..%d", l.Genes, MaxDim)
	}
	l.WordsPerRow = ceilDiv(l.Genes, 64)
	cellsUp := ceilDiv(l.Cells, 64) * 64
	switch {
	case l.RowsPerBlock == 0:
		r := targetBlockBytes / (8 * l.WordsPerRow) / 64 * 64
		l.RowsPerBlock = max(64, min(r, cellsUp))
	case l.RowsPerBlock < 0 || l.RowsPerBlock%64 != 0:
		return l, fmt.Errorf("layout: rows per block = %d, want a positive multiple of 64", l.RowsPerBlock)
	}
	switch {
	case l.GenesPerTile == 0:
		segWords := l.RowsPerBlock / 64
		g := targetBlockBytes / (8 * segWords)
		if g >= l.Genes {
			l.GenesPerTile = l.Genes
		} else {
			l.GenesPerTile = max(64, g/64*64)
		}
	case l.GenesPerTile < 0:
		return l, fmt.Errorf("layout: genes per tile = %d, want positive", l.GenesPerTile)
	}
	l.GenesPerTile = min(l.GenesPerTile, l.Genes)
	l.CellBlocks = ceilDiv(l.Cells, l.RowsPerBlock)
	l.GeneTiles = ceilDiv(l.Genes, l.GenesPerTile)
	return l, nil
}

// DataBytes returns the bytes of the data files of a shard folder of
// layout l (X and Xᵀ, and the mask's planes when Masked), which Create
// maps in full: the room a writer needs beyond the manifest and the side
// files.
func (l Layout) DataBytes() (int64, error) {
	l, err := l.resolve()
	if err != nil {
		return 0, err
	}
	// Every block's Xᵀ tiles hold all genes in segWords words each.
	last := l.CellBlocks - 1
	segs := int64(last)*int64(l.segWords(0)) + int64(l.segWords(last))
	n := int64(l.Cells)*int64(l.WordsPerRow)*8 + segs*int64(l.Genes)*8
	if l.Masked {
		n *= 2
	}
	return n, nil
}

// check reports whether a stored layout is complete and self-consistent.
func (l Layout) check() error {
	want := Layout{Cells: l.Cells, Genes: l.Genes, RowsPerBlock: l.RowsPerBlock, GenesPerTile: l.GenesPerTile, Masked: l.Masked}
	if l.RowsPerBlock == 0 || l.GenesPerTile == 0 {
		return fmt.Errorf("layout: rows per block %d and genes per tile %d must be set", l.RowsPerBlock, l.GenesPerTile)
	}
	if l.GenesPerTile > l.Genes {
		return fmt.Errorf("layout: genes per tile %d exceeds genes %d", l.GenesPerTile, l.Genes)
	}
	want, err := want.resolve()
	if err != nil {
		return err
	}
	if want != l {
		return fmt.Errorf("layout: derived fields inconsistent: words_per_row %d, cell_blocks %d, gene_tiles %d; want %d, %d, %d",
			l.WordsPerRow, l.CellBlocks, l.GeneTiles, want.WordsPerRow, want.CellBlocks, want.GeneTiles)
	}
	return nil
}

// Block returns the cells of cell block b.
func (l Layout) Block(b int) Range {
	lo := b * l.RowsPerBlock
	return Range{lo, min(lo+l.RowsPerBlock, l.Cells)}
}

// Tile returns the genes of gene tile t.
func (l Layout) Tile(t int) Range {
	lo := t * l.GenesPerTile
	return Range{lo, min(lo+l.GenesPerTile, l.Genes)}
}

// blockBytes is the size of the X (or mask) file of cell block b.
func (l Layout) blockBytes(b int) int64 {
	return int64(l.Block(b).Len()) * int64(l.WordsPerRow) * 8
}

// segWords is the number of words per gene row of Xᵀ in cell block b.
func (l Layout) segWords(b int) int {
	return ceilDiv(l.Block(b).Len(), 64)
}

// tileBytes is the size of the Xᵀ (or transposed mask) file of cell block b,
// gene tile t.
func (l Layout) tileBytes(b, t int) int64 {
	return int64(l.Tile(t).Len()) * int64(l.segWords(b)) * 8
}

// File kinds, as recorded in File.Kind.
const (
	KindX        = "x"        // cell block of X
	KindXT       = "xt"       // tile of Xᵀ
	KindMask     = "mask"     // cell block of the observed mask
	KindMaskT    = "maskt"    // tile of the transposed observed mask
	KindGenes    = "genes"    // genes.tsv
	KindBarcodes = "barcodes" // barcodes.tsv
)

// blockName is the file name of cell block b of a row-major plane
// (kind KindX or KindMask).
func blockName(kind string, b int) string {
	return fmt.Sprintf("%s.%06d.bin", kind, b)
}

// tileName is the file name of tile (b, t) of a transposed plane
// (kind KindXT or KindMaskT).
func tileName(kind string, b, t int) string {
	return fmt.Sprintf("%s.%06d.%06d.bin", kind, b, t)
}
