package export

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"scpipe/internal/rundir"
	"scpipe/shard"
)

// openShards opens the shards of run: dir when given, else the folder
// shards.json names (as given to fit, or relative to the run's parent).
// Either must have the fingerprint the run was fitted to, and its files
// their checksums (verified on up to workers goroutines): the fingerprint
// is taken from the manifest, and X is the files' bits. The check stops
// once ctx is done.
func openShards(ctx context.Context, run, dir string, workers int) (*shard.Shard, error) {
	id, err := rundir.ReadShardsIdentity(filepath.Join(run, rundir.ShardsFile))
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	candidates := []string{dir}
	if dir == "" {
		candidates = id.Paths(run)
	}
	for _, c := range candidates {
		if _, err := os.Stat(filepath.Join(c, shard.ManifestName)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		s, err := shard.Open(c)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		if fp := s.Manifest().Fingerprint(); fp != id.Fingerprint {
			s.Close()
			return nil, fmt.Errorf("export: shards %s are not those %s was fitted to (fingerprint %.12s, the run's %.12s)", c, run, fp, id.Fingerprint)
		}
		if err := s.Verify(ctx, workers); err != nil {
			s.Close()
			return nil, fmt.Errorf("export: %w", err)
		}
		return s, nil
	}
	return nil, fmt.Errorf("export: the shards of %s are not at %s: give them with --shards, or --no-x for an export without X: %w", run, strings.Join(slices.Compact(candidates), " or "), os.ErrNotExist)
}

// checkShards checks that the shards s hold the fit's cells and genes.
func checkShards(s *shard.Shard, f *Fit) error {
	m := s.Manifest()
	dir := s.Dir()
	if m.Cells != len(f.Cells.Barcodes) || m.Genes != len(f.Codes.GeneIDs) {
		return fmt.Errorf("export: shards %s hold %d cells × %d genes, the fit %d × %d", dir, m.Cells, m.Genes, len(f.Cells.Barcodes), len(f.Codes.GeneIDs))
	}
	barcodes, err := s.Barcodes()
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if len(barcodes) > 0 && !slices.Equal(barcodes, f.Cells.Barcodes) {
		return fmt.Errorf("export: shards %s: barcodes differ from %s", dir, filepath.Join(f.Dir, rundir.CellsFile))
	}
	return nil
}

// binaryRow returns the genes of cell i of the shards' X (the binary matrix
// the run was fitted to: 1 = the gene detected; entries the shards mark
// unobserved are 0), appended to buf.
func binaryRow(s *shard.Shard) func(i int, buf []int32) []int32 {
	X := s.X()
	return func(i int, buf []int32) []int32 {
		for w, word := range X.Segment(i, 0) {
			for ; word != 0; word &= word - 1 {
				buf = append(buf, int32(w*64+bits.TrailingZeros64(word)))
			}
		}
		return buf
	}
}
