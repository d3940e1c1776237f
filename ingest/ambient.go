package ingest

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"sort"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// Ambient RNA: every droplet holds, beside its cell's own molecules, some
// of the free-floating mRNA of the whole sample, in proportion to each
// gene's share of it. So a transcript that most cells of one type make in
// bulk (insulin in islets, LYZ in blood) is counted, a few molecules at a
// time, in cells of every type, and binarised at count > 0 it is "detected"
// everywhere: its 1s say nothing of the cell type, and the sampler puts it
// in the housekeeping code.
//
// The ambient-aware binarisation asks of each stored count whether the
// cell's own expression is needed to explain it. Let s_n be cell n's size
// and π_d gene d's share of all counts. Under "ambient only" the count is
// Poisson with mean ρ·s_n·π_d (ρ the ambient fraction, the soup's share of
// a droplet's molecules, as SoupX estimates it: 0.02–0.2 in droplet data);
// under "expressed" it is Poisson with mean s_n·π_d, the gene's average
// level. The likelihood ratio of the two is above 1 when
//
//	c > κ·s_n·π_d,  κ = (1 − ρ) / ln(1/ρ)
//
// (κ = 0.317 at ρ = 0.05). A gene whose expected count s_n·π_d is below
// 1/κ, most genes in most cells, keeps the paper's count > 0; a count of an
// abundant gene must reach a third of the gene's average level, far above
// what ambient RNA brings (a twentieth of it at ρ = 0.05).
//
// A cell's size leaves out its own dominant transcripts: the counts that
// are more than 5% of the cell's total (as scanpy's normalize_total does
// with exclude_highly_expressed, per cell here). Otherwise a beta cell whose
// counts are half insulin would hold every other gene to a threshold twice
// as high, and lose the detection of its abundant genes for making insulin.
//
// Deciding needs every cell's size and every gene's total before the first
// entry is binarised, so the input is read twice more, before the counting
// pass: once for the totals, once for the sizes less the dominant counts.
// Every sum is an integer (values taken to 1/valueScale), so the thresholds
// do not depend on the number of workers or how the input is cut.

// defaultAmbient is the ambient fraction ρ ingest assumes by default: the
// middle of what SoupX and CellBender report for droplet data.
const defaultAmbient = 0.05

// dominantShare is the share of a cell's total above which a count is left
// out of the cell's size.
const dominantShare = 0.05

// ambientLevels holds the per-entry thresholds of the ambient-aware
// binarisation: entry (n, d) is 1 only when its value exceeds
// cellScale[n]·geneTotal[d].
//
// Of several samples (samples.go) each has its own soup: the sums run over
// the sample's cells, and a cell's counts are weighed against its own
// sample's gene totals.
type ambientLevels struct {
	cellScale []float64 // κ·s_n / Σ s over n's sample, in the same units as geneTotal
	geneTotal []float64 // Σ_n c_nd of each gene of the kept types, sample after sample
	// cellSample holds each cell's sample, nil for one input; genes is
	// the length of one sample's totals.
	cellSample []uint16
	genes      int
	reads      int // how many times the input was read to measure them
}

// limit returns the value an entry of cell and gene must exceed.
func (a *ambientLevels) limit(cell, gene int32) float64 {
	return a.cellScale[cell] * a.totals(cell)[gene]
}

// totals returns the gene totals of cell's sample.
func (a *ambientLevels) totals(cell int32) []float64 {
	if a.cellSample == nil {
		return a.geneTotal
	}
	base := int(a.cellSample[cell]) * a.genes
	return a.geneTotal[base : base+a.genes]
}

// sampleBase returns the offset of cell's sample's totals among sums of
// samples × genes.
func sampleBase(cellSample []uint16, cell int32, genes int) int {
	if cellSample == nil {
		return 0
	}
	return int(cellSample[cell]) * genes
}

// ambientKappa returns κ for the ambient fraction rho.
func ambientKappa(rho float64) float64 { return (1 - rho) / math.Log(1/rho) }

