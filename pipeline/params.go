package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"scpipe/gibbs"
	"scpipe/internal/infile"
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
// chain of the L, the consensus's further chains included, holds it from its first sweep
// (gibbs.Config.Params): their burn-in and samples are those of one
// posterior. The consensus's refit (chain 0, an L of the kept programs)
// estimates its own. The estimate is a function of the data, the
// configuration and the seed alone, the same in every process, so a chain
// that finds no RUN/Lnn/params.bin makes it again, and fits of one L that
// start at once (SLURM arrays) each estimate it and write the same bytes.

// shareParams reports whether the fits of cfg share their parameters:
// asked for, and the model holds parameters (dropout noise with per-cell
// levels and a hold within the burn-in, as samplerConfig sets it) in a
// single-layer fit.
func (c FitConfig) shareParams() bool {
	return c.ShareParams && c.Noise.Noise == gibbs.Dropout && c.CellLevels > 1 && min(c.HoldFrom, c.BurnIn) > 0 && len(c.Layers) == 0
}

// paramsSeed derives the seed of the run that estimates the parameters of
// L from the master seed: a stream no chain's fit draws from.
func paramsSeed(seed uint64, L int) uint64 {
	return splitmix.Mix(chainSeed(seed, L, 0) ^ 0x706172616d73) // "params"
}

// jobConfig returns the sampler's configuration of fit j: with shared
// parameters, those of its L, read from the run or estimated first (in
// this process and the rest of its crew).
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

// paramsMagic opens RUN/Lnn/params.bin: then the length of its identity,
// the identity (paramsIdentity), gibbs.Params's encoding, and the SHA-256
// of all that.
const paramsMagic = "scpipe-params\n"

// paramsIdentity names the run configuration (its checkpoints' key), L and
// estimation seed that the parameters of a params.bin belong to.
func (r *openedRun) paramsIdentity(L int) string {
	return fmt.Sprintf("config %s, L %d, seed %d", r.hash, L, paramsSeed(r.cfg.Seed, L))
}

// sharedParams returns the parameters the chains of L share: those of
// RUN/Lnn/params.bin, or else estimated by a run of the chains'
// configuration sc for its hold_from sweeps (in this process and the rest
// of its crew, as a fit) and written there by the lead. Every process
// reads the file; any failure stops them all.
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
	p, err := r.readParams(path, L)
	if err := agree(ctx, r.crew, err); err != nil {
		return nil, err
	}
	return p, nil
}

// readParams reads and checks the parameters of L at path.
func (r *openedRun) readParams(path string, L int) (*gibbs.Params, error) {
	b, err := infile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	bad := func(why string) error {
		return fmt.Errorf("fit: %s: %s; delete it, and the chains of L = %d that held it, to estimate the parameters again", path, why, L)
	}
	body, ok := bytes.CutPrefix(b, []byte(paramsMagic))
	if !ok || len(body) < 8+sha256.Size {
		return nil, bad("not a file of scpipe's shared parameters")
	}
	if sum := sha256.Sum256(b[:len(b)-sha256.Size]); !bytes.Equal(sum[:], b[len(b)-sha256.Size:]) {
		return nil, bad("its SHA-256 does not match its content (damaged)")
	}
	body = body[:len(body)-sha256.Size]
	n := binary.LittleEndian.Uint64(body)
	if n > uint64(len(body)-8) {
		return nil, bad("not a file of scpipe's shared parameters")
	}
	if id, want := string(body[8:8+n]), r.paramsIdentity(L); id != want {
		return nil, bad(fmt.Sprintf("written for %s, this run's is %s", id, want))
	}
	p, err := gibbs.UnmarshalParams(body[8+n:])
	if err != nil {
		return nil, bad(err.Error())
	}
	return p, nil
}

// estimateParams runs the estimation of the parameters of L (sharedParams)
// and writes them to path in the lead. It is not checkpointed: a fit
// stopped in it estimates them again when resumed.
func (r *openedRun) estimateParams(ctx context.Context, L int, sc gibbs.Config, path string) error {
	start, lead := time.Now(), r.crew.lead()
	sc.Seed, sc.KeepSamples = paramsSeed(r.cfg.Seed, L), false
	sc.BurnIn, sc.Samples, sc.Thin, sc.MaxBurnIn = sc.HoldFrom, 1, 1, 0
	if sc.StartSweeps > sc.BurnIn {
		sc.Starts = 1 // a hold before the starts' sweeps end: one start
	}
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
		err = r.writeParams(whole, path, L)
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

// writeParams writes the parameters s holds to path, atomically, with the
// run's identity (readParams). It records no line in a SHA256SUMS: the
// chains of an L may run in processes of their own (SLURM arrays), which
// all write the file the first time, and its own SHA-256 checks it.
func (r *openedRun) writeParams(s *gibbs.Sampler, path string, L int) error {
	p, err := s.HeldParams()
	if err != nil {
		return err
	}
	if err := mkdir(filepath.Dir(path)); err != nil {
		return err
	}
	id := r.paramsIdentity(L)
	b := append([]byte(paramsMagic), binary.LittleEndian.AppendUint64(nil, uint64(len(id)))...)
	b = append(append(b, id...), p.MarshalBinary()...)
	sum := sha256.Sum256(b)
	return rundir.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(b, sum[:]...))
		return err
	})
}
