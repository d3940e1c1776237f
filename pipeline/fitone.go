package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"scpipe/gibbs"
	"scpipe/progress"
	"scpipe/rundir"
)

// A fit runs in one process (Fit, FitChain), or on every rank of an MPI
// world at once, each rank sweeping its share of the cells (FitMPI).
// fitOne is the one loop for both. Where the processes could see
// different things (is the fit complete, did one fail, was one stopped,
// is a checkpoint due by the lead's clock) it asks its crew, so that every
// process takes the same steps and collectives; it drives the crew's
// sampler of the fit through fitSampler. A process alone agrees with
// itself.

// crew is the processes that run each fit of a run together.
type crew interface {
	// lead reports whether this process logs the fits, shows their
	// progress and writes their results.
	lead() bool
	// any returns, in every process, whether any process set each of
	// flags. Every process must call it at the same point.
	any(ctx context.Context, flags ...bool) ([]bool, error)
	// sampler returns this process's sampler of the fit cfg, which
	// checkpoints to ckpt and logs its cost to log.
	sampler(data gibbs.Data, cfg gibbs.Config, ckpt string, log *slog.Logger) (fitSampler, error)
}

// fitSampler is a crew's sampler of one fit.
type fitSampler interface {
	Sweep() int  // the sweeps done
	Sweeps() int // the sweeps of the whole fit
	Kernel() string
	// restore continues the fit from its checkpoint, if one exists
	// (restore's checks; shards names the shards in messages).
	restore(ctx context.Context, meta rundir.CheckpointMeta, shards string) error
	// run runs the remaining sweeps, calling onSweep after each; ctx is
	// onSweep's to heed, so that the processes stop together.
	run(ctx context.Context, onSweep func(gibbs.SweepStats) error) error
	// save checkpoints the fit (meta) at its sweep, as k asks.
	save(ctx context.Context, meta rundir.CheckpointMeta, k saveKind) error
	// result returns, in the lead, the finished fit and its genes' scores
	// (fitScores); nil in the other processes.
	result(ctx context.Context) (*gibbs.Result, []float64, error)
	// close waits for the checkpoint still being written.
	close()
}

// saveKind is why a fit is checkpointed.
type saveKind uint8

const (
	saveDue  saveKind = iota // by the cadence; the sweeps may go on while it is written
	saveStop                 // the fit stops: on disk when save returns
	saveLast                 // the last sweep: the whole fit, on disk when save returns
)

// agree tells every process of c whether any one's err is not nil: it
// returns err in a process that failed, ErrOtherRank in the others, nil
// when none did. Every process must call it at the same point.
func agree(ctx context.Context, c crew, err error) error {
	failed, aerr := c.any(ctx, err != nil)
	switch {
	case aerr != nil:
		return errors.Join(err, aerr)
	case err != nil:
		return err
	case failed[0]:
		return ErrOtherRank
	}
	return nil
}

// errStopped ends a fit's sweeps in every process when one was asked to
// stop.
var errStopped = errors.New("stopped")

// errOtherStopped is why a process that was not asked to stop stopped.
var errOtherStopped = errors.New("another rank was stopped")

