package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestSpillRoundTrip writes runs through a spill (several frames, cells in
// order or shuffled, genes sorted or not, runs of one cell split in two;
// frames in the file, in memory or both; the file written around the page
// cache or through it) and checks that reading it back
// yields every gene of every cell, with concurrent callbacks only for
// sorted spills, and releases the frames held in memory.
func TestSpillRoundTrip(t *testing.T) {
	t.Parallel()
	const cells, genes = 3000, 70000
	for _, tc := range []struct {
		name           string
		shuffleCells   bool
		shuffleGenes   bool
		wantConcurrent bool
		maxGap         int  // gaps of up to 31 all fit one byte
		memFrames      int  // frame buffers the spill may keep in memory
		cached         bool // the file goes through the page cache
	}{
		{"sorted", false, false, true, 200, 0, false},
		{"sorted-cached", false, false, true, 200, 0, true},
		{"sorted-small-gaps", false, false, true, 31, 0, false},
		{"unsorted-genes", false, true, true, 200, 0, false},
		{"unsorted-cells", true, false, false, 200, 0, false},
		{"unsorted-cells-cached", true, false, false, 200, 0, true},
		{"sorted-in-memory", false, false, true, 200, 1 << 20, false},
		{"sorted-both", false, false, true, 200, 2, false},
		{"unsorted-cells-both", true, false, false, 200, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(1, 2))
			s, err := createSpill(filepath.Join(t.TempDir(), "out"), tc.memFrames*spillFrameCap(), tc.cached)
			if err != nil {
				t.Fatal(err)
			}
			defer s.remove()
			order := make([]int32, cells)
			for i := range order {
				order[i] = int32(i)
			}
			if tc.shuffleCells {
				rng.Shuffle(cells, func(i, j int) { order[i], order[j] = order[j], order[i] })
			}
			want := make([][]int32, cells)
			var total int64
			for _, c := range order {
				var row []int32
				for g := int32(0); g < genes; g += 1 + int32(rng.IntN(tc.maxGap)) {
					row = append(row, g)
				}
				if tc.shuffleGenes {
					rng.Shuffle(len(row), func(i, j int) { row[i], row[j] = row[j], row[i] })
				}
				if len(row) == 0 {
					continue
				}
				half := len(row) / 2
				for _, part := range [][]int32{row[:half], row[half:]} {
					if len(part) > 0 {
						if err := s.addRun(c, part); err != nil {
							t.Fatal(err)
						}
					}
				}
				want[c] = append([]int32(nil), row...)
				total += int64(len(row))
			}
			if err := s.finish(); err != nil {
				t.Fatal(err)
			}
			inMemory := 0
			for _, f := range s.frames {
				if f.mem != nil {
					inMemory++
				}
			}
			fi, err := s.f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			switch onDisk := len(s.frames) - inMemory; {
			case len(s.frames) < 3:
				t.Fatalf("%d frames, want several", len(s.frames))
			case inMemory != min(tc.memFrames, len(s.frames)):
				t.Fatalf("%d frames of %d in memory, want %d", inMemory, len(s.frames), min(tc.memFrames, len(s.frames)))
			case fi.Size() != s.size || (s.size == 0) != (onDisk == 0):
				t.Fatalf("file of %d bytes (%d flushed) for %d frames on disk", fi.Size(), s.size, onDisk)
			}
			if s.sorted != tc.wantConcurrent {
				t.Fatalf("sorted = %v, want %v", s.sorted, tc.wantConcurrent)
			}
			got := make([][]int32, cells)
			var mu sync.Mutex
			var calls int
			var checked int32 // cells below it were complete when written said so
			n, err := readSpill(context.Background(), s, cells, genes, 4, func(d *spillDecoder) runFunc {
				mu.Lock()
				calls++
				mu.Unlock()
				return d.listing(func(c int32, run []int32) { got[c] = append(got[c], run...) })
			}, func(c int32) {
				// Every cell up to c must be complete, and c must grow.
				if c < checked {
					t.Errorf("written(%d) after written(%d)", c, checked-1)
				}
				for ; checked <= c; checked++ {
					if !slices.Equal(got[checked], want[checked]) {
						t.Errorf("written(%d) before cell %d was complete", c, checked)
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantConcurrent && int(checked) < cells-1 {
				t.Fatalf("written reached cell %d of %d", checked-1, cells)
			}
			if !tc.wantConcurrent && checked != 0 {
				t.Fatal("written called for an unsorted spill")
			}
			if n != total || s.entries != total {
				t.Fatalf("read %d genes, wrote %d (writer counted %d)", n, total, s.entries)
			}
			for i, f := range s.frames {
				if f.mem != nil {
					t.Fatalf("frame %d still held in memory after the spill was read", i)
				}
			}
			if !tc.wantConcurrent && calls != 1 {
				t.Fatalf("unsorted spill read by %d workers, want 1", calls)
			}
			for c := range cells {
				if !slices.Equal(got[c], want[c]) {
					t.Fatalf("cell %d: read %d genes, wrote %d (or in another order)", c, len(got[c]), len(want[c]))
				}
			}
		})
	}
}

// TestSpillCorrupt flips one byte of each region of a spill file and checks
// that reading fails with errSpill (or a read error) naming the file.
func TestSpillCorrupt(t *testing.T) {
	t.Parallel()
	for _, off := range []int64{0, 4, 8, 9, 100} {
		t.Run(fmt.Sprint(off), func(t *testing.T) {
			t.Parallel()
			s, err := createSpill(filepath.Join(t.TempDir(), "out"), 0, false)
			if err != nil {
				t.Fatal(err)
			}
			defer s.remove()
			for c := int32(0); c < 20; c++ {
				if err := s.addRun(c, []int32{1, 5, 9, 300}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.finish(); err != nil {
				t.Fatal(err)
			}
			// Through a descriptor of its own: s.f may be direct, and
			// refuse a transfer of one byte.
			f, err := os.OpenFile(s.f.Name(), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b := make([]byte, 1)
			if _, err := f.ReadAt(b, off); err != nil {
				t.Fatal(err)
			}
			b[0] ^= 0x40
			if _, err := f.WriteAt(b, off); err != nil {
				t.Fatal(err)
			}
			_, err = readSpill(context.Background(), s, 20, 400, 4, func(d *spillDecoder) runFunc {
				return d.listing(func(int32, []int32) {})
			}, nil)
			if err == nil {
				t.Fatal("corrupt spill read without error")
			}
			if !errors.Is(err, errSpill) {
				t.Fatalf("error %v: want errSpill", err)
			}
			if !strings.Contains(err.Error(), s.f.Name()) {
				t.Fatalf("error %q does not name %s", err, s.f.Name())
			}
		})
	}
}

// TestSpillRemoved: Run leaves no spill file beside the output, on success
// or failure.
func TestSpillRemoved(t *testing.T) {
	t.Parallel()
	in := filepath.Join(sharedData(t), "brain1m-10k-subset", "derived_v2_filtered_gene_bc_matrices_h5.h5")
	dir := t.TempDir()
	ingest(t, exact(in, filepath.Join(dir, "s")))
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "s" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("folder holds %v, want only the output", names)
	}
}

// BenchmarkSpillDecode decodes one frame of runs as the write pass does:
// about 1000 genes per cell out of 20 000, with exponential gaps of mean 20
// (one byte each, but for the one gene in thirty whose gap exceeds 63).
func BenchmarkSpillDecode(b *testing.B) {
	const cells, genes = 1000, 20000
	rng := rand.New(rand.NewPCG(1, 1))
	var seg spillSegment
	seg.reset()
	var n int64
	for c := range cells {
		var run []int32
		for g := int32(rng.IntN(40)); g < genes; g += 1 + int32(rng.ExpFloat64()*19) {
			run = append(run, g)
		}
		seg.addRun(int32(c), run)
		n += int64(len(run))
	}
	d := spillDecoder{name: "bench", cells: cells, genes: genes}
	b.SetBytes(int64(len(seg.buf)))
	for b.Loop() {
		if _, _, err := d.frame(seg.buf, func(int32, []int32) {}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "genes/s")
}

// benchRuns returns cells runs of about 1000 sorted genes out of 20 000
// (exponential gaps of mean 20), as 10x files hold them.
func benchRuns(cells int) ([][]int32, int) {
	rng := rand.New(rand.NewPCG(1, 1))
	runs := make([][]int32, cells)
	n := 0
	for c := range runs {
		for g := int32(rng.IntN(40)); g < 20000; g += 1 + int32(rng.ExpFloat64()*19) {
			runs[c] = append(runs[c], g)
		}
		n += len(runs[c])
	}
	return runs, n
}

// BenchmarkCountRuns counts a batch of 1000 cells as the count pass does
// on one core: thresholds, per-gene counts and the spill's runs.
func BenchmarkCountRuns(b *testing.B) { benchCountRuns(b, false) }

// BenchmarkCountRunsDeviance is BenchmarkCountRuns with the sums of the
// binomial deviance (--select-genes).
func BenchmarkCountRunsDeviance(b *testing.B) { benchCountRuns(b, true) }

func benchCountRuns(b *testing.B, deviance bool) {
	runs, n := benchRuns(1000)
	bt := &batch{}
	rng := rand.New(rand.NewPCG(2, 2))
	for c, run := range runs {
		for _, g := range run {
			bt.gene = append(bt.gene, g)
			bt.val = append(bt.val, float64(1+int(rng.ExpFloat64()*2)))
		}
		bt.runs = append(bt.runs, cellRun{int32(c), int32(len(bt.gene))})
	}
	typeKept := make([]bool, 20000)
	for i := range typeKept {
		typeKept[i] = true
	}
	var dev *devAccum
	if deviance {
		dev = newDevAccum(len(runs), typeKept)
	}
	p := newCountPart(20000, typeKept, dev, nil)
	genesPerCell := make([]int32, len(runs))
	sums := make([]float64, n/4096+1)
	b.SetBytes(int64(n))
	for b.Loop() {
		p.count(bt, 0, n, 4096, typeKept, 0, genesPerCell, sums)
		if dev != nil {
			// The edge runs go back, as put would return them, and
			// the cells' totals start again.
			dev.free(p.dev.edges.head)
			dev.free(p.dev.edges.tail)
			clear(dev.cellTotal)
		}
	}
}

// BenchmarkSetSpilled decodes a frame of 1024 rows of about 1000 genes
// each and sets them in a block buffer, as the write pass does: straight
// from the encoding (rising, the write pass's path for sorted genes), or
// listed and then set one by one (listed, its path for any other).
func BenchmarkSetSpilled(b *testing.B) {
	runs, n := benchRuns(1024)
	var seg spillSegment
	seg.reset()
	for c, run := range runs {
		seg.addRun(int32(c), run)
	}
	wpr := (20000 + 63) / 64
	geneMap := make([]int32, 20000)
	for i := range geneMap {
		geneMap[i] = int32(i)
	}
	br := &blockRows{rows: 1024, wpr: wpr, cells: 1024, state: make([]blockState, 1), live: map[int][]uint64{}, budget: 1}
	d := &spillDecoder{name: "bench", cells: 1024, genes: 20000}
	var scratch []int32
	listed := d.listing(func(c int32, run []int32) { br.setBuffered(int(c), run, geneMap, &scratch) })
	rising := func(c int32, enc []byte, k int) (int, error) {
		used, done, _, _ := (&risingRow{cell: -1}).set(c, enc, k, br.rowWords(int(c)), geneMap)
		if done != k {
			b.Fatal("genes do not rise")
		}
		return used, nil
	}
	for _, fn := range []struct {
		name string
		fn   runFunc
	}{{"rising", rising}, {"listed", listed}} {
		b.Run(fn.name, func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				clear(br.buffer(0))
				if _, _, err := d.runs(seg.buf, fn.fn); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "genes/s")
		})
	}
}

// addRun records genes (at least one) of cell in s.
func (s *spillWriter) addRun(cell int32, genes []int32) error {
	var g spillSegment
	g.reset()
	g.addRun(cell, genes)
	return s.addSegment(&g)
}

// frame calls fn with the decoded genes of each run of frame and returns
// the genes decoded and the cell of the last run.
func (d *spillDecoder) frame(frame []byte, fn func(cell int32, run []int32)) (int64, int32, error) {
	return d.runs(frame, d.listing(fn))
}

// listing returns the runFunc that lists each run's genes for fn.
func (d *spillDecoder) listing(fn func(cell int32, run []int32)) runFunc {
	return func(cell int32, enc []byte, k int) (int, error) {
		run, n, err := d.list(enc, k, 0)
		if err == nil {
			fn(cell, run)
		}
		return n, err
	}
}

// TestAddCountedAVX2 records runs with addCountedAVX2 and with the Go loop
// alone, and wants the same encoding, counts and genes recorded: runs of
// every length around the groups of eight, values at and below the
// threshold, gaps of one to three bytes, falling and repeated genes.
func TestAddCountedAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 in this build or CPU")
	}
	rng := rand.New(rand.NewPCG(9, 9))
	const genes = 30000
	typeKept := make([]bool, genes)
	for i := range typeKept {
		typeKept[i] = true
	}
	for trial := range 3000 {
		n := trial % 70
		val, gene := make([]float64, n), make([]int32, n)
		g := int32(rng.IntN(100))
		for i := range n {
			switch r := rng.IntN(100); {
			case r < 3:
				g -= int32(rng.IntN(200)) // falls or repeats
			case r < 8:
				g += 128 + int32(rng.IntN(9000))
			default:
				g += int32(rng.IntN(128))
			}
			g = max(0, min(g, genes-1))
			gene[i], val[i] = g, float64(rng.IntN(4))
			if trial%3 == 0 {
				val[i] = 1 + float64(rng.IntN(3))
			}
		}
		thr := float64(trial % 2)
		var seg [2]spillSegment // AVX2, Go
		cpg := [2][]int32{make([]int32, genes), make([]int32, genes)}
		var k [2]int
		for j, allKept := range []bool{true, false} {
			seg[j].reset()
			k[j] = seg[j].addCounted(3, val, gene, thr, typeKept, allKept, nil, cpg[j])
		}
		if k[0] != k[1] || !slices.Equal(seg[0].buf, seg[1].buf) || !slices.Equal(cpg[0], cpg[1]) {
			t.Fatalf("trial %d, genes %v, values %v: AVX2 records %d as %x, Go %d as %x", trial, gene, val, k[0], seg[0].buf, k[1], seg[1].buf)
		}
	}
}

// TestAddCountedAVX2Stops wants addCountedAVX2 to stop before a gene
// past cpg and before a gap that might not fit in out, in a group of eight
// and in the entries read one at a time.
func TestAddCountedAVX2Stops(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 in this build or CPU")
	}
	for _, tc := range []struct {
		name                 string
		entries, genes, room int // genes 0, 3, 6, …; len(cpg) = genes
		want                 int // entries read
	}{
		{"gene past cpg in a group", 20, 32, 100, 11},
		{"gene past cpg one at a time", 20, 53, 100, 18},
		{"gene past cpg first", 20, 0, 100, 0},
		{"out full for a group", 20, 100, 12, 8},
		{"out full one at a time", 12, 100, 12, 8},
		{"all", 20, 100, 100, 20},
	} {
		val := make([]float64, tc.entries)
		gene := make([]int32, tc.entries)
		for i := range val {
			val[i], gene[i] = 1, int32(3*i)
		}
		cpg := make([]int32, tc.genes+8)
		out := make([]byte, tc.room+8)
		r := gapRun{}
		got := addCountedAVX2(val, gene, 0, cpg[:tc.genes], out[:tc.room], &r)
		if got != tc.want || r.k != tc.want || r.n != tc.want {
			t.Errorf("%s: read %d, recorded %d in %d bytes, want %d", tc.name, got, r.k, r.n, tc.want)
		}
		if !slices.Equal(out[tc.room:], make([]byte, 8)) || !slices.Equal(cpg[tc.genes:], make([]int32, 8)) {
			t.Errorf("%s: written past out or cpg", tc.name)
		}
	}
}
