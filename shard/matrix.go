package shard

import "fmt"

// Matrix is a read-only bit matrix backed by memory-mapped shard files. Row i
// is stored as bit-packed little-endian uint64 words: column j is bit j%64 of
// word j/64 within its segment. The columns are split into segments at
// multiples of 64 (one segment for X and the mask; one per cell block for Xᵀ
// and the transposed mask), and the rows into tiles (the cell blocks of X;
// the gene tiles of Xᵀ), each tile of each segment one file.
//
// Matrix satisfies gibbs.BitMatrix. Its slices alias the mappings: they are
// read-only (writing faults) and valid until the Shard is closed.
type Matrix struct {
	rows, cols  int
	bounds      []int        // column boundaries, len = segments+1
	segWords    []int        // words per row in each segment
	rowsPerTile int          // rows per tile (the last tile may be shorter)
	tiles       [][][]uint64 // tiles[s][t]: words of tile t in segment s
}

// Rows returns the number of rows.
func (m *Matrix) Rows() int { return m.rows }

// Cols returns the number of columns.
func (m *Matrix) Cols() int { return m.cols }

// Segments returns the column boundaries b[0] = 0 < … < b[k] = Cols(); every
// interior boundary is a multiple of 64. The slice must not be modified.
func (m *Matrix) Segments() []int { return m.bounds }

// Segment returns the words of row i for columns [b[s], b[s+1]):
// (b[s+1]-b[s]+63)/64 words whose bits past b[s+1] are zero. It panics if i
// or s is out of range.
func (m *Matrix) Segment(i, s int) []uint64 {
	if uint(i) >= uint(m.rows) {
		panic(fmt.Sprintf("shard: row %d out of range [0, %d)", i, m.rows))
	}
	t := i / m.rowsPerTile
	n := m.segWords[s]
	off := (i - t*m.rowsPerTile) * n
	tile := m.tiles[s][t]
	if tile == nil {
		panic(fmt.Sprintf("shard: row %d segment %d lies in a cell block this Shard did not map (OpenBlocks)", i, s))
	}
	return tile[off : off+n : off+n]
}

// Row returns the words of row i of a matrix with one segment (X and Mask).
// It panics if the matrix has several segments.
func (m *Matrix) Row(i int) []uint64 {
	if len(m.segWords) != 1 {
		panic(fmt.Sprintf("shard: Row on a matrix of %d segments; use Segment", len(m.segWords)))
	}
	return m.Segment(i, 0)
}

// At reports bit (i, j). It is meant for tests and spot checks, not loops.
func (m *Matrix) At(i, j int) bool {
	if uint(j) >= uint(m.cols) {
		panic(fmt.Sprintf("shard: column %d out of range [0, %d)", j, m.cols))
	}
	s := 0
	for m.bounds[s+1] <= j {
		s++
	}
	j -= m.bounds[s]
	return m.Segment(i, s)[j>>6]>>(uint(j)&63)&1 == 1
}

// rowMajor assembles X (or the mask) from the words of its cell blocks.
func rowMajor(l Layout, blocks [][]uint64) *Matrix {
	return &Matrix{
		rows:        l.Cells,
		cols:        l.Genes,
		bounds:      []int{0, l.Genes},
		segWords:    []int{l.WordsPerRow},
		rowsPerTile: l.RowsPerBlock,
		tiles:       [][][]uint64{blocks},
	}
}

// colMajor assembles Xᵀ (or the transposed mask) from tiles[b][t], the words
// of gene tile t in cell block b.
func colMajor(l Layout, tiles [][][]uint64) *Matrix {
	m := &Matrix{
		rows:        l.Genes,
		cols:        l.Cells,
		bounds:      make([]int, 0, l.CellBlocks+1),
		segWords:    make([]int, l.CellBlocks),
		rowsPerTile: l.GenesPerTile,
		tiles:       tiles,
	}
	for b := 0; b < l.CellBlocks; b++ {
		m.bounds = append(m.bounds, l.Block(b).Lo)
		m.segWords[b] = l.segWords(b)
	}
	m.bounds = append(m.bounds, l.Cells)
	return m
}
