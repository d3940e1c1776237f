package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"scpipe/rundir"
	"scpipe/shard"
)

// heldOut gives the held-out entries of each cell to the scoring of a run's
// fits. With the run's fit mask (which holds the observed entries that are
// not held out: TestFitMaskBits) they are the observed entries the mask
// lacks, a few word operations a row; without one (runs that hold nothing
// out) they come from the holdout's random stream.
type heldOut struct {
	holdout
	fit *shard.Shard // the run's fit mask; nil: regenerate
}

// openHeldOut opens the fit mask of run when entries are held out and the
// run has one.
func openHeldOut(ctx context.Context, run string, src *shard.Shard, h holdout, workers int) (heldOut, error) {
	if h.Frac == 0 {
		return heldOut{holdout: h}, nil
	}
	dir := filepath.Join(run, rundir.FitMaskDir)
	if _, err := os.Stat(filepath.Join(dir, shard.ManifestName)); errors.Is(err, os.ErrNotExist) {
		return heldOut{holdout: h}, nil
	}
	// Every checksum is checked: a changed bit would silently move entries
	// between the training and the held-out sets.
	fm, err := shard.OpenVerified(ctx, dir, workers)
	if err != nil {
		return heldOut{}, fmt.Errorf("the run's fit mask: %w", err)
	}
	if a, b := fm.Manifest(), src.Manifest(); a.Cells != b.Cells || a.Genes != b.Genes {
		fm.Close()
		return heldOut{}, fmt.Errorf("fit: %s holds %d cells × %d genes, the shards %d × %d", dir, a.Cells, a.Genes, b.Cells, b.Genes)
	}
	return heldOut{holdout: h, fit: fm}, nil
}

func (h heldOut) close() {
	if h.fit != nil {
		h.fit.Close()
	}
}

// row writes cell n's observed entries into obs and its held-out ones into
// held (each of the shards' words per row).
func (h heldOut) row(src *shard.Shard, n int, obs, held []uint64) {
	src.ObservedRow(n, obs)
	if h.fit == nil {
		h.holdout.row(n, src.Manifest().Genes, obs, held)
		return
	}
	fit := h.fit.X().Segment(n, 0)
	for i := range held {
		held[i] = obs[i] &^ fit[i]
	}
}
