package gibbs

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

// BitMatrix is a read-only binary matrix of Rows() × Cols() bits, stored as
// bit-packed rows of little-endian uint64 words: column j of a row is bit j%64
// of word j/64. The columns are split into segments (so that a matrix whose
// rows are tiled across files needs no copying).
type BitMatrix interface {
	Rows() int
	Cols() int
	// Segments returns the column boundaries b: b[0] = 0 < b[1] < … < b[k] = Cols(),
	// every interior boundary a multiple of 64. A matrix stored whole has b = {0, Cols()}.
	Segments() []int
	// Segment returns the words of row i for columns [b[s], b[s+1]):
	// (b[s+1]-b[s]+63)/64 words; bits past b[s+1] in the last word are zero.
	// The slice is read-only and valid until the matrix is closed.
	Segment(i, s int) []uint64
}

// Data is the input of a Sampler: the observations in both orientations.
//
// X is cells × genes (N × D) and XT is its transpose, genes × cells. Either may
// be split into column segments; for XT these are the cell blocks of the
// shards. Mask and MaskT mark the observed entries (1 = observed) and have the
// shapes of X and XT; both nil means every entry is observed. A 1 in X at an
// unobserved entry is ignored.
type Data struct {
	X, XT       BitMatrix
	Mask, MaskT BitMatrix
	counts      *dataCounts // taken by Counted; nil: NewSampler counts
}

// errShape is wrapped by the errors that report inconsistent matrix shapes.
var errShape = errors.New("gibbs: inconsistent matrix shapes")

// Matrix is an in-memory BitMatrix whose bits can be set. Each row stores its
// segments back to back; a segment of S columns takes (S+63)/64 words.
// Create one with NewMatrix or NewSegmentedMatrix.
type Matrix struct {
	rows, cols int
	bounds     []int // column boundaries of the segments
	offs       []int // word offset of each segment within a row; offs[k] = stride
	words      []uint64
}

// NewMatrix returns a rows × cols matrix of zeros stored as one segment.
func NewMatrix(rows, cols int) *Matrix {
	m, err := NewSegmentedMatrix(rows, cols, 0)
	if err != nil {
		panic(err) // unreachable: segCols 0 is always valid
	}
	return m
}

// NewSegmentedMatrix returns a rows × cols matrix of zeros whose columns are
// split into segments of segCols columns (the last one may be shorter).
// segCols must be a positive multiple of 64, or 0 for a single segment.
func NewSegmentedMatrix(rows, cols, segCols int) (*Matrix, error) {
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("%w: negative size %d × %d", errShape, rows, cols)
	}
	if segCols < 0 || segCols%64 != 0 {
		return nil, fmt.Errorf("%w: segment width %d is not a multiple of 64", errShape, segCols)
	}
	if segCols == 0 || segCols > cols {
		segCols = max(cols, 1)
	}
	m := &Matrix{rows: rows, cols: cols, bounds: []int{0}, offs: []int{0}}
	for b := 0; b < cols; {
		e := min(b+segCols, cols)
		m.bounds = append(m.bounds, e)
		m.offs = append(m.offs, m.offs[len(m.offs)-1]+(e-b+63)/64)
		b = e
	}
	if cols == 0 {
		m.bounds = append(m.bounds, 0)
		m.offs = append(m.offs, 0)
	}
	m.words = make([]uint64, rows*m.offs[len(m.offs)-1])
	return m, nil
}

// Rows returns the number of rows.
func (m *Matrix) Rows() int { return m.rows }

// Cols returns the number of columns.
func (m *Matrix) Cols() int { return m.cols }

// Segments returns the column boundaries of the segments. The caller must not
// modify the returned slice.
func (m *Matrix) Segments() []int { return m.bounds }

// Segment returns the words of row i in segment s. Writes through the slice
// change the matrix; bits past the segment's last column must stay zero.
func (m *Matrix) Segment(i, s int) []uint64 {
	stride := m.offs[len(m.offs)-1]
	lo, hi := i*stride+m.offs[s], i*stride+m.offs[s+1]
	return m.words[lo:hi:hi]
}

// locate returns the index in m.words of the word holding (i, j) and the bit.
func (m *Matrix) locate(i, j int) (int, uint64) {
	if uint(i) >= uint(m.rows) || uint(j) >= uint(m.cols) {
		panic(fmt.Sprintf("gibbs: index (%d, %d) out of range %d × %d", i, j, m.rows, m.cols))
	}
	s := 0
	if len(m.bounds) > 2 {
		s = j / (m.bounds[1] - m.bounds[0]) // all segments but the last have equal width
	}
	jj := j - m.bounds[s]
	return i*m.offs[len(m.offs)-1] + m.offs[s] + jj/64, 1 << (uint(jj) % 64)
}

