package runsummary

import (
	"context"
	"math"
	"math/bits"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"scpipe/pipeline/internal/holdout"
	"scpipe/pipeline/internal/predictive"
	"scpipe/shard"
)

// heldOutScore is a fit's score on the held-out entries: the fraction
// predicted correctly, the mean log predictive probability (both NaN when
// nothing is held out) and, per cell, the summed log predictive, the
// entries predicted correctly and the entries held out (nil then).
type heldOutScore struct {
	accuracy, logpred float64
	perCell           []float32
	correct, entries  []int32
	offsets           geneOffsets // the gene offsets the fit's entries were read under
}

// geneOffsets says which gene offsets of a fit its held-out entries were
// read under: none, every cell the same (gene_lift) or each cell its
// sample's (gene_lift.SAMPLE).
type geneOffsets uint8

const (
	noGeneOffsets geneOffsets = iota
	meanGeneOffsets
	sampleGeneOffsets
)

// scoreHeldOut scores the held-out entries h under the plug-in predictive
// lik of the fit m. Cells are scored in chunks on workers goroutines; the
// chunks' sums are added in chunk order, so the result does not depend on
// workers.
func scoreHeldOut(ctx context.Context, src *shard.Shard, h holdout.Entries, m predictive.Means, lik predictive.PlugIn, workers int) (heldOutScore, error) {
	none := heldOutScore{accuracy: math.NaN(), logpred: math.NaN()}
	if h.Spec.Frac == 0 {
		return none, nil
	}
	cells := src.Manifest().Cells
	words := (src.Manifest().Genes + 63) / 64
	type sums struct {
		n, correct int64
		log        float64
	}
	parts := make([]sums, (cells+predictive.CellChunk-1)/predictive.CellChunk)
	perCell := make([]float32, cells)
	correct, entries := make([]int32, cells), make([]int32, cells)
	err := forCellChunks(ctx, cells, workers, func() func(k, lo, hi int) {
		obs, held := make([]uint64, words), make([]uint64, words)
		used := make([]int, 0, m.L)
		var cellLik predictive.Cell
		return func(k, lo, hi int) {
			s := &parts[k]
			for c := lo; c < hi; c++ {
				h.Row(src, c, obs, held)
				x := src.X().Segment(c, 0)
				used = m.Used(c, used)
				lik.Cell(c, &cellLik)
				cell := 0.0
				var right, n int32
				for i, w := range held {
					for ; w != 0; w &= w - 1 {
						d := i*64 + bits.TrailingZeros64(w)
						p := cellLik.P(d, m.Uncovered(c, d, used))
						one := x[i]>>(d%64)&1 == 1
						if (p >= 0.5) == one {
							s.correct++
							right++
						}
						if !one {
							p = 1 - p
						}
						lp := math.Log(max(p, 1e-300))
						s.log += lp
						cell += lp
						s.n++
						n++
					}
				}
				perCell[c], correct[c], entries[c] = float32(cell), right, n
			}
		}
	})
	if err != nil {
		return none, err
	}
	var tot sums
	for _, s := range parts {
		tot.n += s.n
		tot.correct += s.correct
		tot.log += s.log
	}
	if tot.n == 0 {
		return none, nil
	}
	return heldOutScore{accuracy: float64(tot.correct) / float64(tot.n), logpred: tot.log / float64(tot.n), perCell: perCell,
		correct: correct, entries: entries}, nil
}

// forCellChunks runs the chunks [k·c, min((k+1)·c, cells)), c =
// predictive.CellChunk, on workers goroutines, each of which gets its
// own chunk function from newWorker (and so its own scratch space). It stops
// early when ctx is cancelled and returns ctx's error.
func forCellChunks(ctx context.Context, cells, workers int, newWorker func() func(k, lo, hi int)) error {
	chunks := (cells + predictive.CellChunk - 1) / predictive.CellChunk
	var next atomic.Int64
	var g errgroup.Group
	for range max(1, min(workers, chunks)) {
		g.Go(func() error {
			chunk := newWorker()
			for {
				k := int(next.Add(1) - 1)
				if k >= chunks {
					return nil
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				chunk(k, k*predictive.CellChunk, min((k+1)*predictive.CellChunk, cells))
			}
		})
	}
	return g.Wait()
}
