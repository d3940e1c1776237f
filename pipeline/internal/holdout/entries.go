package holdout

import (
	"context"

	"scpipe/shard"
)

// Entries gives the held-out entries of each cell of a run, for scoring
// its fits. With the run's fit mask (which holds the observed entries that
// are not held out: TestMaskBits) they are the observed entries the mask
// lacks, a few word operations a row; without one (runs that hold nothing
// out) they are drawn again from the Spec's random stream.
type Entries struct {
	Spec Spec
	fit  *shard.Shard // the run's fit mask; nil: draw again
}

// OpenEntries gives the entries that the run directory run, fitted to src,
// holds out by s: from its fit mask (OpenMask) when entries are held out
// and the run has one. The caller closes them.
func OpenEntries(ctx context.Context, run string, src *shard.Shard, s Spec, workers int) (Entries, error) {
	if s.Frac == 0 {
		return Entries{Spec: s}, nil
	}
	fm, err := OpenMask(ctx, run, src, workers)
	return Entries{Spec: s, fit: fm}, err
}

// Close releases the fit mask, if any.
func (e Entries) Close() {
	if e.fit != nil {
		e.fit.Close()
	}
}

// Row writes cell n's observed entries in src into obs and its held-out
// ones into held (each of the shards' words per row).
func (e Entries) Row(src *shard.Shard, n int, obs, held []uint64) {
	src.ObservedRow(n, obs)
	if e.fit == nil {
		e.Spec.Row(n, src.Manifest().Genes, obs, held)
		return
	}
	fit := e.fit.X().Segment(n, 0)
	for i := range held {
		held[i] = obs[i] &^ fit[i]
	}
}
