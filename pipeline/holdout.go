package pipeline

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"scpipe/internal/bernoulli"
	"scpipe/predictive"
	"scpipe/shard"
)

// holdout decides which observed entries are hidden from every fit. Entry
// (n, d) is held out with probability Frac, independently, from a random
// stream keyed by (Seed, n): the same entries for every L, chain, worker
// count and machine, and regenerated rather than stored.
type holdout struct {
	Seed uint64
	Frac float64
}

// row writes the held-out entries of cell n (a subset of observed, which
// has D bits) into dst.
//
// Its stream is math/rand/v2's PCG keyed by (Seed, n) rather than
// SplitMix64 (package splitmix): bernoulli.Each draws from a *rand.Rand,
// as the simulations' rows do, and the entries must stay those that runs
// already on disk held out, since writeSummary regenerates them to score the
// fits; another generator would score entries the fits had seen
// (TestHoldoutPinned).
func (h holdout) row(n, D int, observed, dst []uint64) {
	clear(dst)
	if h.Frac <= 0 {
		return
	}
	r := rand.New(rand.NewPCG(h.Seed^0x686f6c646f7574, uint64(n)+1))
	bernoulli.Each(D, h.Frac, r, func(d int) { dst[d/64] |= 1 << (d % 64) })
	for i := range dst {
		dst[i] &= observed[i]
	}
}

// writeFitMask writes, as the X plane of a shard folder at dst laid out like
// src, the entries the fits may see: observed and not held out. The sampler
// reads it as its observed mask, so held-out entries contribute nothing to
// the conditionals or to λ. opts says how the folder is written; it is
// replaced if it exists.
func writeFitMask(ctx context.Context, src *shard.Shard, dst string, h holdout, opts shard.CreateOptions) (int64, error) {
	m := src.Manifest()
	layout := shard.Layout{Cells: m.Cells, Genes: m.Genes, RowsPerBlock: m.Layout.RowsPerBlock, GenesPerTile: m.Layout.GenesPerTile}
	opts.Force = true
	w, err := shard.Create(dst, layout, opts)
	if err != nil {
		return 0, err
	}
	defer w.Abort()
	l := w.Layout()
	// Each cell block is built in memory and written whole (WriteBlock),
	// which writes its files directly and transposes it at once, instead
	// of faulting in the shard's mapped files row by row: at 1.3M cells ×
	// 11 000 genes the system time of a fit fell from 14 to 5 s.
	var heldOut atomic.Int64
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range max(1, min(opts.Workers, l.CellBlocks)) {
		g.Go(func() error {
			held := make([]uint64, l.WordsPerRow)
			var buf []uint64
			for b := int(next.Add(1) - 1); b < l.CellBlocks; b = int(next.Add(1) - 1) {
				if err := gctx.Err(); err != nil {
					return err
				}
				r := l.Block(b)
				buf = slices.Grow(buf[:0], r.Len()*l.WordsPerRow)[:r.Len()*l.WordsPerRow]
				var n int64
				for c := r.Lo; c < r.Hi; c++ {
					row := buf[(c-r.Lo)*l.WordsPerRow:][:l.WordsPerRow]
					src.ObservedRow(c, row)
					h.row(c, m.Genes, row, held)
					for i := range row {
						n += int64(bits.OnesCount64(held[i]))
						row[i] &^= held[i]
					}
				}
				heldOut.Add(n)
				if err := w.WriteBlock(b, buf, nil); err != nil {
					return fmt.Errorf("fit: writing the held-out mask: %w", err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	fm := shard.Manifest{
		Tool:   "scpipe fit (observed-entry mask for the fits: observed and not held out)",
		Source: shard.Source{Path: src.Dir(), Format: "scpipe-fit-mask", Seed: h.Seed},
	}
	if err := w.Commit(fm); err != nil {
		return 0, fmt.Errorf("fit: writing the held-out mask: %w", err)
	}
	return heldOut.Load(), nil
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
