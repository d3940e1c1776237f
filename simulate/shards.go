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
// one at a time and the shard writer maps its files.
func WriteShards(ctx context.Context, dir string, t *Truth, force bool) error {
	return commitDir(dir, force, func(tmp string) error {
		sum, err := t.summarise(ctx)
		if err != nil {
			return err
		}
		if err := t.writeShards(ctx, filepath.Join(tmp, ShardsDir)); err != nil {
			return err
		}
		return t.writeTruth(filepath.Join(tmp, TruthDir), sum)
	})
}

func (t *Truth) writeShards(ctx context.Context, dst string) error {
	masked := t.Missing > 0
	w, err := shard.Create(dst, shard.Layout{Cells: t.Cells, Genes: t.Genes, Masked: masked}, shard.CreateOptions{})
	if err != nil {
		return err
	}
	defer w.Abort()
	obs := make([]uint64, t.words)
	err = t.rows(ctx, func(n int, row, _ []uint64) error {
		w.SetRowWords(n, row)
		if masked {
			t.ObservedRow(n, obs)
			w.SetObservedRowWords(n, obs)
		}
		return nil
	})
	if err != nil {
		return err
	}
	m := shard.Manifest{
		Tool:   "scpipe simulate",
		Source: shard.Source{Format: "simulate", Seed: t.Seed, Path: fmt.Sprintf("simulate(cells=%d genes=%d L=%d)", t.Cells, t.Genes, t.L)},
		Filters: shard.Filters{
			GenesBefore: t.Genes, GenesAfter: t.Genes,
			CellsBefore: t.Cells, CellsAfter: t.Cells,
		},
	}
	for g := range t.Genes {
		m.GeneIDs = append(m.GeneIDs, GeneID(g))
		m.GeneNames = append(m.GeneNames, GeneName(g))
	}
	for n := range t.Cells {
		m.Barcodes = append(m.Barcodes, Barcode(n))
	}
	return w.Commit(m)
}
