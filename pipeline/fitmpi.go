package pipeline

import (
	"context"
	"encoding"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"scpipe/gibbs"
	"scpipe/internal/mpi"
	"scpipe/internal/rundir"
	"scpipe/pipeline/internal/holdout"
	"scpipe/pipeline/runsummary"
	"scpipe/shard"
)

// errOtherRank is returned by the ranks of FitMPI that did not fail
// themselves when another one did.
var errOtherRank = errors.New("fit --mpi: another rank failed (its error is in its log)")

// FitMPI is Fit spread over the ranks of comm (scpipe fit --mpi): every
// fit runs on all ranks at once, each rank sweeping the cells of its share
// of the shards' cell blocks (gibbs.NewPartSampler), and the run directory
// is bit-identical to Fit's for any number of ranks (only the seconds
// differ). Ranks other than 0 map only their cell blocks of the shards
// (shard.OpenBlocks), and every rank holds the sampler's state of its own
// cells only, so that its memory follows its share of the cells. Rank 0
// opens the run as Fit does (openRun); each rank writes its
// cells' part of a checkpoint and rank 0 the shared rest, so that a run
// resumes on any number of ranks or without MPI; the end of each fit
// gathers the whole of it into rank 0, which writes the results. The run
// directory must be on a file system every rank sees. Each fit logs
// every rank's CPU time a sweep and peak anonymous memory. Every rank
// must call FitMPI with the same cfg; rank 0 hands the others the
// configuration it opened the run with (the run's own, on --resume). It
// fits single-layer models without fixed codes or kept samples.
func FitMPI(ctx context.Context, cfg FitConfig, o FitOptions, comm mpi.Comm) (_ *FitReport, err error) {
	defer interrupted(ctx, &err, fmt.Sprintf("scpipe fit %s -o %s --mpi --resume", cfg.Shards, cfg.Output))
	root := comm.Rank() == 0
	if o.Log == nil || !root {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if err := mpiRefuses(cfg); err != nil {
		return nil, err // every rank has the same cfg and fails alike
	}
	// Rank 0 opens the run as Fit does; the others wait for it.
	team := &ranks{comm: comm}
	var r *openedRun
	if root {
		p := newRunPlan(o, false)
		p.refuse, p.resume = mpiRefuses, mpiPlan().resume
		if r, err = openRun(ctx, cfg, o, p); err == nil {
			defer r.Close()
		}
	}
	if err = agree(ctx, team, err); err != nil {
		return nil, err
	}
	// Rank 0 tells the others how many cell blocks the shards have, each
	// to map only its own, and the configuration it opened the run with.
	var sent []byte
	sizes := []int64{0, 0}
	if root {
		if sent, err = r.cfg.encodeTOML(); err != nil {
			return nil, err
		}
		sizes[0], sizes[1] = int64(r.src.Manifest().Layout.CellBlocks), int64(len(sent))
	}
	bg := context.WithoutCancel(ctx)
	if err := comm.SumInt64(bg, sizes); err != nil {
		return nil, err
	}
	if !root {
		sent = make([]byte, sizes[1])
	}
	if err := comm.Broadcast(bg, 0, sent); err != nil {
		return nil, err
	}
	b0, b1, err := rankBlocks(int(sizes[0]), comm.Rank(), comm.Size())
	if err != nil {
		return nil, err // the same in every rank
	}
	if !root {
		r, err = openRank(sent, cfg.Threads, o, b0, b1)
		if err == nil {
			defer r.Close()
		}
	}
	if err := agree(ctx, team, err); err != nil {
		return nil, err
	}
	l := r.src.Manifest().Layout
	team.lo, team.hi = l.Block(b0).Lo, l.Block(b1-1).Hi
	r.crew = team
	o.Log.Info("fitting across MPI ranks", "ranks", comm.Size(), "cells", l.Cells, "cell_blocks", l.CellBlocks, "rank0_cells", team.hi-team.lo)
	rep, err := r.fitAll(ctx, r.fitOne)
	if err != nil {
		return rep, err
	}
	if root {
		rep.Summary, err = runsummary.Write(ctx, r.cfg.Output, r.src, r.cfg.holdoutSpec(), r.cfg.Threads, o.Log)
	}
	return rep, agree(ctx, team, err)
}

// mpiPlan is the plan of an MPI rank other than 0 (openRank), whose
// resume command rank 0's plan takes.
func mpiPlan() runPlan {
	return runPlan{resume: func(shards, out string, _, _ int) string {
		return fmt.Sprintf("mpirun … scpipe fit --mpi %s -o %s --resume", shards, out)
	}}
}

// mpiRefuses refuses the settings that fit --mpi does not spread.
func mpiRefuses(cfg FitConfig) error {
	if cfg.FixedCodes != "" || len(cfg.Layers) > 0 || cfg.KeepSamples || cfg.SplitMerge > 0 || cfg.GeneSwaps {
		return fmt.Errorf("%w: fit --mpi spreads single-layer fits without fixed codes, kept samples, split–merge moves or gene swaps; run --layers, --fixed-codes, --keep-samples, --split-merge or --gene-swaps without --mpi", ErrConfig)
	}
	return nil
}

// rankBlocks returns the cell blocks b0 … b1−1 of rank r of n: a
// contiguous share of the shards' blocks, as even as whole blocks allow.
func rankBlocks(blocks, r, n int) (b0, b1 int, err error) {
	if n > blocks {
		return 0, 0, fmt.Errorf("fit --mpi: %d ranks but the shards have %d cell blocks: run at most %d ranks", n, blocks, blocks)
	}
	return r * blocks / n, (r + 1) * blocks / n, nil
}

// openBlocks maps cell blocks b0 … b1−1 of the shards and of the run's
// held-out mask (made by rank 0), for a rank other than 0.
func openBlocks(cfg FitConfig, b0, b1 int) (*shard.Shard, gibbs.Data, func(), error) {
	src, err := shard.OpenBlocks(cfg.Shards, b0, b1)
	if err != nil {
		return nil, gibbs.Data{}, func() {}, err
	}
	data := gibbs.Data{X: src.X(), XT: src.XT()}
	if m := src.Mask(); m != nil {
		data.Mask, data.MaskT = m, src.MaskT()
	}
	if cfg.Holdout == 0 {
		return src, data, func() {}, nil
	}
	fm, err := shard.OpenBlocks(filepath.Join(cfg.Output, rundir.FitMaskDir), b0, b1)
	if err == nil {
		if err = holdout.CheckMask(fm, src); err != nil {
			fm.Close()
		}
	}
	if err != nil {
		src.Close()
		return nil, gibbs.Data{}, func() {}, fmt.Errorf("fit: %w", err)
	}
	data.Mask, data.MaskT = fm.X(), fm.XT()
	return src, data, func() { fm.Close() }, nil
}

// ranks is the crew of an MPI rank: every rank of comm sweeps its share
// of the cells, lo … hi−1, and rank 0 leads. Each rank holds its own
// cells' state only; the last checkpoint gathers the whole fit into rank
// 0, which alone has the results.
type ranks struct {
	comm   mpi.Comm
	lo, hi int
	// cost and log are those of the fit under way (sampler): what it
	// costs this rank, and its logger, with its L and chain.
	cost *rankCost
	log  *slog.Logger
}

func (c *ranks) lead() bool { return c.comm.Rank() == 0 }

func (c *ranks) any(ctx context.Context, flags ...bool) ([]bool, error) {
	v := make([]int64, len(flags))
	for i, f := range flags {
		if f {
			v[i] = 1
		}
	}
	if err := c.comm.SumInt64(context.WithoutCancel(ctx), v); err != nil {
		return nil, err
	}
	for i := range flags {
		flags[i] = v[i] > 0
	}
	return flags, nil
}

func (c *ranks) sampler(ctx context.Context, data gibbs.Data, cfg gibbs.Config, log *slog.Logger) (gibbs.Runner, error) {
	c.cost, c.log = newRankCost(c.comm, c.hi-c.lo), log
	return gibbs.NewPartSampler(ctx, data, cfg, gibbs.Part{Lo: c.lo, Hi: c.hi, Reduce: c.cost})
}

func (c *ranks) cells(int) (lo, hi int) { return c.lo, c.hi }

// run brackets each sweep (not its checkpoint) for the rank's cost.
func (c *ranks) run(ctx context.Context, s gibbs.Runner, onSweep func(gibbs.SweepStats) error) error {
	c.cost.startSweep()
	return s.Run(ctx, func(st gibbs.SweepStats) error {
		c.cost.endSweep()
		defer c.cost.startSweep()
		return onSweep(st)
	})
}

// save writes a checkpoint in pieces, each rank its cells' state beside
// rank 0's state.ckpt of the rest, except the last, which gathers the
// whole fit (as its results need) into state.ckpt alone.
func (c *ranks) save(ctx context.Context, s gibbs.Runner, w *checkpointer, meta rundir.CheckpointMeta, k saveKind) error {
	q := s.(*gibbs.PartSampler)
	dir := filepath.Dir(w.path)
	var err error
	if k == saveLast {
		err = q.Gather()
	} else {
		lo, hi, part := q.MarshalPart()
		err = rundir.WriteCheckpoint(filepath.Join(dir, rundir.CheckpointPartName(lo, hi, meta.Sweep)), meta, part)
	}
	if err := agree(ctx, c, err); err != nil {
		return err
	}
	if c.lead() {
		var payload []byte
		if k == saveLast {
			var whole *gibbs.Sampler
			if whole, err = q.Whole(); err == nil {
				payload, err = whole.MarshalBinary()
			}
		} else {
			meta.Parts = c.comm.Size()
			payload = q.MarshalShared()
		}
		if err == nil {
			err = rundir.WriteCheckpoint(w.path, meta, payload)
		}
		if err == nil {
			err = removeParts(dir, meta)
		}
	}
	return agree(ctx, c, err)
}

// result logs every rank's cost and rank 0's reductions, and scores the
// genes over every rank's cells (partScores).
func (c *ranks) result(ctx context.Context, s gibbs.Runner, data gibbs.Data, L, workers int) (*fitted, error) {
	q := s.(*gibbs.PartSampler)
	if err := c.cost.log(ctx, c.log); err != nil {
		return nil, err
	}
	var res *gibbs.Result // the whole fit's, in rank 0
	var err error
	if c.lead() {
		var whole *gibbs.Sampler
		if whole, err = q.Whole(); err == nil {
			res, err = whole.Result()
		}
		calls, words, secs := q.Reductions()
		c.log.Info("fit's reductions in rank 0 (this run's part)", "calls", calls, "MiB", float64(8*words)/(1<<20), "seconds", secs)
	}
	if err := agree(ctx, c, err); err != nil {
		return nil, err
	}
	score, err := c.partScores(ctx, data, res, L, workers)
	if err != nil || !c.lead() {
		return nil, err
	}
	return &fitted{res: res, score: score}, nil
}

// removeParts removes the part files in a fit's folder dir that the
// checkpoint just written (meta) does not use: those of other sweeps, all
// of them once the checkpoint is whole.
func removeParts(dir string, meta rundir.CheckpointMeta) error {
	parts, err := rundir.CheckpointParts(dir)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if meta.Parts == 0 || p.Sweep != meta.Sweep {
			if err := os.Remove(p.Path); err != nil {
				return fmt.Errorf("fit: %w", err)
			}
		}
	}
	return nil
}

