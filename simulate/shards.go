package simulate

import (
	"context"
	"fmt"
	"path/filepath"

	"scpipe/shard"
)

// ShardsDir is the folder of WriteShards' output that holds the shards.
const ShardsDir = "shards"

// WriteShards writes the simulated binary matrix straight into shards in
// dir/shards, with the truth in dir/truth: the route for data too large for
// text. Missing entries (Params.Missing > 0) go into the shards' observed
// mask. Memory stays O(cells + genes) whatever the size: rows are generated
// one at a time and the shard writer maps its files. opts.Force replaces
// an existing dir; opts.Cached writes the shards through the page cache
// (see shard.CreateOptions); t.Workers goroutines draw the rows and write
// the shards (opts.Workers is not read).
func WriteShards(ctx context.Context, dir string, t *Truth, opts shard.CreateOptions) error {
	need, err := t.MinBytes(true)
	if err != nil {
		return err
	}
	return commitDir(dir, opts.Force, t.Log, func(tmp string) error {
		if err := checkFree(t.Free, dir, tmp, need, t.Params); err != nil {
			return err
		}
		sum, err := t.writeShards(ctx, filepath.Join(tmp, ShardsDir), opts.Cached)
		if err != nil {
			return err
		}
		return t.writeTruth(ctx, filepath.Join(tmp, TruthDir), sum)
	})
}

// writeShards writes the shards and counts the rows on the way, so that
// every row is drawn once; cached writes them through the page cache.
func (t *Truth) writeShards(ctx context.Context, dst string, cached bool) (Summary, error) {
	masked := t.Missing > 0
	w, err := shard.Create(dst, shard.Layout{Cells: t.Cells, Genes: t.Genes, Masked: masked}, shard.CreateOptions{Cached: cached, Workers: t.workers()})
	if err != nil {
		return Summary{}, err
	}
	defer w.Abort()
	// A block is the rows of cells lo.. one after another, each followed by
	// its observed-entry mask when there is one.
	type block struct {
		lo    int
		words []uint64
		count tally
	}
	quarter := t.quarters()
	var sum tally
	stride := t.words
	if masked {
		stride *= 2
	}
	err = eachBlock(ctx, t, func(b *rowBuf, lo, hi int) block {
		blk := block{lo: lo, words: make([]uint64, 0, (hi-lo)*stride)}
		for n := lo; n < hi; n++ {
			t.draw(n, b)
			blk.count.add(n, b, quarter)
			blk.words = append(blk.words, b.row...)
			if masked {
				t.ObservedRow(n, b.clean)
				blk.words = append(blk.words, b.clean...)
			}
		}
		return blk
	}, func(b block) error {
		sum.merge(b.count)
		for n, i := b.lo, 0; i < len(b.words); n, i = n+1, i+stride {
			w.SetRowWords(n, b.words[i:i+t.words])
			if masked {
				w.SetObservedRowWords(n, b.words[i+t.words:i+stride])
			}
		}
		return nil
	})
	if err != nil {
		return Summary{}, err
	}
	kind, activity := "", ""
	if t.Kind != OrMachine {
		kind = "kind=" + t.Kind.String() + " "
	}
	if t.ActivityPrograms > 0 {
		activity = fmt.Sprintf(" activity=%d×%g", t.ActivityPrograms, t.ActivityFraction)
	}
	m := shard.Manifest{
		Samples: t.manifestSamples(),
		Tool:    "scpipe simulate",
		Source: shard.Source{Format: "simulate", Seed: t.Seed, Values: t.values(),
			Path: fmt.Sprintf("simulate(%scells=%d genes=%d L=%d%s)", kind, t.Cells, t.Genes, t.L, activity)},
		Filters: shard.Filters{
			GenesBefore: t.Genes, GenesAfter: t.Genes,
			CellsBefore: t.Cells, CellsAfter: t.Cells,
		},
	}
	for g := range t.Genes {
		m.GeneIDs = append(m.GeneIDs, t.GeneID(g))
		m.GeneNames = append(m.GeneNames, t.GeneName(g))
	}
	for n := range t.Cells {
		if err := stopped(ctx, n); err != nil {
			return Summary{}, err
		}
		m.Barcodes = append(m.Barcodes, t.CellName(n))
	}
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	return t.summary(sum), w.Commit(ctx, m)
}

// values names the kind of the data for the manifest's Source.Values: the
// single-cell kind draws counts (binarised as ingest would), the others
// draw the binary matrix itself.
func (t *Truth) values() string {
	if t.Kind == SingleCell {
		return shard.ValuesCounts
	}
	return shard.ValuesBinary
}
