package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"scpipe/shard"
)

// TestWritePassBlocks applies a spill of many frames to a shard of many
// cell blocks, with blocks built in memory and finished while later ones
// are being set, and with a budget of one buffer (most blocks then go
// through the shard's mapping, interleaved with buffered ones), on one core
// (frames decoded in order, so a block finished a cell too early would be
// written after finishing) and on several; with and without dropped cells,
// which shift rows across block edges, and with dropped genes; and with
// cells out of order, which go through the mapping. X and Xᵀ must hold
// exactly the kept entries. Cells without entries lie at block
// edges and at the end.
func TestWritePassBlocks(t *testing.T) {
	defer func(b, f int) { blockBudget, spillFrame = b, f }(blockBudget, spillFrame)
	spillFrame = 1 // a frame per cell: a block may complete at any cell
	const cells, genes = 1000, 150
	rng := rand.New(rand.NewPCG(11, 12))
	input := make([][]int32, cells)
	for c := range input {
		k := rng.IntN(40)
		if c%64 == 1 || c%7 == 3 || c > 990 {
			k = 0
		}
		for _, g := range rng.Perm(genes)[:k] {
			input[c] = append(input[c], int32(g))
		}
		slices.Sort(input[c])
	}
	for _, dropCells := range []bool{false, true} {
		p := &filterPlan{cellMap: make([]int32, cells), geneMap: make([]int32, genes)}
		for g := range genes {
			p.geneMap[g] = -1
			if g%10 != 3 {
				p.geneMap[g] = int32(len(p.genes))
				p.genes = append(p.genes, g)
			}
		}
		for c := range cells {
			p.cellMap[c] = -1
			if !dropCells || c%5 != 2 {
				p.cellMap[c] = int32(len(p.cells))
				p.cells = append(p.cells, c)
			}
		}
		for _, tc := range []struct {
			name          string
			budget, procs int
			shuffled      bool // cells out of order: bits go through the mapping
		}{
			{"buffered", 256 << 20, 1, false},
			{"buffered", 256 << 20, 4, false},
			{"one buffer", 1, 1, false},
			{"one buffer", 1, 4, false},
			{"shuffled", 256 << 20, 4, true},
		} {
			t.Run(fmt.Sprintf("drop-cells=%v/%s/procs=%d", dropCells, tc.name, tc.procs), func(t *testing.T) {
				blockBudget = tc.budget
				dir := t.TempDir()
				order := rand.New(rand.NewPCG(1, 1)).Perm(cells)
				if !tc.shuffled {
					slices.Sort(order)
				}
				var runs []cellGenes
				for _, c := range order {
					if len(input[c]) > 0 {
						runs = append(runs, cellGenes{int32(c), input[c]})
					}
				}
				w, sorted, ones, dups := writeRuns(t, dir, runs, p, tc.procs)
				if sorted == tc.shuffled {
					t.Fatalf("spill sorted = %v, want %v", sorted, !tc.shuffled)
				}
				if dups.n != 0 || dups.row != -1 {
					t.Fatalf("no entry repeats, but writePass reports %+v", dups)
				}
				if err := w.Commit(context.Background(), shard.Manifest{}); err != nil {
					t.Fatal(err)
				}
				s, err := shard.Open(filepath.Join(dir, "s"))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if s.Manifest().Ones != ones {
					t.Fatalf("writePass set %d bits, the shard holds %d", ones, s.Manifest().Ones)
				}
				x, xt := s.X(), s.XT()
				for r, c := range p.cells {
					for g, in := range p.genes {
						_, want := slices.BinarySearch(input[c], int32(in))
						if x.At(r, g) != want || xt.At(g, r) != want {
							t.Fatalf("row %d (cell %d), gene %d: X %v, Xᵀ %v, want %v", r, c, g, x.At(r, g), xt.At(g, r), want)
						}
					}
				}
			})
		}
	}
}

