package ingest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"scpipe/ingest/internal/h5"
	"scpipe/ingest/internal/h5gen"
)

// batchSource hands fixed batches to countPass; only scan is called.
type batchSource struct {
	source
	batches []*batch
}

func (s batchSource) describe() sourceInfo { return sourceInfo{matrix: "test.mtx"} }

func (s batchSource) scan(_ context.Context, fn func(*batch) error) error {
	for _, b := range s.batches {
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

// rangeSource hands the same batches to countPass as ranges read
// concurrently (countRanges): range r is batch r. Reading a range in fail
// fails, after a pause if it is in slow.
type rangeSource struct {
	batchSource
	fail map[int]bool
	slow map[int]time.Duration
}

func (s rangeSource) ranges() (int, func() (rangeReader, error)) {
	return len(s.batches), func() (rangeReader, error) {
		return func(r int, b *batch) error {
			if s.fail[r] {
				time.Sleep(s.slow[r])
				return fmt.Errorf("range %d is bad", r)
			}
			src := s.batches[r]
			b.cell, b.gene, b.val = append(b.cell[:0], src.cell...), append(b.gene[:0], src.gene...), append(b.val[:0], src.val...)
			b.runs = nil
			if src.runs != nil {
				b.runs = append([]cellRun{}, src.runs...)
			}
			return nil
		}, nil
	}
}

// spillRun is one decoded run of a spill, tagged with its frame.
type spillRun struct {
	frame int
	cell  int32
	genes []int32
}

// spillRuns decodes every frame of a finished spill.
func spillRuns(t *testing.T, s *spillWriter, cells, genes int) []spillRun {
	t.Helper()
	var runs []spillRun
	d := spillDecoder{name: s.f.Name(), cells: cells, genes: genes}
	for frame := range s.frames {
		_, b, err := s.readFrame(frame, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := d.frame(b, func(c int32, g []int32) {
			runs = append(runs, spillRun{frame, c, slices.Clone(g)})
		}); err != nil {
			t.Fatal(err)
		}
	}
	return runs
}

// mergeRuns joins consecutive runs of one cell, which workers may split.
func mergeRuns(runs []spillRun) []spillRun {
	var out []spillRun
	for _, r := range runs {
		if n := len(out); n > 0 && out[n-1].cell == r.cell {
			out[n-1].genes = append(out[n-1].genes, r.genes...)
			continue
		}
		out = append(out, spillRun{cell: r.cell, genes: slices.Clone(r.genes)})
	}
	return out
}

// countResult is what countPass produced for one split.
type countResult struct {
	c      *counts
	runs   []spillRun
	sorted bool
	frames int
}

func runCountPass(t *testing.T, src source, cells, genes int, kept []bool, split passSplit) countResult {
	t.Helper()
	// Two frames in memory, the rest in the file.
	s, err := createSpill(filepath.Join(t.TempDir(), "out"), 2*spillFrameCap(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.remove()
	c, err := countPass(context.Background(), src, cells, genes, kept, binariser{value: 0.5}, s, &progress{}, split, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.finish(); err != nil {
		t.Fatal(err)
	}
	runs := spillRuns(t, s, cells, genes)
	if s.sorted {
		// Frames of a sorted spill must hold disjoint cells: readSpill
		// applies them concurrently.
		frameOf := map[int32]int{}
		for _, r := range runs {
			if f, ok := frameOf[r.cell]; ok && f != r.frame {
				t.Fatalf("split %+v: cell %d in frames %d and %d", split, r.cell, f, r.frame)
			}
			frameOf[r.cell] = r.frame
		}
	}
	n, err := readSpill(context.Background(), s, cells, genes, 4, func(d *spillDecoder) runFunc { return d.listing(func(int32, []int32) {}) }, nil)
	if err != nil || n != c.ones || n != s.entries {
		t.Fatalf("split %+v: spill read back %d entries (%v), counted %d, wrote %d", split, n, err, c.ones, s.entries)
	}
	frames := 0
	if len(runs) > 0 {
		frames = runs[len(runs)-1].frame + 1
	}
	return countResult{c, mergeRuns(runs), s.sorted, frames}
}

// genBatches makes batches of the given lengths: cells in order (each
// holding a random number of entries) or shuffled, genes random, values
// 0..3 with fractions so that the order of additions shows in the sum.
func genBatches(rng *rand.Rand, lens []int, cells, genes, perCell int, sorted bool) []*batch {
	var bs []*batch
	cell := int32(0)
	left := 1 + rng.IntN(perCell)
	for _, n := range lens {
		b := &batch{cell: make([]int32, n), gene: make([]int32, n), val: make([]float64, n)}
		for k := range n {
			if left == 0 {
				cell = min(cell+1+int32(rng.IntN(2)), int32(cells-1))
				left = 1 + rng.IntN(perCell)
			}
			left--
			b.cell[k] = cell
			if !sorted {
				b.cell[k] = int32(rng.IntN(cells))
			}
			b.gene[k] = int32(rng.IntN(genes))
			b.val[k] = float64(rng.IntN(4)) + float64(rng.IntN(3))/3
		}
		bs = append(bs, b)
	}
	return bs
}

// withRuns copies batches, listing each one's cells as runs instead of
// entry by entry.
func withRuns(bs []*batch) []*batch {
	var out []*batch
	for _, b := range bs {
		out = append(out, &batch{gene: b.gene, val: b.val, runs: runsOf(b.cell)})
	}
	return out
}

// runsOf lists the runs of equal neighbours in cells; not nil.
func runsOf(cells []int32) []cellRun {
	runs := []cellRun{}
	for k, c := range cells {
		if k+1 == len(cells) || cells[k+1] != c {
			runs = append(runs, cellRun{cell: c, end: int32(k + 1)})
		}
	}
	return runs
}

// TestCountPassSplit checks the split counting pass against the serial one
// (one worker) at block and batch edges: same counts, bit-identical value
// sums, the same spilled entries per cell in the same order, and frames
// that hold disjoint cells whenever the spill is sorted.
func TestCountPassSplit(t *testing.T) {
	t.Parallel()
	const cells, genes = 3000, 50
	kept := make([]bool, genes)
	for g := range kept {
		kept[g] = g%7 != 3
	}
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 4095, 4096, 4097, 3*4096 + 5} {
		for _, sorted := range []bool{true, false} {
			for _, block := range []int{8, 64, 4096} {
				t.Run(fmt.Sprintf("n%d-sorted%v-block%d", n, sorted, block), func(t *testing.T) {
					t.Parallel()
					rng := rand.New(rand.NewPCG(uint64(n), uint64(block)))
					src := batchSource{batches: genBatches(rng, []int{n, n / 2, n}, cells, genes, 20, sorted)}
					want := runCountPass(t, src, cells, genes, kept, passSplit{workers: 1, block: block})
					checkCounts(t, src.batches, kept, want.c)
					for _, workers := range []int{2, 3, 4, 16} {
						got := runCountPass(t, src, cells, genes, kept, passSplit{workers: workers, block: block})
						if !slices.Equal(got.c.cellsPerGene, want.c.cellsPerGene) || !slices.Equal(got.c.genesPerCell, want.c.genesPerCell) ||
							got.c.ones != want.c.ones || got.c.entries != want.c.entries || math.Float64bits(got.c.sum) != math.Float64bits(want.c.sum) {
							t.Fatalf("%d workers: counts differ from one worker's", workers)
						}
						if got.sorted != want.sorted || len(got.runs) != len(want.runs) {
							t.Fatalf("%d workers: %d runs (sorted %v), one worker %d (sorted %v)", workers, len(got.runs), got.sorted, len(want.runs), want.sorted)
						}
						for i := range got.runs {
							if got.runs[i].cell != want.runs[i].cell || !slices.Equal(got.runs[i].genes, want.runs[i].genes) {
								t.Fatalf("%d workers: run %d differs", workers, i)
							}
						}
					}
					// The batches as ranges read by workers at once, cells
					// entry by entry and, if sorted, listed as runs as 10x
					// sources hand them over: the same counts and spill.
					ranged := []source{rangeSource{batchSource: src}}
					if sorted {
						runSrc := batchSource{batches: withRuns(src.batches)}
						ranged = append(ranged, runSrc, rangeSource{batchSource: runSrc})
					}
					for _, src := range ranged {
						for _, workers := range []int{1, 2, 3, 16} {
							got := runCountPass(t, src, cells, genes, kept, passSplit{workers: workers, block: block})
							if !slices.Equal(got.c.cellsPerGene, want.c.cellsPerGene) || !slices.Equal(got.c.genesPerCell, want.c.genesPerCell) ||
								got.c.ones != want.c.ones || got.c.entries != want.c.entries || math.Float64bits(got.c.sum) != math.Float64bits(want.c.sum) {
								t.Fatalf("%T, %d workers: counts differ from those of batches", src, workers)
							}
							if got.sorted != want.sorted || !slices.EqualFunc(got.runs, want.runs, func(a, b spillRun) bool { return a.cell == b.cell && slices.Equal(a.genes, b.genes) }) {
								t.Fatalf("%T, %d workers: spill differs from that of batches", src, workers)
							}
						}
					}
				})
			}
		}
	}
}

// TestRangeLen: ranges are whole chunks of both arrays where a common
// multiple is small enough, and never shorter than minRange.
func TestRangeLen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ ci, cd, want int64 }{
		{80000, 80000, 80000},       // CellRanger
		{8192, 16384, 65536},        // PyTables: indices int64, data int32
		{65536, 65536, 65536},       // one chunk a range
		{1000, 1500, 96000},         // 3000, doubled to minRange
		{0, 0, 65536},               // contiguous arrays
		{0, 100000, 100000},         // one chunked
		{100000, 70001, 100000},     // no small common multiple
		{1 << 20, 1 << 20, 1 << 20}, // a chunk longer than maxRange
	} {
		if got := rangeLen(tc.ci, tc.cd); got != tc.want {
			t.Errorf("rangeLen(%d, %d) = %d, want %d", tc.ci, tc.cd, got, tc.want)
		}
	}
}

// TestCountRangesFirstError: when several ranges fail to read, the first
// one's error is reported, whatever the number of workers and whichever
// failed first in time.
func TestCountRangesFirstError(t *testing.T) {
	t.Parallel()
	const cells, genes = 500, 50
	kept := make([]bool, genes)
	for g := range kept {
		kept[g] = true
	}
	rng := rand.New(rand.NewPCG(5, 5))
	lens := make([]int, 40)
	for i := range lens {
		lens[i] = 100
	}
	src := rangeSource{batchSource: batchSource{batches: genBatches(rng, lens, cells, genes, 20, true)}, fail: map[int]bool{13: true, 17: true, 30: true},
		slow: map[int]time.Duration{13: 50 * time.Millisecond}} // 17 fails first
	for _, workers := range []int{1, 2, 3, 8} {
		s, err := createSpill(filepath.Join(t.TempDir(), "out"), spillMemory, false)
		if err != nil {
			t.Fatal(err)
		}
		_, err = countPass(context.Background(), src, cells, genes, kept, binariser{value: 0.5}, s, &progress{}, passSplit{workers: workers, block: 8}, nil)
		s.remove()
		if err == nil || err.Error() != "range 13 is bad" {
			t.Fatalf("%d workers: error %v, want range 13's", workers, err)
		}
	}
}

// checkCounts compares c with counts taken entry by entry.
func checkCounts(t *testing.T, bs []*batch, kept []bool, c *counts) {
	t.Helper()
	cpg := make([]int32, len(c.cellsPerGene))
	gpc := make([]int32, len(c.genesPerCell))
	var ones, entries int64
	var sum float64
	for _, b := range bs {
		for k, v := range b.val {
			entries++
			sum += v
			if v > 0.5 && kept[b.gene[k]] {
				cpg[b.gene[k]]++
				gpc[b.cell[k]]++
				ones++
			}
		}
	}
	if !slices.Equal(cpg, c.cellsPerGene) || !slices.Equal(gpc, c.genesPerCell) || ones != c.ones || entries != c.entries ||
		math.Abs(sum-c.sum) > 1e-9*max(sum, 1) {
		t.Fatalf("counts differ from an entry-by-entry count (ones %d vs %d, sum %v vs %v)", c.ones, ones, c.sum, sum)
	}
}

// TestCountPassFrames: a spill of several frames whose cells span batch and
// range edges is cut only between cells, for any number of workers.
func TestCountPassFrames(t *testing.T) {
	t.Parallel()
	const cells, genes = 4000, 2000
	kept := make([]bool, genes)
	for g := range kept {
		kept[g] = true
	}
	rng := rand.New(rand.NewPCG(7, 8))
	lens := make([]int, 40)
	for i := range lens {
		lens[i] = 1<<16 + rng.IntN(1000)
	}
	src := batchSource{batches: genBatches(rng, lens, cells, genes, 3000, true)}
	var want countResult
	for _, workers := range []int{1, 2, 3} {
		got := runCountPass(t, src, cells, genes, kept, passSplit{workers: workers, block: 4096})
		if !got.sorted || got.frames < 3 {
			t.Fatalf("%d workers: spill of cells in order: sorted %v, %d frames; want sorted, several frames", workers, got.sorted, got.frames)
		}
		if workers == 1 {
			want = got
			continue
		}
		if len(got.runs) != len(want.runs) {
			t.Fatalf("%d workers: %d cells spilled, one worker %d", workers, len(got.runs), len(want.runs))
		}
		for i := range got.runs {
			if got.runs[i].cell != want.runs[i].cell || !slices.Equal(got.runs[i].genes, want.runs[i].genes) {
				t.Fatalf("%d workers: run %d differs", workers, i)
			}
		}
	}
}

// TestOrient checks the walk of indptr that gives each entry its cell,
// started anywhere in a matrix with empty cells, against indptr itself and
// against the cells' runs; and that a matrix with two bad entries reports
// the first.
func TestOrient(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	m := h5gen.CSC{Genes: 30, Cells: 60, Indptr: []int64{0}}
	for c := 0; c < m.Cells; c++ {
		k := rng.IntN(12)
		if c%5 == 2 {
			k = 0 // empty cells, also at range edges
		}
		for range k {
			m.Indices = append(m.Indices, int64(rng.IntN(m.Genes)))
			m.Data = append(m.Data, float64(1+rng.IntN(3)))
		}
		m.Indptr = append(m.Indptr, int64(len(m.Indices)))
	}
	f, err := h5.Open(writeTenXV3(t, m), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := openCompressed(f, "/matrix", m.Cells, m.Genes, true, "columns (cells)")
	if err != nil {
		t.Fatal(err)
	}
	nnz := len(m.Indices)
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, nnz} {
		for start := 0; start+n <= nnz; start += max(n, 1) {
			b := &batch{cell: make([]int32, n), gene: make([]int32, n), val: make([]float64, n)}
			for k := range n {
				b.gene[k], b.val[k] = int32(m.Indices[start+k]), m.Data[start+k]
			}
			if err := c.orient(b, int64(start)); err != nil {
				t.Fatal(err)
			}
			for k := range n {
				if p := int64(start + k); p < m.Indptr[b.cell[k]] || p >= m.Indptr[b.cell[k]+1] {
					t.Fatalf("entry %d given cell %d", p, b.cell[k])
				}
			}
			if n > 0 {
				if runs := c.cellRuns(nil, int64(start), n); !slices.Equal(runs, runsOf(b.cell)) {
					t.Fatalf("n %d start %d: runs %v, from the walk %v", n, start, runs, runsOf(b.cell))
				}
			}
		}
	}
	// Bad values at 9 and 40: the scan must report 9.
	m.Data[9], m.Data[40] = -1, math.NaN()
	f2, err := h5.Open(writeTenXV3(t, m), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	bad, err := openCompressed(f2, "/matrix", m.Cells, m.Genes, true, "columns (cells)")
	if err != nil {
		t.Fatal(err)
	}
	err = bad.scan(context.Background(), func(*batch) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "/matrix/data[9]: not a count: negative") {
		t.Fatalf("error %v, want data[9] negative", err)
	}
}

// TestCheckEntries compares the assembly check of indices and values with
// the Go loop, for every length up to 40 with a bad entry (an index at or
// past the bound, negative, or a value negative, NaN or infinite) at each
// position, and none: both must name the same first bad entry.
func TestCheckEntries(t *testing.T) {
	if !useAVX2 {
		t.Skip("no assembly check on this CPU or build")
	}
	c := &compressed{file: "f", minor: 100, indices: &h5.Dataset{}, data: &h5.Dataset{}}
	bad := []func(m []int32, v []float64, i int){
		func(m []int32, v []float64, i int) { m[i] = 100 },
		func(m []int32, v []float64, i int) { m[i] = -1 },
		func(m []int32, v []float64, i int) { v[i] = -0.5 },
		func(m []int32, v []float64, i int) { v[i] = math.NaN() },
		func(m []int32, v []float64, i int) { v[i] = math.Inf(1) },
	}
	for n := range 41 {
		for at := -1; at < n; at++ {
			for _, spoil := range bad {
				m, v := make([]int32, n), make([]float64, n)
				for i := range n {
					m[i], v[i] = int32(i*7%100), float64(i%5)
				}
				if at >= 0 {
					spoil(m, v, at)
				}
				got := errString(c.check(m, v, 0))
				useAVX2 = false
				want := errString(c.check(m, v, 0))
				useAVX2 = true
				if got != want || (at >= 0) != (want != "") {
					t.Fatalf("n %d, bad at %d: assembly says %q, Go %q", n, at, got, want)
				}
			}
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
