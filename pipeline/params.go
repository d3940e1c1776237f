package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"scpipe/gibbs"
	"scpipe/internal/rundir"
	"scpipe/internal/splitmix"
)

// Shared parameters (FitConfig.ShareParams). A chain that estimates its
// own parameters during its burn-in and holds them samples its own
// posterior, p(Z, U | X, θ̂_chain): chains from different seeds then settle
// on different programs because their targets differ, not only because
// the posterior has modes (docs/real-data.md, "One θ̂ for the chains of an
// L"). With shared parameters the L's θ̂ is estimated once, by a run of
// hold_from sweeps from a seed of the L's own (paramsSeed), and every
// chain of the L, the consensus's included, holds it from its first sweep
// (gibbs.Config.Params): their burn-in and samples are those of one
// posterior. The estimate is a function of the data, the configuration
// and the seed alone, the same in every process, so a chain that finds
// no RUN/Lnn/params.bin makes it again, and fits of one L running at once
// (SLURM arrays) write the same bytes.

// shareParams reports whether the fits of cfg share their parameters:
// asked for, and the model holds parameters (dropout noise with per-cell
// levels and a hold) in a single-layer fit.
func (c FitConfig) shareParams() bool {
	return c.ShareParams && c.Noise.Noise == gibbs.Dropout && c.CellLevels > 1 && c.HoldFrom > 0 && len(c.Layers) == 0
}

// paramsSeed derives the seed of the run that estimates the parameters of
// L from the master seed: a stream no chain's fit draws from.
func paramsSeed(seed uint64, L int) uint64 {
	return splitmix.Mix(chainSeed(seed, L, 0) ^ 0x706172616d73) // "params"
}

// jobConfig returns the sampler's configuration of fit j: with shared
// parameters, those of its L, read from the run or estimated first.
func (r *openedRun) jobConfig(ctx context.Context, j fitJob) (gibbs.Config, error) {
	sc := samplerConfig(r.cfg, j.L, j.chain)
	sc.FixedCodes = j.fixed
	if r.cfg.SamplesModel {
		sc.CellSamples = r.src.Manifest().CellSamples()
	}
	if !r.cfg.shareParams() || j.chain == 0 { // chain 0: the consensus's refit, an L of its own
		return sc, nil
	}
	p, err := r.sharedParams(ctx, j.L, sc)
	if err != nil {
		return sc, err
	}
	sc.Params, sc.HoldFrom = p, 0
	return sc, nil
}

// sharedParams returns the parameters the chains of L share: those of
// RUN/Lnn/params.bin, or else estimated by a run of the chains'
// configuration sc for its hold_from sweeps (in this process and the rest
// of its crew, as a fit) and written there by the lead.
func (r *openedRun) sharedParams(ctx context.Context, L int, sc gibbs.Config) (*gibbs.Params, error) {
	path, lead := rundir.ParamsPath(r.cfg.Output, L), r.crew.lead()
	_, statErr := os.Stat(path)
	found, err := r.crew.any(ctx, lead && statErr == nil)
	if err != nil {
		return nil, err
	}
	if !found[0] {
		if err := r.estimateParams(ctx, L, sc, path); err != nil {
			return nil, err
		}
	}
	b, err := rundir.ReadChecksummed(path)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	p, err := gibbs.UnmarshalParams(b)
	if err != nil {
		return nil, fmt.Errorf("fit: %s: %w; delete it to estimate the parameters again", path, err)
	}
	return p, nil
}

// estimateParams runs the estimation of the parameters of L (sharedParams)
// and writes them to path in the lead.
func (r *openedRun) estimateParams(ctx context.Context, L int, sc gibbs.Config, path string) error {
	start, lead := time.Now(), r.crew.lead()
	sc.Seed, sc.FixedCodes, sc.KeepSamples = paramsSeed(r.cfg.Seed, L), nil, false
	sc.BurnIn, sc.Samples, sc.Thin, sc.MaxBurnIn = sc.HoldFrom, 1, 1, 0
	if lead {
		r.o.Log.Info("estimating the parameters the chains share", "L", L, "sweeps", sc.HoldFrom+1, "output", path)
	}
	s, err := r.crew.sampler(ctx, r.data, sc, r.o.Log.With("L", L, "params", true))
	if err == nil {
		err = r.crew.run(ctx, s, func(gibbs.SweepStats) error { return nil })
	}
	whole, _ := s.(*gibbs.Sampler)
	if q, ok := s.(*gibbs.PartSampler); ok && err == nil {
		if err = q.Gather(); err == nil && lead {
			whole, err = q.Whole()
		}
	}
	if err == nil && lead {
		err = writeParams(whole, path)
	}
	if err := agree(ctx, r.crew, err); err != nil {
		return fmt.Errorf("fit: the parameters of L = %d: %w", L, err)
	}
	r.o.Timings.since(phaseSetup, start)
	if lead {
		r.o.Log.Info("parameters estimated", "L", L, "seconds", time.Since(start).Seconds())
	}
	return nil
}

// writeParams writes the parameters s holds to path, atomically.
func writeParams(s *gibbs.Sampler, path string) error {
	p, err := s.HeldParams()
	if err != nil {
		return err
	}
	if err := mkdir(filepath.Dir(path)); err != nil {
		return err
	}
	return rundir.WriteChecksummed(path, func(w io.Writer) error {
		_, err := w.Write(p.MarshalBinary())
		return err
	})
}