// measureAmbient reads src once, or twice where a cell's entries are not
// stored together, and returns the thresholds of the ambient-aware
// binarisation at ambient fraction rho, or nil when the input holds no
// value above 1 (a 0/1 matrix, which has no counts to weigh).
//
// A cell's size needs its total before its entries can be weighed against
// it. Where a run of entries is the cell's whole (a run inside its range,
// in an input that stores each cell's entries together: 10x, AnnData CSR,
// sorted Matrix Market), the run holds the total and the size is taken at
// once. A run at the edge of its range, which the cell may continue past,
// holds part of the total: its counts at most dominantShare of its own sum
// count in the size whatever the rest (the total is no smaller), and the
// few above it, at most 1/dominantShare of them, are kept aside and
// weighed once every total is in. An input that shows
// a cell in more than one run beside a whole one (stored gene by gene, or
// unsorted) is read once more for the sizes.
//
// cellSample, unless nil, holds each cell's sample, of samples: the levels
// are then measured per sample.
func measureAmbient(ctx context.Context, src source, cells, genes int, typeKept []bool, rho float64, split passSplit, cellSample []uint16, samples int, log *slog.Logger) (*ambientLevels, error) {
	samples = max(samples, 1)
	total, size := make([]int64, cells), make([]int64, cells)
	runs, whole := make([]int32, cells), make([]int32, cells)
	parts := make([]ambientPart, max(split.workers, 1))
	for i := range parts {
		parts[i].geneTotal = make([]int64, samples*genes)
	}
	err := scanRuns(ctx, src, split, func(r int, cell int32, gene []int32, val []float64, inside bool) {
		p := &parts[r]
		sum := p.add(gene, val, typeKept, sampleBase(cellSample, cell, genes))
		atomic.AddInt64(&total[cell], sum)
		atomic.AddInt32(&runs[cell], 1)
		if inside {
			atomic.AddInt32(&whole[cell], 1)
			atomic.AddInt64(&size[cell], cellSize(gene, val, typeKept, sum))
			return
		}
		atomic.AddInt64(&size[cell], p.holdLarge(cell, gene, val, typeKept, sum))
	})
	if err != nil {
		return nil, err
	}
	warnNotCounts(parts, src, log)
	if !slices.ContainsFunc(parts, func(p ambientPart) bool { return p.aboveOne }) {
		log.Info("ingest: no count above 1: binarising at the threshold alone, without the ambient RNA's levels")
		return nil, nil
	}
	geneTotal := make([]float64, samples*genes)
	for g := range geneTotal {
		var y int64
		for _, p := range parts {
			y += p.geneTotal[g]
		}
		geneTotal[g] = float64(y) / valueScale
	}

	grouped, reads := true, 1
	for n := range whole {
		grouped = grouped && (whole[n] == 0 || runs[n] == 1)
	}
	if grouped {
		for _, p := range parts {
			for _, e := range p.held {
				if float64(e.q) <= float64(total[e.cell])*dominantShare {
					size[e.cell] += e.q
				}
			}
		}
	} else {
		clear(size)
		reads++
		err = scanRuns(ctx, src, split, func(_ int, cell int32, gene []int32, val []float64, _ bool) {
			atomic.AddInt64(&size[cell], cellSize(gene, val, typeKept, total[cell]))
		})
		if err != nil {
			return nil, err
		}
	}
	all := make([]int64, samples)
	for n, s := range size {
		all[sampleBase(cellSample, int32(n), 1)] += s
	}
	a := &ambientLevels{cellScale: make([]float64, cells), geneTotal: geneTotal, cellSample: cellSample, genes: genes, reads: reads}
	for n, s := range size {
		if sum := all[sampleBase(cellSample, int32(n), 1)]; sum > 0 {
			a.cellScale[n] = ambientKappa(rho) / float64(sum) * float64(s)
		}
	}
	log.Info("ingest: ambient-aware binarisation", "ambient_fraction", rho, "kappa", ambientKappa(rho),
		"median_cell_size", medianSize(size), "reads", reads)
	return a, nil
}

// cellSize returns the part of a cell's entries, of total total, that
// counts in its size: the values of kept genes at most dominantShare of
// the total (all × valueScale).
func cellSize(gene []int32, val []float64, typeKept []bool, total int64) int64 {
	limit := float64(total) * dominantShare
	var sum int64
	for i, v := range val {
		if q := quant(v); typeKept[gene[i]] && float64(q) <= limit {
			sum += q
		}
	}
	return sum
}

// warnNotCounts warns when a part saw a value that is not a whole number:
// the binarisation weighs values as counts, and an AnnData X that scanpy
// normalised or log-transformed is not (its counts are often kept in a
// layer). Only a warning, as scanpy's own check is: some quantifiers
// (alevin's, for one) write fractional counts on the counts' scale.
func warnNotCounts(parts []ambientPart, src source, log *slog.Logger) {
	for _, p := range parts {
		if p.notCount != 0 {
			log.Warn("ingest: the values are not whole counts (normalised or log-transformed?), yet the ambient-aware binarisation weighs them as counts: "+
				"ingest the raw counts (from an h5ad, --layer counts or --layer raw where the file keeps them), or binarise at the threshold alone with --ambient 0",
				"matrix", src.describe().matrix, "value", p.notCount)
			return
		}
	}
}

