package simulate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/shard"
)

// freeSpace is a FreeSpace that tells n bytes free (ok false: cannot
// tell) whatever the path, so that a verdict does not depend on the disk
// the test runs on: TestSizesRefused once failed on a machine with 73 GB
// free, which holds an MTX folder's truth of 2³¹ cells.
func freeSpace(n int64, ok bool) FreeSpace {
	return func(string) (int64, bool) { return n, ok }
}

// TestSizesRefused: sizes no output can hold are refused before anything
// is drawn, naming the limit (--cells 1000000000000 allocated 125 GB in
// New, --genes 2000000000 8 GB a worker), and a simulation the output's
// file system has no room for is refused by CheckRoom, naming the output,
// at once and without drawing it; where free space cannot be told,
// nothing is refused for it.
func TestSizesRefused(t *testing.T) {
	t.Parallel()
	const gb = 1_000_000_000
	dir := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		cells, genes int
		shards       bool
		free         FreeSpace
		want         string // "": accepted
	}{
		{1_000_000_000_000, 100, false, nil, "1000000000000 cells: at most 2147483647"},
		{100, 2_000_000_000, true, nil, "2000000000 genes: at most 67108864"},
		// 2³¹ × 2²⁶ bits of shards: 17 PB.
		{shard.MaxDim, maxGenes, true, freeSpace(100_000*gb, true), dir + ": not enough free space: 2147483647 cells × 67108864 genes need at least"},
		{shard.MaxDim, maxGenes, true, freeSpace(0, false), ""},
		// An MTX folder's truth alone, 31 bytes a cell: 67 GB; its matrix
		// is estimated by WriteMTX once the truth is drawn.
		{shard.MaxDim, maxGenes, false, freeSpace(60*gb, true), dir + ": not enough free space"},
		{shard.MaxDim, maxGenes, false, freeSpace(73*gb, true), ""},
		{DefaultParams().Cells, DefaultParams().Genes, true, freeSpace(100_000, true), dir + ": not enough free space"},
		{DefaultParams().Cells, DefaultParams().Genes, true, freeSpace(gb, true), ""},
	} {
		p := DefaultParams()
		p.Cells, p.Genes = tc.cells, tc.genes
		err := CheckRoom(dir, p, tc.shards, tc.free)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%d × %d (shards %v): %v, want %q", tc.cells, tc.genes, tc.shards, err, tc.want)
		}
		if strings.Contains(tc.want, "free space") && !errors.Is(err, ErrNoRoom) {
			t.Errorf("%d × %d: %v does not wrap ErrNoRoom", tc.cells, tc.genes, err)
		}
		if strings.Contains(tc.want, "at most") {
			if _, err := New(context.Background(), p); err == nil {
				t.Errorf("New accepts %d × %d", tc.cells, tc.genes)
			}
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s made (%v)", dir, err)
	}
}

