package pipeline

import (
	"context"
	"encoding"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"scpipe/gibbs"
	"scpipe/internal/mpi"
	"scpipe/progress"
	"scpipe/rundir"
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
// must call FitMPI with the same cfg. It fits single-layer models without
// fixed codes or kept samples.
func FitMPI(ctx context.Context, cfg FitConfig, o FitOptions, comm mpi.Comm) (_ *FitReport, err error) {
	defer interrupted(ctx, &err, fmt.Sprintf("scpipe fit %s -o %s --mpi --resume", cfg.Shards, cfg.Output))
	root := comm.Rank() == 0
	if o.Log == nil || !root {
		o.Log = slog.New(slog.DiscardHandler)
	}
	Ls, err := cfg.Validate()
	if err != nil {
		return nil, err // every rank has the same cfg and fails alike
	}
	if cfg.FixedCodes != "" || len(cfg.Layers) > 0 || cfg.KeepSamples {
		return nil, fmt.Errorf("%w: fit --mpi spreads single-layer fits without fixed codes or kept samples; run --layers, --fixed-codes or --keep-samples without --mpi", ErrConfig)
	}
	// Rank 0 opens the run as Fit does; the others wait for it.
	var r *openedRun
	if root {
		r, err = openRun(ctx, cfg, Ls, o, mpiRun, 0)
	}
	if err = agree(ctx, comm, err); err != nil {
		return nil, err
	}
	if root {
		defer r.Close()
	}
	// Rank 0 tells the others how many cell blocks the shards have: each
	// maps only its own.
	blocks := []int64{0}
	if root {
		blocks[0] = int64(r.src.Manifest().Layout.CellBlocks)
	}
	if err := comm.SumInt64(context.WithoutCancel(ctx), blocks); err != nil {
		return nil, err
	}
	b0, b1, err := rankBlocks(int(blocks[0]), comm.Rank(), comm.Size())
	if err != nil {
		return nil, err // the same in every rank
	}
	if !root {
		r, err = openRank(cfg, Ls, o, b0, b1)
		if err == nil {
			defer r.Close()
		}
	}
	if err := agree(ctx, comm, err); err != nil {
		return nil, err
	}
	l := r.src.Manifest().Layout
	lo, hi := l.Block(b0).Lo, l.Block(b1-1).Hi
	o.Log.Info("fitting across MPI ranks", "ranks", comm.Size(), "cells", l.Cells, "cell_blocks", l.CellBlocks, "rank0_cells", hi-lo)
	rep, err := r.fitAll(ctx, func(ctx context.Context, L, chain int) (bool, error) {
		return r.fitPart(ctx, comm, L, chain, lo, hi)
	})
	if err != nil {
		return rep, err
	}
	if root {
		rep.Summary, err = writeSummary(ctx, r.cfg.Output, r.src, holdout{Seed: r.cfg.Seed, Frac: r.cfg.Holdout}, r.cfg.Threads)
		if err == nil {
			logSelection(o.Log, rep.Summary)
		}
	}
	return rep, agree(ctx, comm, err)
}

// agree tells every rank whether any rank's err is not nil: it returns err
// in a rank that failed, ErrOtherRank in the others, nil when none did.
// Every rank must call it at the same point.
func agree(ctx context.Context, comm mpi.Comm, err error) error {
	v := []int64{0}
	if err != nil {
		v[0] = 1
	}
	if rerr := comm.SumInt64(context.WithoutCancel(ctx), v); rerr != nil {
		return errors.Join(err, rerr)
	}
	switch {
	case err != nil:
		return err
	case v[0] > 0:
		return ErrOtherRank
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
	fm, err := shard.OpenBlocks(filepath.Join(cfg.Output, fitMaskDir), b0, b1)
	if err == nil {
		err = checkFitMask(fm, src, cfg)
		if err != nil {
			fm.Close()
		}
	}
	if err != nil {
		src.Close()
		return nil, gibbs.Data{}, func() {}, err
	}
	data.Mask, data.MaskT = fm.X(), fm.XT()
	return src, data, func() { fm.Close() }, nil
}

// errStopped ends a fit's sweeps in every rank when one was asked to stop.
var errStopped = errors.New("stopped")

// fitPart is fitOne for one rank of FitMPI, which sweeps cells lo … hi−1.
// The ranks agree after every sweep on whether to stop (a signal may
// reach one rank only) and whether to checkpoint (by rank 0's clock), so
// that all take the same collectives. Each rank holds its own cells'
// state only; the end of the fit gathers the whole into rank 0, which
// writes the results.
func (r *openedRun) fitPart(ctx context.Context, comm mpi.Comm, L, chain, lo, hi int) (bool, error) {
	cfg, o, src, data := r.cfg, r.o, r.src, r.data
	root := comm.Rank() == 0
	dir := rundir.FitDir(cfg.Output, L, chain)
	done := []int64{0}
	if root && complete(dir) {
		done[0] = 1
		o.Log.Info("fit already complete", "L", L, "chain", chain)
	}
	if err := comm.SumInt64(context.WithoutCancel(ctx), done); err != nil || done[0] > 0 {
		return err == nil, err
	}
	bg := context.WithoutCancel(ctx)
	cost := newRankCost(comm, hi-lo)
	s, err := gibbs.NewPartSampler(data, samplerConfig(cfg, L, chain), gibbs.Part{Lo: lo, Hi: hi, Reduce: cost, Ctx: bg})
	if err != nil {
		return false, err // the same in every rank
	}
	ckpt := filepath.Join(dir, rundir.CheckpointFile)
	meta := rundir.CheckpointMeta{L: L, Chain: chain, ConfigHash: r.hash, Shards: src.Manifest().Fingerprint()}
	if err := agree(ctx, comm, restore(s, ckpt, meta, cfg.Shards, lo, hi)); err != nil {
		return false, err
	}
	o.Log.Info("fitting", "L", L, "chain", chain, "from_sweep", s.Sweep(), "sweeps", s.Sweeps(), "kernel", s.Kernel(), "ranks", comm.Size())
	var meter *progress.Meter // nil: silent
	if root {
		meter = progress.New(o.ProgressTo, fmt.Sprintf("L=%d chain %d", L, chain), int64(s.Sweeps()), o.Progress)
	}
	// A checkpoint is written in pieces, each rank its cells' state
	// beside rank 0's state.ckpt of the rest, except the last, which
	// gathers the whole fit (as its results need) into state.ckpt alone.
	save := func(last bool) error {
		if last {
			if err := s.Gather(); err != nil {
				return err
			}
		}
		m := meta
		m.Sweep, m.Created = int64(s.Sweep()), time.Now().UTC()
		err := os.MkdirAll(dir, 0o777)
		if !last && err == nil {
			lo, hi, part := s.MarshalPart()
			err = rundir.WriteCheckpoint(filepath.Join(dir, rundir.CheckpointPartName(lo, hi, m.Sweep)), m, part)
		}
		if err := agree(ctx, comm, err); err != nil {
			return err
		}
		if root {
			var payload []byte
			if last {
				var whole *gibbs.Sampler
				if whole, err = s.Whole(); err == nil {
					payload, err = whole.MarshalBinary()
				}
			} else {
				m.Parts = comm.Size()
				payload = s.MarshalShared()
			}
			if err == nil {
				err = rundir.WriteCheckpoint(ckpt, m, payload)
			}
			if err == nil {
				err = removeParts(dir, m)
			}
		}
		return agree(ctx, comm, err)
	}
	lastSave := time.Now()
	cost.startSweep()
	err = s.Run(bg, func(st gibbs.SweepStats) error {
		cost.endSweep()
		defer cost.startSweep()
		meter.Set(int64(st.Sweep+1), fmt.Sprintf("%s loglik=%.4g acc=%.4f", rateText(st.Lambda, st.Dropout, st.Background), st.LogLik, st.Accuracy))
		flags := []int64{0, 0}
		if ctx.Err() != nil {
			flags[0] = 1
		}
		if root && ((st.Sweep+1)%cfg.CheckpointEvery == 0 || time.Since(lastSave).Minutes() >= cfg.CheckpointMinutes) {
			flags[1] = 1
		}
		if err := comm.SumInt64(bg, flags); err != nil {
			return err
		}
		if last := st.Sweep+1 == s.Sweeps(); flags[0] > 0 || flags[1] > 0 || last {
			lastSave = time.Now()
			if err := save(last); err != nil {
				return err
			}
		}
		if flags[0] > 0 {
			return errStopped
		}
		return nil
	})
	if errors.Is(err, errStopped) {
		return false, fmt.Errorf("%w at L=%d chain %d after sweep %d (a rank was stopped); checkpoint written; resume with: %s",
			ErrInterrupted, L, chain, s.Sweep(), r.resumeCommand(L, chain))
	}
	if err != nil {
		return false, err
	}
	if err := cost.log(ctx, o.Log, L, chain); err != nil {
		return false, err
	}
	var res *gibbs.Result // the whole fit's, in rank 0
	if root {
		whole, err := s.Whole()
		if err == nil {
			res, err = whole.Result()
		}
		if err != nil {
			return false, err
		}
	}
	score, err := partScores(bg, comm, data, res, L, lo, hi, cfg.Threads)
	if err != nil {
		return false, err
	}
	var werr error
	if root {
		meter.Done(rateText(res.Lambda, res.Dropout, res.Background))
		calls, words, secs := s.Reductions()
		o.Log.Info("fit's reductions in rank 0 (this run's part)", "L", L, "chain", chain, "calls", calls,
			"MiB", float64(8*words)/(1<<20), "seconds", secs)
		werr = writeFit(dir, src.Manifest(), res, score, 0)
	}
	return false, agree(ctx, comm, werr)
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
