package ingest

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Genes of ambientCounts: background genes, a hormone that the first
// hormoneCells cells make in bulk (half or more of their counts) and every
// other droplet catches a few molecules of, and an abundant gene that every
// cell makes at about the same level.
const (
	ambientCells   = 200
	ambientGenes   = 500
	hormoneGene    = 498
	abundantGene   = 499
	hormoneCells   = 40
	backgroundRate = 0.5
)

// ambientCounts draws the counts of a sample with ambient RNA, in cell
// order; binary gives every stored entry the value 1.
func ambientCounts(seed uint64, binary bool) []refEntry {
	rng := rand.New(rand.NewPCG(seed, 7))
	var es []refEntry
	for c := range int32(ambientCells) {
		for g := range int32(ambientGenes) {
			var v float64
			switch {
			case g == hormoneGene && c < hormoneCells:
				v = float64(400 + rng.IntN(600))
			case g == hormoneGene:
				v = float64(1 + rng.IntN(8)) // ambient: every droplet holds some
			case g == abundantGene:
				v = float64(10 + rng.IntN(6)) // about 2.5% of a cell's counts
			case rng.Float64() < backgroundRate:
				v = float64(1 + rng.IntN(3))
			}
			if v > 0 {
				if binary {
					v = 1
				}
				es = append(es, refEntry{c, g, v})
			}
		}
	}
	return es
}