// TestWriteRefusedForRoom: WriteShards and WriteMTX check the output
// against the free space Truth.Free tells, before they draw it, and leave
// nothing behind when they refuse.
func TestWriteRefusedForRoom(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	p.Cells, p.Genes = 300, 100
	for _, shards := range []bool{true, false} {
		for _, tc := range []struct {
			free    int64
			refused bool
		}{{1000, true}, {1 << 40, false}} {
			tr, err := New(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			var asked []string
			tr.Free = func(path string) (int64, bool) {
				asked = append(asked, path)
				return tc.free, true
			}
			if shards {
				err = WriteShards(context.Background(), dir, tr, shard.CreateOptions{})
			} else {
				err = WriteMTX(context.Background(), dir, tr, false)
			}
			if errors.Is(err, ErrNoRoom) != tc.refused || !tc.refused && err != nil {
				t.Errorf("shards %v, %d bytes free: %v", shards, tc.free, err)
			}
			if len(asked) == 0 || filepath.Dir(asked[0]) != parent {
				t.Errorf("shards %v: Free asked about %q, want a path in %s", shards, asked, parent)
			}
			if left, _ := os.ReadDir(parent); tc.refused && len(left) > 0 && !strings.HasPrefix(left[0].Name(), ".") {
				t.Errorf("shards %v: refused, left %v", shards, left)
			}
		}
	}
}

// TestMinBytes: MinBytes is a lower bound of what WriteShards and
// WriteMTX write, and the estimate of the MTX matrix is within a factor
// of two below what it takes, for each kind.
func TestMinBytes(t *testing.T) {
	t.Parallel()
	for _, p := range []Params{
		func() Params { p := DefaultParams(); p.Cells, p.Genes = 1500, 700; return p }(),
		func() Params {
			p := DefaultParams()
			p.Kind, p.CodeDensity, p.UsageDensity, p.FlipOn, p.FlipOff = SingleCell, 0, 0, 0, 0
			p.Cells, p.Genes, p.SingleCell = 1500, 700, DefaultSingleCell()
			return p
		}(),
		func() Params { p := DefaultDigitsParams(); p.Cells, p.Missing = 300, 0.3; return p }(),
	} {
		tr, err := New(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, shards := range []bool{true, false} {
			if shards == false && p.Missing > 0 {
				continue
			}
			dir := filepath.Join(t.TempDir(), "out")
			write := func() error { return WriteMTX(context.Background(), dir, tr, false) }
			if shards {
				write = func() error { return WriteShards(context.Background(), dir, tr, shard.CreateOptions{}) }
			}
			if err := write(); err != nil {
				t.Fatal(err)
			}
			total, matrix := treeBytes(t, dir), fileBytes(t, filepath.Join(dir, "matrix.mtx.gz"))
			min, err := p.MinBytes(shards)
			if err != nil || min > total {
				t.Errorf("%v (shards %v): MinBytes = %d, %v; the output takes %d", p.Kind, shards, min, err, total)
			}
			if shards {
				continue
			}
			est, err := tr.mtxMatrixBytes(context.Background())
			if err != nil || est > matrix || 2*est < matrix {
				t.Errorf("%v: matrix.mtx.gz estimated at %d bytes (%v), takes %d", p.Kind, est, err, matrix)
			}
		}
	}
}

func treeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func fileBytes(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// countdown is a context whose Err reports cancellation after n calls
// that did not: Ctrl-C arriving at a chosen check of a loop. Its Done is
// nil, so the contexts derived from it never see it.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestStopAfterRows: Ctrl-C after the rows are drawn (while the barcodes,
// the manifest and the truth are written: seconds for tens of millions of
// cells) stops WriteShards with nothing left behind; it was ignored, and
// the output installed after it.
func TestStopAfterRows(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	p.Cells, p.Genes = 100, 50
	tr, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 4 {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		err := WriteShards(&countdown{context.Background(), k}, dir, tr, shard.CreateOptions{})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Ctrl-C at check %d: %v, want it stopped", k, err)
		}
		if left, _ := os.ReadDir(parent); len(left) > 1 || len(left) == 1 && !strings.HasPrefix(left[0].Name(), ".") {
			t.Errorf("Ctrl-C at check %d left %v", k, left)
		}
	}
	if err := WriteShards(&countdown{context.Background(), 1000}, filepath.Join(t.TempDir(), "out"), tr, shard.CreateOptions{}); err != nil {
		t.Errorf("no Ctrl-C: %v", err)
	}
}

// TestNewStops: New stops once its context is done, with its error, for
// each kind: 30 million cells took 6 s to draw, deaf to Ctrl-C.
func TestNewStops(t *testing.T) {
	t.Parallel()
	for _, p := range []Params{
		func() Params {
			p := DefaultParams()
			p.Cells, p.Genes, p.ActivityPrograms, p.ActivityFraction = 300_000, 50, 1, 0.3
			return p
		}(),
		func() Params {
			p := DefaultParams()
			p.Kind, p.CodeDensity, p.UsageDensity, p.FlipOn, p.FlipOff = SingleCell, 0, 0, 0, 0
			p.Cells, p.Genes, p.SingleCell = 300_000, 50, DefaultSingleCell()
			return p
		}(),
	} {
		for k := int64(0); ; k++ {
			if k > 1000 {
				t.Fatalf("%v: New never finished", p.Kind)
			}
			tr, err := New(&countdown{context.Background(), int(k)}, p)
			if err == nil {
				if k < 3 {
					t.Errorf("%v: New looked at its context %d times", p.Kind, k)
				}
				break
			}
			if !errors.Is(err, context.Canceled) || tr != nil {
				t.Fatalf("%v, stopped at look %d: %v, %v; want context.Canceled and no truth", p.Kind, k, tr, err)
			}
		}
	}
}
