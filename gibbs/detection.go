package gibbs

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
)

// Detection holds, for every gene and code, the 2×2 table of the gene's
// observed entries by detection (x = 1 or 0) and by whether the cell uses
// the code: what a program's gene scores are computed from. Only observed
// entries count, so a held-out or missing entry is in no cell of a table.
type Detection struct {
	Genes, L int
	// Both[g*L+k] counts the observed ones of gene g in the cells using
	// code k, Used[g*L+k] the observed entries of gene g in those cells.
	Both, Used []int64
	// Ones[g] and Obs[g] are gene g's observed ones and observed entries.
	Ones, Obs []int64
}

// Detection counts the tables of every gene against the cells that use
// each code: uses[k] is the set of cells using code k, ⌈N/64⌉ words with
// cell n at bit n mod 64 of word n/64. Only the cells lo to hi−1 are
// counted, which must be whole segments (cell blocks) of XT: a process of
// a fit spread over many counts its own cells, and the sums of the
// tables over the processes are the whole data's. It reads those blocks
// of XT once, gene by gene, on workers goroutines (all cores when
// workers ≤ 0).
func (d Data) Detection(uses [][]uint64, lo, hi, workers int) (*Detection, error) {
	if d.XT == nil {
		return nil, fmt.Errorf("%w: XT is required", errShape)
	}
	genes, cells, L := d.XT.Rows(), d.XT.Cols(), len(uses)
	for k, u := range uses {
		if len(u) != (cells+63)/64 {
			return nil, fmt.Errorf("%w: code %d's cells take %d words, not %d", errShape, k+1, len(u), (cells+63)/64)
		}
	}
	bounds := d.XT.Segments()
	if !slices.Contains(bounds, lo) || !slices.Contains(bounds, hi) || lo > hi {
		return nil, fmt.Errorf("%w: cells %d to %d are not whole blocks of XT", errShape, lo, hi)
	}
	t := &Detection{Genes: genes, L: L, Both: make([]int64, genes*L), Used: make([]int64, genes*L),
		Ones: make([]int64, genes), Obs: make([]int64, genes)}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, genes))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { t.count(d, uses, lo, hi, genes*w/workers, genes*(w+1)/workers) })
	}
	wg.Wait()
	return t, nil
}

// count fills the tables of genes g0 to g1−1 over the cells lo to hi−1, a
// cell block (segment of XT) at a time so that each block's tile is read
// sequentially.
func (t *Detection) count(d Data, uses [][]uint64, lo, hi, g0, g1 int) {
	bounds := d.XT.Segments()
	used := make([]int, t.L) // cells using each code, per block, without a mask
	for s := 0; s+1 < len(bounds); s++ {
		if bounds[s] < lo || bounds[s+1] > hi {
			continue
		}
		w0 := bounds[s] / 64
		nw := (bounds[s+1] - bounds[s] + 63) / 64
		if d.MaskT == nil {
			for k, u := range uses {
				used[k] = popcount(u[w0 : w0+nw])
			}
		}
		for g := g0; g < g1; g++ {
			x := d.XT.Segment(g, s)
			var m []uint64
			if d.MaskT != nil {
				m = d.MaskT.Segment(g, s)
			}
			t.countBlock(g, x, m, uses, w0, used, bounds[s+1]-bounds[s])
		}
	}
}

// countBlock adds one cell block of gene g: its words x, observed mask m
// (nil: every entry observed, with used the cells of each code in the
// block), and the codes' cells from word w0 on.
func (t *Detection) countBlock(g int, x, m []uint64, uses [][]uint64, w0 int, used []int, cells int) {
	row := g * t.L
	if m == nil {
		t.Ones[g] += int64(popcount(x))
		t.Obs[g] += int64(cells)
		for k, u := range uses {
			t.Both[row+k] += int64(andCount(x, u[w0:]))
			t.Used[row+k] += int64(used[k])
		}
		return
	}
	var ones, obs int
	for i, w := range x {
		ones += bits.OnesCount64(w & m[i])
		obs += bits.OnesCount64(m[i])
	}
	t.Ones[g] += int64(ones)
	t.Obs[g] += int64(obs)
	for k, u := range uses {
		var both, seen int
		for i, w := range x {
			both += bits.OnesCount64(w & m[i] & u[w0+i])
			seen += bits.OnesCount64(m[i] & u[w0+i])
		}
		t.Both[row+k] += int64(both)
		t.Used[row+k] += int64(seen)
	}
}

func popcount(v []uint64) int {
	n := 0
	for _, w := range v {
		n += bits.OnesCount64(w)
	}
	return n
}

// andCount is the popcount of x AND u over x's words.
func andCount(x, u []uint64) int {
	n := 0
	u = u[:len(x)]
	for i, w := range x {
		n += bits.OnesCount64(w & u[i])
	}
	return n
}

// Phi is the phi coefficient (Pearson's correlation of two binary
// variables, Matthews' correlation) between gene g's detection and the use
// of code k over g's observed entries: 1 when exactly the code's cells
// detect the gene, 0 when detection is independent of the code, negative
// when its cells detect it less. Unlike a log-odds ratio it does not reward
// a gene that a handful of the code's cells detect and no other cell
// does, and unlike a difference of detection rates it does not reward a
// gene detected nearly everywhere. 0 when a margin is empty (no cell uses
// the code, or every cell or none detects the gene).
func (t *Detection) Phi(g, k int) float64 {
	n := float64(t.Obs[g])
	n11 := float64(t.Both[g*t.L+k])
	used, ones := float64(t.Used[g*t.L+k]), float64(t.Ones[g])
	den := used * (n - used) * ones * (n - ones)
	if den <= 0 {
		return 0
	}
	// n11·n00 − n10·n01 = n·n11 − used·ones.
	return (n*n11 - used*ones) / math.Sqrt(den)
}