// TestCancelDuringWritePass cancels an ingest half-way through the write
// pass, while blocks are being finished: Run must return the cancellation
// and leave nothing in the output's folder (no shard, temporary folder or
// spill).
func TestCancelDuringWritePass(t *testing.T) {
	defer func(f int, p int64) { spillFrame, progressStep = f, p }(spillFrame, progressStep)
	spillFrame, progressStep = 512, 1000 // many frames and progress reports
	in := filepath.Join(sharedData(t), "brain1m-10k-subset", "derived_v2_filtered_gene_bc_matrices_h5.h5")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt := DefaultOptions()
	opt.Input, opt.Output = in, filepath.Join(dir, "s")
	opt.Progress = func(done, total int64) {
		if done > total/2 && done < total {
			cancel()
		}
	}
	if _, err := Run(ctx, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run cancelled in the write pass: error %v, want context.Canceled", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestWritePassRepeats: entries that repeat a (cell, gene) already stored,
// within a run or across two runs of a cell, are counted and the first row
// holding one is named, whether blocks are built in memory or set through
// the mapping (cells out of order).
func TestWritePassRepeats(t *testing.T) {
	runs := []cellGenes{
		{3, []int32{1, 2}}, {3, []int32{2, 4}}, // one repeat across runs
		{10, []int32{7, 7}},     // one within a run
		{100, []int32{9, 9, 9}}, // two in another block
		{150, []int32{0, 1, 2}},
	}
	const cells, genes, entries = 200, 20, 12
	p := &filterPlan{cellMap: make([]int32, cells), geneMap: make([]int32, genes)}
	for c := range cells {
		p.cellMap[c], p.cells = int32(c), append(p.cells, c)
	}
	for g := range genes {
		p.geneMap[g], p.genes = int32(g), append(p.genes, g)
	}
	for _, shuffled := range []bool{false, true} {
		t.Run(fmt.Sprintf("shuffled=%v", shuffled), func(t *testing.T) {
			order := slices.Clone(runs)
			if shuffled {
				slices.Reverse(order)
			}
			_, _, ones, dups := writeRuns(t, t.TempDir(), order, p, 4)
			if ones != entries-4 || dups.n != 4 || dups.row != 3 {
				t.Errorf("set %d bits, repeats %+v; want %d bits, 4 repeats first in row 3", ones, dups, entries-4)
			}
		})
	}
}

// cellGenes is one run of a spill: genes of a cell.
type cellGenes struct {
	cell  int32
	genes []int32
}

// writeRuns spills runs in the order given and applies the spill with
// writePass to a new shard at dir/s of p's kept cells and genes, in blocks
// of 64 cells. It returns the writer, not yet committed, whether the spill
// was sorted, the bits set and the repeats.
func writeRuns(t *testing.T, dir string, runs []cellGenes, p *filterPlan, workers int) (w *shard.Writer, sorted bool, ones int64, dups repeats) {
	t.Helper()
	spill, err := createSpill(filepath.Join(dir, "s"), 3*spillFrameCap(), false) // three frames in memory, the rest in the file
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(spill.remove)
	var entries int64
	for _, r := range runs {
		if err := spill.addRun(r.cell, r.genes); err != nil {
			t.Fatal(err)
		}
		entries += int64(len(r.genes))
	}
	if err := spill.finish(); err != nil {
		t.Fatal(err)
	}
	w, err = shard.Create(filepath.Join(dir, "s"), shard.Layout{Cells: len(p.cells), Genes: len(p.genes), RowsPerBlock: 64}, shard.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Abort() })
	ones, dups, err = writePass(context.Background(), spill, w, p, &counts{entries: entries, ones: entries}, &progress{}, workers, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w, spill.sorted, ones, dups
}

// TestSetRising: setRising puts each kept gene of a rising run in its
// output column, for gene maps that drop genes at random and for words of
// 64 genes all kept or all dropped, and a run cut in two (the second part
// continuing the row).
func TestSetRising(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	for trial := range 50 {
		genes := 64 + rng.IntN(3000)
		geneMap := make([]int32, genes)
		out := int32(0)
		for g := range geneMap {
			keep := rng.IntN(10) < 6
			if w := g >> 6; trial%3 == 1 && w%4 == 0 || trial%3 == 2 {
				keep = w%2 == 0 // whole words kept or dropped
			}
			geneMap[g] = -1
			if keep {
				geneMap[g], out = out, out+1
			}
		}
		var run []int32
		for g := rng.IntN(20); g < genes; g += 1 + rng.IntN(150) {
			run = append(run, int32(g))
		}
		if len(run) < 2 {
			continue
		}
		want := make([]uint64, (out+63)/64)
		for _, g := range run {
			if o := geneMap[g]; o >= 0 {
				want[o>>6] |= 1 << (o & 63)
			}
		}
		cut := rng.IntN(len(run)-1) + 1
		got := make([]uint64, len(want))
		rise := risingRow{cell: -1}
		for _, part := range [][]int32{run[:cut], run[cut:]} {
			var seg spillSegment
			seg.reset()
			seg.addRun(5, part)
			d := spillDecoder{name: "t", cells: 10, genes: genes}
			if _, _, err := d.runs(seg.buf, func(cell int32, enc []byte, k int) (int, error) {
				used, done, _, _ := rise.set(cell, enc, k, got, geneMap)
				if done != k {
					t.Fatalf("trial %d: %d of %d genes rose", trial, done, k)
				}
				return used, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: row differs from geneMap's", trial)
		}
	}
}

// TestRiseBytes sets runs through setRising with riseBytes and with the Go
// loop alone, and wants the same words, guard words around the row
// untouched, and the same counts: runs of every length around the groups
// of eight, gaps of one, two and three bytes, runs that stop rising, genes
// near the end of the gene map, and genes mapped to no column.
func TestRiseBytes(t *testing.T) {
	if !useRiseBytes {
		t.Skip("no assembly loop in this build")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 3000 {
		genes := 64 + rng.IntN(4000)
		// Past its end, the map's backing array would put genes in
		// column 0: reading there changes the row.
		geneMap := make([]int32, genes+600)[:genes]
		out := int32(0)
		for g := range geneMap {
			geneMap[g] = -1
			if trial%4 == 0 || rng.IntN(10) < 8 {
				geneMap[g], out = out, out+1
			}
		}
		// Mostly one-byte gaps; now and then two- and three-byte ones, and
		// (past the first gene) a gap that repeats or falls, or a last
		// gene past the map's end.
		run := []int32{int32(rng.IntN(genes))}
		for k := rng.IntN(3 + trial%60); len(run) < k; {
			var d int32
			switch r := rng.IntN(200); {
			case r < 2:
				d = -int32(rng.IntN(3))
			case r < 3:
				d = -1 - int32(rng.IntN(9000))
			case r < 8:
				d = 128 + int32(rng.IntN(8128))
			case r < 9:
				d = 8256 + int32(rng.IntN(3000))
			default:
				d = 1 + int32(rng.IntN(127))
			}
			g := run[len(run)-1] + d
			if g < 0 || int(g) >= genes {
				if g >= 0 && trial%2 == 0 {
					run = append(run, g)
				}
				break
			}
			run = append(run, g)
		}
		enc := make([]byte, 0, 5*len(run))
		prev := int32(0)
		for _, g := range run {
			enc = enc[:putGap(enc[:cap(enc)], len(enc), g-prev)]
			prev = g
		}
		wpr := int(out+63) / 64
		var got, want []uint64
		var gr, wr [5]int
		for _, asm := range []bool{true, false} {
			buf := make([]uint64, wpr+2)
			buf[0], buf[wpr+1] = 0x5a5a, 0xa5a5
			useRiseBytes = asm
			used, done, kept, last, word := setRising(enc, len(run), -1, -1, buf[1:wpr+1], geneMap)
			r := [5]int{used, done, kept, int(last), int(word)}
			if asm {
				got, gr = buf, r
			} else {
				want, wr = buf, r
			}
		}
		useRiseBytes = true
		if gr != wr || !slices.Equal(got, want) {
			t.Fatalf("trial %d, run %v: assembly gives %v and words %x, Go %v and %x", trial, run, gr, got, wr, want)
		}
		if got[0] != 0x5a5a || got[wpr+1] != 0xa5a5 {
			t.Fatalf("trial %d: a guard word was written", trial)
		}
	}
}

// TestRiseBytesCorrupt gives riseBytes a gene map that points past the
// row: it must refuse rather than write there.
func TestRiseBytesCorrupt(t *testing.T) {
	if !useRiseBytes {
		t.Skip("no assembly loop in this build")
	}
	for _, tc := range []struct {
		name string
		run  []int32 // genes; the first is read from 0
		bad  int32   // gene mapped past the row
	}{
		{"in a group of eight", []int32{10, 20, 30, 40, 50, 60, 70, 80, 90}, 40},
		{"set one by one", []int32{10, 138, 139, 140}, 138}, // 138: a gap of two bytes
	} {
		geneMap := make([]int32, 2000) // a group needs room for eight gaps of 127
		for g := range geneMap {
			geneMap[g] = int32(g % 64)
		}
		geneMap[tc.bad] = 64 * 3
		gaps := make([]byte, 5*len(tc.run))
		n, prev := 0, int32(0)
		for _, g := range tc.run {
			n, prev = putGap(gaps, n, g-prev), g
		}
		gaps = gaps[:n]
		buf := make([]uint64, 5)
		s := riseState{word: -1}
		if n := riseBytes(gaps, &s, buf[1:4], geneMap); n != -1 {
			t.Errorf("%s: riseBytes = %d, want -1", tc.name, n)
		}
		if buf[0] != 0 || buf[4] != 0 {
			t.Errorf("%s: written past the row", tc.name)
		}
	}
}