// Set sets entry (i, j) to v. It panics if (i, j) is out of range.
func (m *Matrix) Set(i, j int, v bool) {
	w, b := m.locate(i, j)
	if v {
		m.words[w] |= b
	} else {
		m.words[w] &^= b
	}
}

// Get reports whether entry (i, j) is 1. It panics if (i, j) is out of range.
func (m *Matrix) Get(i, j int) bool {
	w, b := m.locate(i, j)
	return m.words[w]&b != 0
}

// Count returns the number of ones in m.
func (m *Matrix) Count() int {
	n := 0
	for _, w := range m.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// bitAt reports whether entry (i, j) of any BitMatrix is 1.
func bitAt(m BitMatrix, i, j int) bool {
	b := m.Segments()
	s := 0
	for j >= b[s+1] {
		s++
	}
	j -= b[s]
	return m.Segment(i, s)[j/64]>>(uint(j)%64)&1 != 0
}

// transposed returns the transpose of m as a Matrix whose columns are split
// into segments of segCols columns (a multiple of 64, or 0 for one segment).
func transposed(m BitMatrix, segCols int) (*Matrix, error) {
	t, err := NewSegmentedMatrix(m.Cols(), m.Rows(), segCols)
	if err != nil {
		return nil, err
	}
	b := m.Segments()
	for i := 0; i < m.Rows(); i++ {
		for s := 0; s+1 < len(b); s++ {
			for k, w := range m.Segment(i, s) {
				for ; w != 0; w &= w - 1 {
					t.Set(b[s]+64*k+bits.TrailingZeros64(w), i, true)
				}
			}
		}
	}
	return t, nil
}

// NewData returns Data for x and its observed mask (nil: all observed),
// computing the transposes with column segments of segCols cells (a multiple
// of 64, or 0 for one segment). It suits in-memory problems and tests.
func NewData(x, mask BitMatrix, segCols int) (Data, error) {
	xt, err := transposed(x, segCols)
	if err != nil {
		return Data{}, fmt.Errorf("gibbs: transposing X: %w", err)
	}
	d := Data{X: x, XT: xt}
	if mask != nil {
		mt, err := transposed(mask, segCols)
		if err != nil {
			return Data{}, fmt.Errorf("gibbs: transposing mask: %w", err)
		}
		d.Mask, d.MaskT = mask, mt
	}
	return d, nil
}

// checkMatrix verifies that m is rows × cols with well-formed segments.
func checkMatrix(name string, m BitMatrix, rows, cols int) error {
	if m.Rows() != rows || m.Cols() != cols {
		return fmt.Errorf("%w: %s is %d × %d, want %d × %d", errShape, name, m.Rows(), m.Cols(), rows, cols)
	}
	b := m.Segments()
	if len(b) < 2 || b[0] != 0 || b[len(b)-1] != cols {
		return fmt.Errorf("%w: %s segment boundaries %v do not span 0..%d", errShape, name, b, cols)
	}
	for s := 1; s+1 < len(b); s++ {
		if b[s] <= b[s-1] || b[s]%64 != 0 {
			return fmt.Errorf("%w: %s segment boundary %d is not an increasing multiple of 64", errShape, name, b[s])
		}
	}
	return nil
}

// countOnes returns the number of ones of m, masked by mask when it is not
// nil, counted on workers goroutines over contiguous ranges of rows (an
// integer sum, so the same for any number). m and mask must have the same
// shape and segments. At the 1.3M-cell file's size the four counts
// NewSampler takes read 12 GB, 19 s on one core.
func countOnes(m, mask BitMatrix, workers int) int64 {
	rows := m.Rows()
	workers = max(1, min(workers, rows))
	counts := make([]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			counts[w] = countRows(m, mask, rows*w/workers, rows*(w+1)/workers)
		})
	}
	wg.Wait()
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}

// countRows is countOnes over rows lo to hi−1, segment by segment: a
// segment's rows lie one after another (in Xᵀ, a cell block's tile), so
// each is read sequentially, where row by row would jump between hundreds
// of files at every row.
func countRows(m, mask BitMatrix, lo, hi int) int64 {
	var n int64
	segs := len(m.Segments()) - 1
	for s := 0; s < segs; s++ {
		for i := lo; i < hi; i++ {
			x := m.Segment(i, s)
			if mask == nil {
				for _, w := range x {
					n += int64(bits.OnesCount64(w))
				}
				continue
			}
			o := mask.Segment(i, s)
			for k, w := range x {
				n += int64(bits.OnesCount64(w & o[k]))
			}
		}
	}
	return n
}
