package bench

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"scpipe/gibbs"
)

// randomMatrix returns a rows × cols matrix with segments of segCols
// columns, each bit set with probability ½, and its number of ones.
func randomMatrix(t *testing.T, rows, cols, segCols int, seed uint64) (*gibbs.Matrix, int64) {
	t.Helper()
	m, err := gibbs.NewSegmentedMatrix(rows, cols, segCols)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	var ones int64
	for i := range rows {
		for j := range cols {
			if r.IntN(2) == 1 {
				m.Set(i, j, true)
				ones++
			}
		}
	}
	return m, ones
}

// xorAll returns the XOR of every word of every segment of m.
func xorAll(m gibbs.BitMatrix) uint64 {
	var f uint64
	for i := range m.Rows() {
		for s := 0; s+1 < len(m.Segments()); s++ {
			for _, w := range m.Segment(i, s) {
				f ^= w
			}
		}
	}
	return f
}

func TestStreamCountsEveryWord(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ rows, cols, segCols int }{
		{1, 1, 0}, {3, 63, 0}, {5, 64, 0}, {7, 65, 0}, {130, 200, 64}, {64, 1000, 128}, {1000, 129, 0},
	} {
		for _, c := range []struct {
			workers int
			order   Order
		}{{1, FileOrder}, {2, FileOrder}, {5, FileOrder}, {1, RowOrder}, {3, RowOrder}} {
			workers := c.workers
			name := fmt.Sprintf("%dx%d/seg%d/workers%d/%v", tt.rows, tt.cols, tt.segCols, workers, c.order)
			a, onesA := randomMatrix(t, tt.rows, tt.cols, tt.segCols, uint64(tt.rows))
			b, onesB := randomMatrix(t, tt.cols, tt.rows, 0, uint64(tt.cols))
			res, err := Stream(context.Background(), workers, c.order, countOnes, a, b)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			folds, err := Stream(context.Background(), workers, c.order, readOnly, a, b)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if f := xorAll(a); folds[0].Fold != f || folds[0].Ones != 0 || folds[0].Bytes != res[0].Bytes {
				t.Errorf("%s: readOnly over A = %+v, want fold %x and the bytes of countOnes", name, folds[0], f)
			}
			if f := xorAll(b); folds[1].Fold != f || folds[1].Bytes != res[1].Bytes {
				t.Errorf("%s: readOnly over B = %+v, want fold %x", name, folds[1], f)
			}
			wordsA := 0
			for s := 0; s+1 < len(a.Segments()); s++ {
				wordsA += (a.Segments()[s+1] - a.Segments()[s] + 63) / 64
			}
			want := []StreamResult{
				{Bytes: int64(8 * tt.rows * wordsA), Ones: onesA},
				{Bytes: int64(8 * tt.cols * ((tt.rows + 63) / 64)), Ones: onesB},
			}
			if len(res) != 2 || res[0] != want[0] || res[1] != want[1] {
				t.Errorf("%s: Stream = %+v, want %+v", name, res, want)
			}
		}
	}
}

func TestStreamCancelled(t *testing.T) {
	t.Parallel()
	m, _ := randomMatrix(t, 10, 10, 0, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Stream(ctx, 2, FileOrder, countOnes, m); err == nil {
		t.Error("Stream with a cancelled context succeeded")
	}
}

func TestPopcount(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2, 3))
	for n := range 20 {
		ws := make([]uint64, n)
		want := int64(0)
		for i := range ws {
			ws[i] = r.Uint64()
			want += int64(bits.OnesCount64(ws[i]))
		}
		if got := popcount(ws); got != want {
			t.Errorf("popcount of %d words = %d, want %d", n, got, want)
		}
	}
}