// ambientPart is one worker's share of measureAmbient's read.
type ambientPart struct {
	geneTotal []int64
	aboveOne  bool
	notCount  float64     // a value that is not a whole number; 0: none seen
	held      []heldCount // counts of edge runs weighed once the totals are in
}

// heldCount is a count (× valueScale) of cell kept aside by holdLarge.
type heldCount struct {
	cell int32
	q    int64
}

// holdLarge returns the part of an edge run of cell, of sum sum, that
// counts in the cell's size whatever the cell's total, and keeps aside the
// counts above dominantShare of sum, which only the total decides.
func (p *ambientPart) holdLarge(cell int32, gene []int32, val []float64, typeKept []bool, sum int64) int64 {
	limit := float64(sum) * dominantShare
	var sure int64
	for i, v := range val {
		if !typeKept[gene[i]] {
			continue
		}
		if q := quant(v); float64(q) <= limit {
			sure += q
		} else {
			p.held = append(p.held, heldCount{cell, q})
		}
	}
	return sure
}

// add adds a run's values of kept genes to the genes' totals (from base,
// the run's sample's) and returns
// their sum (× valueScale).
func (p *ambientPart) add(gene []int32, val []float64, typeKept []bool, base int) int64 {
	var sum int64
	total := p.geneTotal[base:]
	for i, v := range val {
		if g := gene[i]; typeKept[g] {
			q := quant(v)
			sum += q
			total[g] += q
			p.aboveOne = p.aboveOne || v > 1
			if v != math.Trunc(v) {
				p.notCount = v
			}
		}
	}
	return sum
}

// runFn is handed a run of entries of one cell by worker r; inside says
// that the run lies strictly inside its range of entries, so that where the
// input stores each cell's entries together the run is the cell's whole.
type runFn func(r int, cell int32, gene []int32, val []float64, inside bool)

// scanRuns reads src once, handing fn each run of entries of one cell, from
// worker r of split's; the runs of a cell may come in several calls, from
// several workers at once, in any order. A source read in ranges is read on
// all workers, as the counting pass reads it.
func scanRuns(ctx context.Context, src source, split passSplit, fn runFn) error {
	if rs, ok := src.(ranger); ok {
		if n, open := rs.ranges(); n > 0 {
			return scanRanges(ctx, n, open, split, fn)
		}
	}
	return src.scan(ctx, func(b *batch) error {
		split.run(len(b.val), func(r, lo, hi int) { batchRuns(b, r, lo, hi, fn) })
		return nil
	})
}

// scanRanges is scanRuns for a source read in ranges: each worker reads
// ranges in turn, in no set order.
func scanRanges(ctx context.Context, n int, open func() (rangeReader, error), split passSplit, fn runFn) error {
	workers := max(min(split.workers, n), 1)
	readers := make([]rangeReader, workers)
	for w := range readers {
		var err error
		if readers[w], err = open(); err != nil {
			return err
		}
	}
	var next atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	for w, read := range readers {
		g.Go(func() error {
			var b batch
			for r := int(next.Add(1) - 1); r < n; r = int(next.Add(1) - 1) {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := read(r, &b); err != nil {
					return err
				}
				batchRuns(&b, w, 0, len(b.val), fn)
			}
			return nil
		})
	}
	return g.Wait()
}

// batchRuns hands fn the runs of one cell among entries [lo, hi) of b.
func batchRuns(b *batch, r, lo, hi int, fn runFn) {
	if b.runs == nil {
		for k := lo; k < hi; {
			end := k + 1
			for end < hi && b.cell[end] == b.cell[k] {
				end++
			}
			fn(r, b.cell[k], b.gene[k:end], b.val[k:end], k > lo && end < hi)
			k = end
		}
		return
	}
	ri := sort.Search(len(b.runs), func(i int) bool { return int(b.runs[i].end) > lo })
	for k := lo; k < hi; ri++ {
		end := min(int(b.runs[ri].end), hi)
		fn(r, b.runs[ri].cell, b.gene[k:end], b.val[k:end], k > lo && end < hi)
		k = end
	}
}

// medianSize returns the median of the cells' sizes, in counts, for the log.
func medianSize(size []int64) float64 {
	s := slices.Clone(size)
	slices.Sort(s)
	return float64(s[len(s)/2]) / valueScale
}
