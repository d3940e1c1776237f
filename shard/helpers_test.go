package shard

import (
	"context"
	"hash/crc32"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// bitMatrix is a copy of gibbs.BitMatrix (ARCHITECTURE.md); shard must
// satisfy it without importing gibbs.
type bitMatrix interface {
	Rows() int
	Cols() int
	Segments() []int
	Segment(i, s int) []uint64
}

var _ bitMatrix = (*Matrix)(nil)

// dense is a reference matrix: rows of sorted gene indices plus a bit grid.
type dense struct {
	cells, genes int
	rows         [][]int32
	bit          [][]bool
}

// randomDense draws each entry independently with probability p.
func randomDense(rng *rand.Rand, cells, genes int, p float64) *dense {
	d := &dense{cells: cells, genes: genes, rows: make([][]int32, cells), bit: make([][]bool, cells)}
	for i := range cells {
		d.bit[i] = make([]bool, genes)
		for j := range genes {
			if rng.Float64() < p {
				d.bit[i][j] = true
				d.rows[i] = append(d.rows[i], int32(j))
			}
		}
	}
	return d
}

func (d *dense) ones() int64 {
	var n int64
	for _, r := range d.rows {
		n += int64(len(r))
	}
	return n
}

// writeShard writes x (and mask, when non-nil) with SetRow in shuffled cell
// order, splitting each row's genes into two calls, and commits m.
func writeShard(t testing.TB, dst string, l Layout, x, mask *dense, m Manifest, seed uint64) {
	t.Helper()
	l.Cells, l.Genes, l.Masked = x.cells, x.genes, mask != nil
	w, err := Create(dst, l, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	rng := rand.New(rand.NewPCG(seed, 1))
	order := rng.Perm(x.cells)
	for _, i := range order {
		r := x.rows[i]
		h := len(r) / 2
		w.SetRow(i, r[h:])
		w.SetRow(i, r[:h])
		if mask != nil {
			w.SetObservedRow(i, mask.rows[i])
		}
	}
	if err := w.Commit(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if got := w.Ones(); got != x.ones() {
		t.Fatalf("Writer.Ones = %d after Commit, want %d", got, x.ones())
	}
}

// checkMatrices asserts that s's X and XT (or Mask and MaskT) equal want and
// each other's transpose, bit by bit, with zero padding and the segment
// contract of gibbs.BitMatrix.
func checkMatrices(t *testing.T, x, xt *Matrix, want *dense) {
	t.Helper()
	if x.Rows() != want.cells || x.Cols() != want.genes || xt.Rows() != want.genes || xt.Cols() != want.cells {
		t.Fatalf("shapes X %d×%d, XT %d×%d, want %d×%d", x.Rows(), x.Cols(), xt.Rows(), xt.Cols(), want.cells, want.genes)
	}
	for _, m := range []*Matrix{x, xt} {
		checkSegmentContract(t, m)
	}
	if len(x.Segments()) != 2 {
		t.Fatalf("X has %d segments, want 1", len(x.Segments())-1)
	}
	for i := range want.cells {
		row := x.Row(i)
		for j := range want.genes {
			got := row[j/64]>>(j%64)&1 == 1
			if got != want.bit[i][j] {
				t.Fatalf("X[%d,%d] = %v, want %v", i, j, got, want.bit[i][j])
			}
			if xt.At(j, i) != want.bit[i][j] {
				t.Fatalf("XT[%d,%d] = %v, want %v", j, i, !want.bit[i][j], want.bit[i][j])
			}
		}
	}
}

// checkSegmentContract checks boundaries, slice lengths and zero padding.
func checkSegmentContract(t *testing.T, m *Matrix) {
	t.Helper()
	b := m.Segments()
	if b[0] != 0 || b[len(b)-1] != m.Cols() {
		t.Fatalf("segments %v do not span [0, %d]", b, m.Cols())
	}
	for s := 1; s < len(b)-1; s++ {
		if b[s]%64 != 0 || b[s] <= b[s-1] {
			t.Fatalf("segments %v: interior boundary %d not an increasing multiple of 64", b, b[s])
		}
	}
	for s := range len(b) - 1 {
		width := b[s+1] - b[s]
		for i := range m.Rows() {
			seg := m.Segment(i, s)
			if len(seg) != (width+63)/64 || cap(seg) != len(seg) {
				t.Fatalf("Segment(%d, %d): len %d cap %d, want %d", i, s, len(seg), cap(seg), (width+63)/64)
			}
			if width%64 != 0 {
				if pad := seg[len(seg)-1] >> (width % 64); pad != 0 {
					t.Fatalf("Segment(%d, %d): padding bits %#x set", i, s, pad)
				}
			}
		}
	}
}

func openShard(t testing.TB, dir string) *Shard {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// smallShard writes a 3-block masked shard with side files into a fresh
// folder and returns its path and manifest input.
func smallShard(t testing.TB) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	x := randomDense(rng, 150, 70, 0.2)
	mask := randomDense(rng, 150, 70, 0.9)
	dst := filepath.Join(t.TempDir(), "s.shard")
	m := Manifest{GeneIDs: names("ENSG", 70), GeneNames: names("G", 70), Barcodes: names("AAAC-", 150)}
	writeShard(t, dst, Layout{RowsPerBlock: 64, GenesPerTile: 30}, x, mask, m, 1)
	return dst
}

func names(prefix string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = prefix + string(rune('A'+i%26)) + string(rune('0'+i%10)) + string(rune('a'+i/26%26))
	}
	return s
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}