// fitOne runs (or resumes, or skips when complete) the fit of one
// (L, chain) in this process and the rest of its crew. It reports
// whether the fit was already complete.
func (r *openedRun) fitOne(ctx context.Context, L, chain int) (bool, error) {
	cfg, o, lead := r.cfg, r.o, r.crew.lead()
	dir := rundir.FitDir(cfg.Output, L, chain)
	done, err := r.crew.any(ctx, lead && complete(dir))
	if err != nil {
		return false, err
	}
	if done[0] {
		o.Log.Info("fit already complete", "L", L, "chain", chain)
		return true, nil
	}
	if err := agree(ctx, r.crew, mkdir(dir)); err != nil {
		return false, err
	}
	label := o.run.begin(cfg, L, chain)
	if len(cfg.Layers) > 0 {
		return false, fitLayers(ctx, r.src, r.data, cfg, o, L, chain, dir, r.resumeCommand(L, chain))
	}
	start := time.Now()
	sc := samplerConfig(cfg, L, chain)
	sc.FixedCodes = r.fixed
	s, err := r.crew.sampler(r.data, sc, filepath.Join(dir, rundir.CheckpointFile), o.Log.With("L", L, "chain", chain))
	if err != nil {
		return false, err // the same in every process
	}
	defer s.close()
	meta := rundir.CheckpointMeta{L: L, Chain: chain, ConfigHash: r.hash, Shards: r.src.Manifest().Fingerprint()}
	if err := s.restore(ctx, meta, cfg.Shards); err != nil {
		return false, err
	}
	o.Timings.since(phaseSetup, start)
	o.Log.Info("fitting", "L", L, "chain", chain, "from_sweep", s.Sweep(), "sweeps", s.Sweeps(), "kernel", s.Kernel())
	var meter *progress.Meter // nil: silent
	if lead {
		meter = progress.New(o.ProgressTo, label, int64(s.Sweeps()), o.Progress)
	}
	var saving time.Duration
	lastSave := time.Now()
	// checkpoint saves the fit when it is stopped (SIGINT, SIGTERM: ctx,
	// which may reach one process only), finished, or due by the cadence
	// of the lead's sweeps and clock (only after a sweep: swept), and
	// returns errStopped to stop it.
	checkpoint := func(swept bool) error {
		at := s.Sweep()
		due := lead && swept && (at%cfg.CheckpointEvery == 0 || time.Since(lastSave).Minutes() >= cfg.CheckpointMinutes)
		f, err := r.crew.any(ctx, ctx.Err() != nil, due)
		if err != nil {
			return err
		}
		k, stop := saveDue, false
		switch {
		case at == s.Sweeps():
			k = saveLast
		case f[0]:
			k, stop = saveStop, true
		case !f[1]:
			return nil
		}
		start := time.Now()
		m := meta
		m.Sweep, m.Created = int64(at), start.UTC()
		err = s.save(ctx, m, k)
		lastSave = time.Now()
		saving += lastSave.Sub(start)
		if err == nil && stop {
			err = errStopped
		}
		return err
	}
	start = time.Now()
	err = checkpoint(false)
	if err == nil {
		err = s.run(ctx, func(st gibbs.SweepStats) error {
			meter.Set(int64(st.Sweep+1), joinNotes(fmt.Sprintf("%s loglik=%.4g acc=%.4f", rateText(st.Lambda, st.Dropout, st.Background), st.LogLik, st.Accuracy),
				o.run.status(float64(st.Sweep+1)/float64(s.Sweeps()))))
			o.sweepDone(L, chain, st.Sweep)
			return checkpoint(true)
		})
	}
	if errors.Is(err, errStopped) {
		cause := ctx.Err()
		if cause == nil {
			cause = errOtherStopped
		}
		return false, fmt.Errorf("%w at L=%d chain %d after sweep %d (%w); checkpoint written; resume with: %s",
			ErrInterrupted, L, chain, s.Sweep(), cause, r.resumeCommand(L, chain))
	}
	if err != nil {
		return false, err
	}
	o.Timings.add(phaseSweeps, time.Since(start)-saving)
	o.Timings.add(phaseCheckpoints, saving)
	// The genes' scores count as output, with the files they go to.
	start = time.Now()
	defer o.Timings.since(phaseOutputs, start)
	res, score, err := s.result(ctx)
	if err != nil {
		return false, err
	}
	var werr error
	if lead {
		meter.Done(rateText(res.Lambda, res.Dropout, res.Background))
		werr = r.writeResults(dir, res, score, len(sc.FixedCodes))
	}
	return false, agree(ctx, r.crew, werr)
}

// writeResults writes a finished fit's files into its folder dir: the
// retained states when kept, then its tables (writeFit).
func (r *openedRun) writeResults(dir string, res *gibbs.Result, score []float64, fixed int) error {
	if r.cfg.KeepSamples {
		b, err := res.MarshalSamples()
		if err != nil {
			return err
		}
		if err := rundir.WriteChecksummed(filepath.Join(dir, rundir.SamplesFile), func(w io.Writer) error {
			_, err := w.Write(b)
			return err
		}); err != nil {
			return err
		}
	}
	return writeFit(dir, r.src.Manifest(), res, score, fixed)
}

// alone is the crew of a process that fits on its own: every cell, the
// whole of each fit.
type alone struct{}

func (alone) lead() bool { return true }

func (alone) any(_ context.Context, flags ...bool) ([]bool, error) { return flags, nil }

func (alone) sampler(data gibbs.Data, cfg gibbs.Config, ckpt string, _ *slog.Logger) (fitSampler, error) {
	s, err := gibbs.NewSampler(data, cfg)
	if err != nil {
		return nil, err
	}
	return &wholeFit{Sampler: s, data: data, L: cfg.L, workers: cfg.Workers, cw: checkpointer{path: ckpt}}, nil
}

// wholeFit is the fitSampler of a process alone.
type wholeFit struct {
	*gibbs.Sampler
	data       gibbs.Data
	L, workers int
	cw         checkpointer
	res        *gibbs.Result // run's
}

func (w *wholeFit) restore(_ context.Context, meta rundir.CheckpointMeta, shards string) error {
	return restore(w.Sampler, w.cw.path, meta, shards, 0, w.data.X.Rows())
}

func (w *wholeFit) run(ctx context.Context, onSweep func(gibbs.SweepStats) error) (err error) {
	w.res, err = w.Run(context.WithoutCancel(ctx), onSweep)
	return err
}

// save encodes the state now; the file is written while the sweeps go on
// unless k asks for it on disk.
func (w *wholeFit) save(_ context.Context, meta rundir.CheckpointMeta, k saveKind) error {
	payload, err := w.MarshalBinary()
	if err != nil {
		return err
	}
	if err := w.cw.write(meta, payload); err != nil || k == saveDue {
		return err
	}
	return w.cw.wait()
}

func (w *wholeFit) result(context.Context) (*gibbs.Result, []float64, error) {
	score, err := fitScores(w.data, w.res, w.L, w.workers)
	return w.res, score, err
}

func (w *wholeFit) close() { w.cw.wait() }
