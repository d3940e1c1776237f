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

// ErrOtherRank is returned by the ranks of FitMPI that did not fail
// themselves when another one did.
var ErrOtherRank = errors.New("fit --mpi: another rank failed (its error is in its log)")

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
		if r, err = openRun(ctx, cfg, o, mpiRun, 0); err == nil {
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
	if S := len(r.src.Manifest().SampleNames()); S > 1 && r.cfg.samplesModelOn() {
		// The same in every rank: each reads the same manifest and settings.
		return nil, fmt.Errorf("%w: fit --mpi does not spread a fit that knows the shards' %d samples yet: run it without --mpi, or with --samples-model=false", ErrConfig, S)
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

// mpiRefuses refuses the settings that fit --mpi does not spread.
func mpiRefuses(cfg FitConfig) error {
	if cfg.FixedCodes != "" || len(cfg.Layers) > 0 || cfg.KeepSamples {
		return fmt.Errorf("%w: fit --mpi spreads single-layer fits without fixed codes or kept samples; run --layers, --fixed-codes or --keep-samples without --mpi", ErrConfig)
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
// of the cells, lo … hi−1, and rank 0 leads.
type ranks struct {
	comm   mpi.Comm
	lo, hi int
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

func (c *ranks) sampler(data gibbs.Data, cfg gibbs.Config, ckpt string, log *slog.Logger) (fitSampler, error) {
	cost := newRankCost(c.comm, c.hi-c.lo)
	q, err := gibbs.NewPartSampler(data, cfg, gibbs.Part{Lo: c.lo, Hi: c.hi, Reduce: cost, Ctx: context.Background()})
	if err != nil {
		return nil, err
	}
	return &rankFit{PartSampler: q, team: c, cost: cost, data: data, L: cfg.L, workers: cfg.Workers, ckpt: ckpt, log: log}, nil
}

// rankFit is the fitSampler of an MPI rank. Each rank holds its own
// cells' state only; the last checkpoint gathers the whole fit into rank
// 0, which alone has the results.
type rankFit struct {
	*gibbs.PartSampler
	team       *ranks
	cost       *rankCost
	data       gibbs.Data
	L, workers int
	ckpt       string
	log        *slog.Logger // the fit's, with its L and chain
}

func (f *rankFit) restore(ctx context.Context, meta rundir.CheckpointMeta, shards string) error {
	return agree(ctx, f.team, restore(f.PartSampler, f.ckpt, meta, shards, f.team.lo, f.team.hi))
}

// run brackets each sweep (not its checkpoint) for the rank's cost.
func (f *rankFit) run(ctx context.Context, onSweep func(string) error) error {
	f.cost.startSweep()
	return f.Run(context.WithoutCancel(ctx), func(st gibbs.SweepStats) error {
		f.cost.endSweep()
		defer f.cost.startSweep()
		return onSweep(sweepNote(st))
	})
}

// save writes a checkpoint in pieces, each rank its cells' state beside
// rank 0's state.ckpt of the rest, except the last, which gathers the
// whole fit (as its results need) into state.ckpt alone.
func (f *rankFit) save(ctx context.Context, meta rundir.CheckpointMeta, k saveKind) error {
	dir := filepath.Dir(f.ckpt)
	var err error
	if k == saveLast {
		err = f.Gather()
	} else {
		lo, hi, part := f.MarshalPart()
		err = rundir.WriteCheckpoint(filepath.Join(dir, rundir.CheckpointPartName(lo, hi, meta.Sweep)), meta, part)
	}
	if err := agree(ctx, f.team, err); err != nil {
		return err
	}
	if f.team.lead() {
		var payload []byte
		if k == saveLast {
			var whole *gibbs.Sampler
			if whole, err = f.Whole(); err == nil {
				payload, err = whole.MarshalBinary()
			}
		} else {
			meta.Parts = f.team.comm.Size()
			payload = f.MarshalShared()
		}
		if err == nil {
			err = rundir.WriteCheckpoint(f.ckpt, meta, payload)
		}
		if err == nil {
			err = removeParts(dir, meta)
		}
	}
	return agree(ctx, f.team, err)
}

// result logs every rank's cost and rank 0's reductions, and scores the
// genes over every rank's cells (partScores).
func (f *rankFit) result(ctx context.Context) (*fitted, error) {
	if err := f.cost.log(ctx, f.log); err != nil {
		return nil, err
	}
	var res *gibbs.Result // the whole fit's, in rank 0
	var err error
	if f.team.lead() {
		var whole *gibbs.Sampler
		if whole, err = f.Whole(); err == nil {
			res, err = whole.Result()
		}
		calls, words, secs := f.Reductions()
		f.log.Info("fit's reductions in rank 0 (this run's part)", "calls", calls, "MiB", float64(8*words)/(1<<20), "seconds", secs)
	}
	if err := agree(ctx, f.team, err); err != nil {
		return nil, err
	}
	score, err := f.team.partScores(ctx, f.data, res, f.L, f.workers)
	if err != nil || !f.team.lead() {
		return nil, err
	}
	return &fitted{res: res, score: score}, nil
}

func (f *rankFit) close() {}

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
