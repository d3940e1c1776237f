package shard

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"scpipe/internal/testkit"
)

func TestCreateExistingDestination(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dst := filepath.Join(parent, "out.shard")
	rng := rand.New(rand.NewPCG(3, 3))
	first := randomDense(rng, 70, 10, 0.3)
	writeShard(t, dst, Layout{}, first, nil, Manifest{Tool: "first"}, 1)

	_, err := Create(dst, Layout{Cells: 5, Genes: 5}, CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), dst) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("Create on an existing dst: err = %v, want one naming %s and --force", err, dst)
	}

	second := randomDense(rng, 5, 3, 0.5)
	w, err := Create(dst, Layout{Cells: 5, Genes: 3}, CreateOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range second.rows {
		w.SetRow(i, r)
	}
	// The old shard stays readable until Commit.
	if s, err := Open(dst); err != nil || s.Manifest().Tool != "first" {
		t.Fatalf("old shard before Commit: %v", err)
	} else {
		s.Close()
	}
	if err := w.Commit(context.Background(), Manifest{Tool: "second"}); err != nil {
		t.Fatal(err)
	}
	s := openShard(t, dst)
	if s.Manifest().Tool != "second" {
		t.Fatalf("after forced Commit, tool = %q", s.Manifest().Tool)
	}
	checkMatrices(t, s.X(), s.XT(), second)
	if got := testkit.Names(t, parent); !slices.Equal(got, []string{"out.shard"}) {
		t.Fatalf("parent holds %q after replacement, want only out.shard", got)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	w, err := Create(filepath.Join(parent, "a.shard"), Layout{Cells: 200, Genes: 100, RowsPerBlock: 64, Masked: true}, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Set(199, 99)
	w.SetObserved(0, 0)
	if got := testkit.Names(t, parent); len(got) != 1 || !strings.HasPrefix(got[0], "a.shard.tmp-") {
		t.Fatalf("while writing, parent holds %q, want one a.shard.tmp-* folder", got)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("second Abort: %v", err)
	}
	if got := testkit.Names(t, parent); len(got) != 0 {
		t.Fatalf("after Abort, parent holds %q", got)
	}
	if err := w.Commit(context.Background(), Manifest{}); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
}

func TestAbortAfterCommitKeepsShard(t *testing.T) {
	t.Parallel()
	dst := filepath.Join(t.TempDir(), "c.shard")
	w, err := Create(dst, Layout{Cells: 3, Genes: 3}, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Set(1, 2)
	if err := w.Commit(context.Background(), Manifest{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if s := openShard(t, dst); !s.X().At(1, 2) || s.Manifest().Ones != 1 {
		t.Fatal("shard damaged by Abort after Commit")
	}
}

func TestCommitFailureCleansUp(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		m    Manifest
		want string
	}{
		{"short gene ids", Manifest{GeneIDs: names("g", 9)}, "9 GeneIDs, want 10"},
		{"long barcodes", Manifest{Barcodes: names("b", 21)}, "21 Barcodes, want 20"},
		{"names without ids", Manifest{GeneNames: names("g", 10)}, "without gene ids"},
		{"tab in barcode", Manifest{Barcodes: append(names("b", 19), "x\ty")}, "barcodes.tsv: line 20"},
		{"newline in name", Manifest{GeneIDs: names("g", 10), GeneNames: append(names("g", 9), "a\nb")}, "genes.tsv: line 10"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			w, err := Create(filepath.Join(parent, "f.shard"), Layout{Cells: 20, Genes: 10}, CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w.Set(3, 4)
			err = w.Commit(context.Background(), c.m)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Commit error %v, want one containing %q", err, c.want)
			}
			if got := testkit.Names(t, parent); len(got) != 0 {
				t.Fatalf("after failed Commit, parent holds %q", got)
			}
		})
	}
}

func TestCreateRejectsBadLayout(t *testing.T) {
	t.Parallel()
	for _, l := range []Layout{
		{Cells: 0, Genes: 5},
		{Cells: 5, Genes: 0},
		{Cells: 5, Genes: 5, RowsPerBlock: 100},
		{Cells: 5, Genes: 5, RowsPerBlock: -64},
		{Cells: 5, Genes: 5, GenesPerTile: -1},
	} {
		parent := t.TempDir()
		if w, err := Create(filepath.Join(parent, "l.shard"), l, CreateOptions{}); err == nil {
			w.Abort()
			t.Fatalf("Create accepted layout %+v", l)
		}
		if got := testkit.Names(t, parent); len(got) != 0 {
			t.Fatalf("rejected layout %+v left %q", l, got)
		}
	}
}

func TestSetPanicsOutOfRange(t *testing.T) {
	t.Parallel()
	w, err := Create(filepath.Join(t.TempDir(), "p.shard"), Layout{Cells: 4, Genes: 70}, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for name, f := range map[string]func(){
		"gene 70":      func() { w.SetRow(0, []int32{1, 70}) },
		"gene -1":      func() { w.SetRow(0, []int32{-1}) },
		"cell 4":       func() { w.Set(4, 0) },
		"cell -1":      func() { w.Set(-1, 0) },
		"set gene 127": func() { w.Set(0, 127) }, // inside the padding word
		"unmasked":     func() { w.SetObserved(0, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestConcurrentSetRowDistinctCells(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 5))
	want := randomDense(rng, 256, 100, 0.3)
	dst := filepath.Join(t.TempDir(), "c.shard")
	w, err := Create(dst, Layout{Cells: 256, Genes: 100, RowsPerBlock: 128}, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	// Interleaved cells: neighbouring rows of the same block go to different
	// goroutines, which is safe because rows never share a word.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < 256; i += 4 {
				w.SetRow(i, want.rows[i])
			}
		})
	}
	wg.Wait()
	if err := w.Commit(context.Background(), Manifest{}); err != nil {
		t.Fatal(err)
	}
	s := openShard(t, dst)
	checkMatrices(t, s.X(), s.XT(), want)
}

func TestSideFilesRoundTrip(t *testing.T) {
	t.Parallel()
	ids, syms, types, bcs := names("ENSMUSG", 7), names("Gm", 7), names("Gene Expression ", 7), names("ACGT-1-", 5)
	bcs[2] = "" // an empty field survives
	cases := []struct {
		name string
		in   Manifest
		cols []string
	}{
		{"none", Manifest{}, nil},
		{"ids", Manifest{GeneIDs: ids}, []string{"id"}},
		{"ids types", Manifest{GeneIDs: ids, FeatureTypes: types}, []string{"id", "feature_type"}},
		{"all", Manifest{GeneIDs: ids, GeneNames: syms, FeatureTypes: types, Barcodes: bcs}, []string{"id", "name", "feature_type"}},
	}
	for _, c := range cases {
		dst := filepath.Join(t.TempDir(), "s.shard")
		w, err := Create(dst, Layout{Cells: 5, Genes: 7}, CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		in := c.in
		in.Source = Source{Path: "in.h5", Format: "10x-h5-v3", Bytes: 123, SHA256: strings.Repeat("ab", 32)}
		in.Filters = Filters{MinCellFrac: 0.01, GenesBefore: 30, GenesAfter: 7, CellsBefore: 5, CellsAfter: 5}
		if err := w.Commit(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		s := openShard(t, dst)
		m := s.Manifest()
		bcs, err := s.Barcodes()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m.GeneIDs, c.in.GeneIDs) || !slices.Equal(m.GeneNames, c.in.GeneNames) ||
			!slices.Equal(m.FeatureTypes, c.in.FeatureTypes) || !slices.Equal(bcs, c.in.Barcodes) {
			t.Fatalf("%s: annotations changed in the round trip", c.name)
		}
		if m.Barcodes != nil {
			t.Errorf("%s: Open read the barcodes, which only Barcodes should", c.name)
		}
		if !slices.Equal(m.GeneColumns, c.cols) || m.Source != in.Source || m.Filters != in.Filters {
			t.Fatalf("%s: columns %q source %+v filters %+v", c.name, m.GeneColumns, m.Source, m.Filters)
		}
		_, err = os.Stat(filepath.Join(dst, GenesName))
		if (err == nil) != (c.cols != nil) {
			t.Fatalf("%s: genes.tsv present = %v, want %v", c.name, err == nil, c.cols != nil)
		}
	}
}

func TestAutoLayout(t *testing.T) {
	t.Parallel()
	cases := []struct{ cells, genes int }{{1, 1}, {100, 5}, {1_300_000, 11_000}, {1_000_000, 33_000}, {10_000, 200_000}}
	for _, c := range cases {
		l, err := Layout{Cells: c.cells, Genes: c.genes}.resolve()
		if err != nil {
			t.Fatal(err)
		}
		if l.RowsPerBlock%64 != 0 || l.RowsPerBlock < 64 {
			t.Fatalf("%v: rows per block %d", c, l.RowsPerBlock)
		}
		if b := l.blockBytes(0); b > targetBlockBytes && l.RowsPerBlock > 64 {
			t.Fatalf("%v: block of %d bytes exceeds the %d target", c, b, targetBlockBytes)
		}
		if l.CellBlocks > 1 && l.blockBytes(0) < targetBlockBytes/2 {
			t.Fatalf("%v: blocks of %d bytes are needlessly small", c, l.blockBytes(0))
		}
		if tb := l.tileBytes(0, 0); tb > targetBlockBytes && l.GenesPerTile > 64 {
			t.Fatalf("%v: tile of %d bytes exceeds the target", c, tb)
		}
		if err := l.check(); err != nil {
			t.Fatalf("%v: resolved layout fails check: %v", c, err)
		}
	}
}

// TestHeapFlatInOnes writes the same shape at 1% and 60% density and checks
// that the live Go heap after SetRow (and after Commit) does not grow with
// the number of ones: the bits live in file-backed mappings.
func TestHeapFlatInOnes(t *testing.T) {
	const cells, genes = 4096, 2000 // 1 MiB of bits per plane
	row := make([]int32, 0, genes)
	live := func(p float64) (afterSet, afterCommit uint64) {
		rng := rand.New(rand.NewPCG(9, 9))
		dst := filepath.Join(t.TempDir(), "h.shard")
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		w, err := Create(dst, Layout{Cells: cells, Genes: genes, RowsPerBlock: 1024}, CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		for i := range cells {
			row = row[:0]
			for g := range genes {
				if rng.Float64() < p {
					row = append(row, int32(g))
				}
			}
			w.SetRow(i, row)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		afterSet = ms.HeapAlloc - min(base, ms.HeapAlloc)
		if err := w.Commit(context.Background(), Manifest{}); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return afterSet, ms.HeapAlloc - min(base, ms.HeapAlloc)
	}
	sparseSet, sparseCommit := live(0.01)
	denseSet, denseCommit := live(0.6) // ~4.9M ones, 60× the sparse count
	const slack = 256 << 10            // a quarter of one bit plane
	if denseSet > slack {
		t.Fatalf("live heap after SetRow is %d bytes: the 1 MiB bit plane seems to be on the heap", denseSet)
	}
	if denseSet > sparseSet+slack || denseCommit > sparseCommit+slack {
		t.Fatalf("heap grew with ones: after SetRow %d → %d bytes, after Commit %d → %d bytes",
			sparseSet, denseSet, sparseCommit, denseCommit)
	}
	t.Logf("live heap after SetRow: %d B (1%%) vs %d B (60%%); after Commit: %d vs %d", sparseSet, denseSet, sparseCommit, denseCommit)
}

// TestSetRowWords checks the bitset fast path (rowwords.go) against SetRow:
// the same rows written both ways give the same shard, and a row with a
// padding bit or the wrong length is refused.
func TestSetRowWords(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 13))
	x := randomDense(rng, 130, 70, 0.3)
	mask := randomDense(rng, 130, 70, 0.8)
	dst := filepath.Join(t.TempDir(), "w.shard")
	w, err := Create(dst, Layout{Cells: 130, Genes: 70, RowsPerBlock: 64, Masked: true}, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	pack := func(genes []int32) []uint64 {
		words := make([]uint64, w.Layout().WordsPerRow)
		for _, g := range genes {
			words[g/64] |= 1 << (g % 64)
		}
		return words
	}
	for i := range 130 {
		w.SetRowWords(i, pack(x.rows[i]))
		w.SetObservedRowWords(i, pack(mask.rows[i]))
	}
	for name, f := range map[string]func(){
		"padding bit": func() { w.SetRowWords(0, []uint64{0, 1 << 6}) },
		"short row":   func() { w.SetRowWords(0, []uint64{1}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	if err := w.Commit(context.Background(), Manifest{}); err != nil {
		t.Fatal(err)
	}
	s := openShard(t, dst)
	checkMatrices(t, s.X(), s.XT(), x)
	checkMatrices(t, s.Mask(), s.MaskT(), mask)
}

// TestFinishBlockEarly finishes blocks while others are still being written
// (masked and not, the last block partial), either from the mapping
// (FinishBlock) or from rows built by the caller (WriteBlock), and checks
// that the shard is byte for byte the one Commit alone writes, that a
// finished block's cells can no longer be written, and that no block is
// finished twice.
func TestFinishBlockEarly(t *testing.T) {
	t.Parallel()
	for _, masked := range []bool{false, true} {
		t.Run(fmt.Sprintf("masked=%v", masked), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(7, 7))
			x := randomDense(rng, 300, 150, 0.2)
			mask := randomDense(rng, 300, 150, 0.9)
			l := Layout{Cells: 300, Genes: 150, RowsPerBlock: 64, GenesPerTile: 64, Masked: masked}
			m := Manifest{Created: "2026-01-01T00:00:00Z"}
			// blockWords builds block b's rows of d as WriteBlock wants them.
			blockWords := func(d *dense, b int) []uint64 {
				lo, hi := b*64, min(b*64+64, d.cells)
				words := make([]uint64, (hi-lo)*3)
				for i := lo; i < hi; i++ {
					for _, g := range d.rows[i] {
						words[(i-lo)*3+int(g)/64] |= 1 << (g % 64)
					}
				}
				return words
			}
			write := func(dst, mode string) {
				w, err := Create(dst, l, CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Abort()
				var fin sync.WaitGroup
				for i := range x.cells {
					b := i / 64
					if mode == "words" && b%2 == 0 {
						// Even blocks are built by the caller, one bit
						// set in the mapping first to be replaced.
						if i%64 == 0 {
							w.Set(i, 1)
						}
					} else {
						w.SetRow(i, x.rows[i])
						if masked {
							w.SetObservedRow(i, mask.rows[i])
						}
					}
					if mode == "commit" || i%64 != 63 && i != x.cells-1 || b%2 != 0 {
						continue
					}
					// Even blocks finish early, concurrently with writes.
					fin.Go(func() {
						var err error
						if mode == "words" {
							var mw []uint64
							if masked {
								mw = blockWords(mask, b)
							}
							err = w.WriteBlock(b, blockWords(x, b), mw)
						} else {
							err = w.FinishBlock(b)
						}
						if err != nil {
							t.Error(err)
						}
					})
				}
				fin.Wait()
				if mode != "commit" {
					if err := w.FinishBlock(0); err == nil {
						t.Error("block 0 finished twice without error")
					}
					func() {
						defer func() {
							if recover() == nil {
								t.Error("SetRow into a finished block did not panic")
							}
						}()
						w.SetRow(5, []int32{1})
					}()
				}
				if err := w.Commit(context.Background(), m); err != nil {
					t.Fatal(err)
				}
			}
			dir := t.TempDir()
			want := filepath.Join(dir, "commit")
			write(want, "commit")
			names := testkit.Names(t, want)
			for _, mode := range []string{"finish", "words"} {
				dst := filepath.Join(dir, mode)
				write(dst, mode)
				if got := testkit.Names(t, dst); !slices.Equal(got, names) {
					t.Fatalf("%s: wrote %q, Commit alone %q", mode, got, names)
				}
				for _, name := range names {
					a, err := os.ReadFile(filepath.Join(want, name))
					if err != nil {
						t.Fatal(err)
					}
					b, err := os.ReadFile(filepath.Join(dst, name))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(a, b) {
						t.Errorf("%s: %s differs", mode, name)
					}
				}
				s := openShard(t, dst)
				checkMatrices(t, s.X(), s.XT(), x)
			}
		})
	}
}

// TestWriteBlockRejects: rows of the wrong length, with padding bits set,
// or without the mask a masked layout needs are refused, and the block can
// still be written correctly afterwards.
func TestWriteBlockRejects(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		masked  bool
		x, mask []uint64
	}{
		"short":           {x: make([]uint64, 63*2)},
		"padding":         {x: append(make([]uint64, 64*2-1), 1<<6)},
		"no rows":         {},
		"mask unexpected": {x: make([]uint64, 64*2), mask: make([]uint64, 64*2)},
		"mask missing":    {masked: true, x: make([]uint64, 64*2)},
		"mask short":      {masked: true, x: make([]uint64, 64*2), mask: make([]uint64, 2)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w, err := Create(filepath.Join(t.TempDir(), "r.shard"), Layout{Cells: 100, Genes: 70, RowsPerBlock: 64, Masked: tc.masked}, CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			if err := w.WriteBlock(0, tc.x, tc.mask); err == nil {
				t.Fatal("accepted")
			}
			var mask []uint64
			if tc.masked {
				mask = make([]uint64, 64*2)
			}
			if err := w.WriteBlock(0, make([]uint64, 64*2), mask); err != nil {
				t.Fatalf("valid rows after a refusal: %v", err)
			}
			if err := w.Commit(context.Background(), Manifest{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSetRowCountsNewBits: SetRow returns how many of its bits were not set
// before, counting a gene given twice once.
func TestSetRowCountsNewBits(t *testing.T) {
	t.Parallel()
	w, err := Create(filepath.Join(t.TempDir(), "n.shard"), Layout{Cells: 3, Genes: 130}, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, tc := range []struct {
		cell  int
		genes []int32
		want  int
	}{
		{0, []int32{1, 5, 129}, 3},
		{0, []int32{5, 7, 7}, 1},
		{1, []int32{5}, 1},
		{0, nil, 0},
		{0, []int32{129, 1}, 0},
	} {
		if got := w.SetRow(tc.cell, tc.genes); got != tc.want {
			t.Errorf("SetRow(%d, %v) = %d, want %d", tc.cell, tc.genes, got, tc.want)
		}
	}
}