// ambientBits binarises src with the ambient fraction rho (0: none) and
// returns the bits set, cell by cell.
func ambientBits(t *testing.T, src source, split passSplit, rho float64) [][]int32 {
	t.Helper()
	kept := allGenes()
	var amb *ambientLevels
	if rho > 0 {
		var err error
		if amb, err = measureAmbient(context.Background(), src, ambientCells, ambientGenes, kept, rho, split, nil, 1, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := createSpill(filepath.Join(t.TempDir(), "out"), spillMemory, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.remove()
	if _, err := countPass(context.Background(), src, ambientCells, ambientGenes, kept, binariser{ambient: amb}, s, &progress{}, split, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.finish(); err != nil {
		t.Fatal(err)
	}
	bits := make([][]int32, ambientCells)
	for _, r := range spillRuns(t, s, ambientCells, ambientGenes) {
		bits[r.cell] = append(bits[r.cell], r.genes...)
	}
	for _, b := range bits {
		slices.Sort(b)
	}
	return bits
}

// TestAmbientBinarisation: the hormone is 1 in the cells that make it and
// in no other, the abundant gene in every cell (the hormone cells' size
// leaves the hormone out), background counts of 1 stay 1; the same bits
// from every kind of source and any number of workers; --ambient 0 and 0/1
// inputs give the paper's count > 0.
func TestAmbientBinarisation(t *testing.T) {
	es := ambientCounts(1, false)
	batches := toBatches(es, []int{7000, 3333, 10240})
	shuffled := slices.Clone(es)
	rand.New(rand.NewPCG(3, 3)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	sources := map[string]source{
		"unsorted":       batchSource{batches: toBatches(shuffled, []int{5000})},
		"entries":        batchSource{batches: batches},
		"ranges":         rangeSource{batchSource: batchSource{batches: batches}},
		"runs":           batchSource{batches: withRuns(batches)},
		"ranges of runs": rangeSource{batchSource: batchSource{batches: withRuns(batches)}},
		// Ranges shorter than a cell: a cell spans three or more of them.
		"short ranges of runs": rangeSource{batchSource: batchSource{batches: withRuns(toBatches(es, []int{100, 37}))}},
	}
	for name, reads := range map[string]int{"unsorted": 2, "entries": 1, "ranges of runs": 1, "short ranges of runs": 1} {
		amb, err := measureAmbient(context.Background(), sources[name], ambientCells, ambientGenes, allGenes(), defaultAmbient, passSplit{3, 8}, nil, 1, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if amb.reads != reads {
			t.Errorf("%s: the ambient levels took %d reads, want %d", name, amb.reads, reads)
		}
	}
	var want [][]int32
	for name, src := range sources {
		for _, split := range []passSplit{{1, 8}, {3, 8}, {7, 512}} {
			bits := ambientBits(t, src, split, defaultAmbient)
			if want == nil {
				want = bits
				checkAmbientBits(t, es, bits)
				continue
			}
			if !slices.EqualFunc(bits, want, slices.Equal) {
				t.Errorf("%s, split %+v: bits differ from the first source's", name, split)
			}
		}
	}

	for _, tc := range []struct {
		name   string
		binary bool
		rho    float64
	}{{"ambient 0", false, 0}, {"0/1 input", true, defaultAmbient}} {
		es := ambientCounts(1, tc.binary)
		bits := ambientBits(t, batchSource{batches: toBatches(es, []int{5120})}, passSplit{2, 8}, tc.rho)
		n := 0
		for _, b := range bits {
			n += len(b)
		}
		if n != len(es) {
			t.Errorf("%s: %d bits set, want every one of the %d stored entries", tc.name, n, len(es))
		}
	}
}

func checkAmbientBits(t *testing.T, es []refEntry, bits [][]int32) {
	t.Helper()
	for c, b := range bits {
		if got, want := slices.Contains(b, hormoneGene), c < hormoneCells; got != want {
			t.Errorf("cell %d: hormone detected %v, want %v", c, got, want)
		}
		if !slices.Contains(b, abundantGene) {
			t.Errorf("cell %d: the abundant gene is not detected", c)
		}
	}
	for _, e := range es {
		if e.gene < hormoneGene && !slices.Contains(bits[e.cell], e.gene) {
			t.Errorf("cell %d gene %d: count %v of a background gene not detected", e.cell, e.gene, e.val)
		}
	}
}

// TestAmbientLimit checks the thresholds against the formula computed
// directly: κ·s_n·π_d, s_n the cell's total less its counts above 5% of it.
func TestAmbientLimit(t *testing.T) {
	es := ambientCounts(2, false)
	kept := allGenes()
	for _, src := range []source{
		batchSource{batches: toBatches(es, []int{9999})},
		// Cells cut by range edges, the hormone cells' dominant count
		// among the pieces: the edges' counts are weighed afterwards.
		rangeSource{batchSource: batchSource{batches: withRuns(toBatches(es, []int{100, 37}))}},
	} {
		amb, err := measureAmbient(context.Background(), src, ambientCells, ambientGenes, kept, 0.1, passSplit{2, 8}, nil, 1, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		checkAmbientLimits(t, es, amb)
	}
}

// checkAmbientLimits checks amb's limits at ρ = 0.1 against the formula
// computed directly from the entries es.
func checkAmbientLimits(t *testing.T, es []refEntry, amb *ambientLevels) {
	t.Helper()
	total := make([]float64, ambientCells)
	gene := make([]float64, ambientGenes)
	for _, e := range es {
		total[e.cell] += e.val
		gene[e.gene] += e.val
	}
	size := make([]float64, ambientCells)
	var all float64
	for _, e := range es {
		if e.val <= 0.05*total[e.cell] {
			size[e.cell] += e.val
			all += e.val
		}
	}
	kappa := 0.9 / math.Log(10)
	for c := range int32(ambientCells) {
		for g := range int32(ambientGenes) {
			want := kappa * size[c] / all * gene[g]
			if got := amb.limit(c, g); math.Abs(got-want) > 1e-12*want {
				t.Fatalf("limit of cell %d gene %d: %v, want %v", c, g, got, want)
			}
		}
	}
	for _, c := range []int32{0, hormoneCells} {
		if got := amb.limit(c, abundantGene); got < 3 || got > 8 {
			t.Errorf("cell %d: the abundant gene's limit is %v, want about 0.39 of its level (10–15) in every cell", c, got)
		}
	}
}

// allGenes keeps every gene of ambientCounts.
func allGenes() []bool {
	kept := make([]bool, ambientGenes)
	for g := range kept {
		kept[g] = true
	}
	return kept
}

// TestAmbientWarnsOnValuesNotCounts: values that are not whole numbers
// (an AnnData X normalised or log-transformed, as scanpy leaves it) are
// weighed as counts by the ambient-aware binarisation, so ingest warns,
// naming the matrix and a value; whole counts give no warning.
func TestAmbientWarnsOnValuesNotCounts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		transform func(float64) float64
		warn      bool
	}{
		{"counts", func(v float64) float64 { return v }, false},
		{"log1p", math.Log1p, true},
		{"scaled to 1e4", func(v float64) float64 { return v * 10000 / 2049 }, true},
		{"below one", func(v float64) float64 { return v / 2000 }, true},
	} {
		es := ambientCounts(1, false)
		for i := range es {
			es[i].val = tc.transform(es[i].val)
		}
		var buf strings.Builder
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
		src := batchSource{batches: toBatches(es, []int{5120})}
		if _, err := measureAmbient(context.Background(), src, ambientCells, ambientGenes, allGenes(), defaultAmbient, passSplit{2, 8}, nil, 1, log); err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(buf.String(), "not whole counts")
		if got != tc.warn {
			t.Errorf("%s: warned %v, want %v (log %q)", tc.name, got, tc.warn, buf.String())
		}
		if tc.warn && !strings.Contains(buf.String(), "matrix=") {
			t.Errorf("%s: the warning names no matrix: %q", tc.name, buf.String())
		}
	}
}