// partRestorer is a sampler that a checkpoint of fit --mpi restores: a
// rank's gibbs.PartSampler, or a gibbs.Sampler (every cell).
type partRestorer interface {
	encoding.BinaryUnmarshaler
	UnmarshalPart([]byte) (lo, hi int, err error)
}

// restoreParts completes the state that s restored from a checkpoint of
// fit --mpi (path, meta) with the part files that hold the cells lo … hi−1
// that s sweeps (all of them in a single process), after checking that
// the sweep's parts are all there and tile the cells from the first.
func restoreParts(s partRestorer, lo, hi int, path string, meta rundir.CheckpointMeta) error {
	all, err := rundir.CheckpointParts(filepath.Dir(path))
	if err != nil {
		return err
	}
	var parts []rundir.CheckpointPart
	for _, p := range all {
		if p.Sweep == meta.Sweep {
			parts = append(parts, p)
		}
	}
	at := 0
	for _, p := range parts {
		if p.Lo != at {
			break
		}
		at = p.Hi
	}
	if len(parts) != meta.Parts || at < hi {
		return fmt.Errorf("fit: checkpoint %s of sweep %d needs %d part files (%s) covering its cells, found %d covering cells 0 … %d: restore them, or delete the checkpoint to restart this fit",
			path, meta.Sweep, meta.Parts, rundir.CheckpointPartName(0, 0, meta.Sweep), len(parts), at)
	}
	for _, p := range parts {
		if p.Hi <= lo || p.Lo >= hi {
			continue
		}
		pm, payload, err := rundir.ReadCheckpoint(p.Path)
		if err != nil {
			return fmt.Errorf("fit: %w", err)
		}
		if pm.ConfigHash != meta.ConfigHash || pm.Sweep != meta.Sweep {
			return fmt.Errorf("fit: %s is not a part of checkpoint %s", p.Path, path)
		}
		if _, _, err := s.UnmarshalPart(payload); err != nil {
			return fmt.Errorf("fit: %s: %w", p.Path, err)
		}
	}
	return nil
}
