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
	"scpipe/internal/progress"
	"scpipe/internal/rundir"
)

// A fit runs in one process (Fit, FitChain), or on every rank of an MPI
// world at once, each rank sweeping its share of the cells (FitMPI).
// fitOne is the one loop for both. Where the processes could see
// different things (is the fit complete, did one fail, was one stopped,
// is a checkpoint due by the lead's clock) it asks its crew, so that every
// process takes the same steps and collectives; it drives the fit's
// sampler through fitSampler: the crew's single-layer sampler, or a
// multi-layer one in a process alone. A process alone agrees with itself.

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
	// run runs the remaining sweeps, calling onSweep after each with the
	// progress meter's note on it; ctx is onSweep's to heed, so that the
	// processes stop together.
	run(ctx context.Context, onSweep func(note string) error) error
	// save checkpoints the fit (meta) at its sweep, as k asks.
	save(ctx context.Context, meta rundir.CheckpointMeta, k saveKind) error
	// result returns, in the lead, the finished fit; nil in the other
	// processes.
	result(ctx context.Context) (*fitted, error)
	// close waits for the checkpoint still being written.
	close()
}

// fitted is a finished fit and its genes' scores (fitScores): a
// single-layer fit, or the layers of a multi-layer one, whose first layer
// is res and is scored.
type fitted struct {
	res    *gibbs.Result
	layers *gibbs.LayersResult // nil: a single layer
	score  []float64
}

// rates is the progress meter's last note on f's noise.
func (f *fitted) rates() string {
	if f.layers == nil {
		return rateText(f.res.Lambda, f.res.Dropout, f.res.Background)
	}
	lam := make([]float64, len(f.layers.Layers))
	for k, r := range f.layers.Layers {
		lam[k] = r.Lambda
	}
	return "λ=" + lambdaText(lam)
}

// sweepNote is the progress meter's note on a single-layer sweep.
func sweepNote(st gibbs.SweepStats) string {
	return fmt.Sprintf("%s loglik=%.4g acc=%.4f", rateText(st.Lambda, st.Dropout, st.Background), st.LogLik, st.Accuracy)
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
	start := time.Now()
	s, err := r.sampler(L, chain, filepath.Join(dir, rundir.CheckpointFile))
	if err != nil {
		return false, err // the same in every process
	}
	defer s.close()
	meta := rundir.CheckpointMeta{L: L, Chain: chain, ConfigHash: r.hash, Shards: r.src.Manifest().Fingerprint()}
	if err := s.restore(ctx, meta, cfg.Shards); err != nil {
		return false, err
	}
	o.Timings.since(phaseSetup, start)
	args := []any{"L", L, "chain", chain, "from_sweep", s.Sweep(), "sweeps", s.Sweeps(), "kernel", s.Kernel()}
	if len(cfg.Layers) > 0 {
		args = append(args, "layers", cfg.Layers.String())
	} else if sched, err := gibbs.Schedule(samplerConfig(cfg, L, chain)); err == nil {
		args = append(args, "schedule", sched)
	}
	o.Log.Info("fitting", args...)
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
		err = s.run(ctx, func(note string) error {
			at := s.Sweep()
			meter.SetTotal(int64(s.Sweeps()))
			meter.Set(int64(at), joinNotes(note, o.run.status(float64(at)/float64(s.Sweeps()))))
			o.sweepDone(L, chain, at-1)
			return checkpoint(true)
		})
	}
	if errors.Is(err, errStopped) {
		cause := ctx.Err()
		if cause == nil {
			cause = errOtherStopped
		}
		return false, fmt.Errorf("%w at %s after sweep %d (%w); checkpoint written; resume with: %s",
			ErrInterrupted, fitName(cfg, L, chain), s.Sweep(), cause, r.resumeCommand(L, chain))
	}
	if err != nil {
		return false, err
	}
	o.Timings.add(phaseSweeps, time.Since(start)-saving)
	o.Timings.add(phaseCheckpoints, saving)
	// The genes' scores count as output, with the files they go to.
	start = time.Now()
	defer o.Timings.since(phaseOutputs, start)
	f, err := s.result(ctx)
	if err != nil {
		return false, err
	}
	var werr error
	if lead {
		meter.Done(f.rates())
		werr = r.writeResults(dir, f)
	}
	return false, agree(ctx, r.crew, werr)
}

// sampler returns this process's sampler of fit (L, chain), which
// checkpoints to ckpt: the crew's, or a multi-layer fit's, which runs in
// a process alone (mpiRefuses).
func (r *openedRun) sampler(L, chain int, ckpt string) (fitSampler, error) {
	if len(r.cfg.Layers) > 0 {
		s, err := gibbs.NewLayersSampler(r.data, layersConfig(r.cfg, L, chain))
		if err != nil {
			return nil, err
		}
		return &layersFit{LayersSampler: s, data: r.data, workers: r.cfg.Threads, cw: checkpointer{path: ckpt}}, nil
	}
	sc := samplerConfig(r.cfg, L, chain)
	sc.FixedCodes = r.fixed
	if r.cfg.SamplesModel {
		sc.CellSamples = r.src.Manifest().CellSamples()
	}
	return r.crew.sampler(r.data, sc, ckpt, r.o.Log.With("L", L, "chain", chain))
}

// writeResults writes a finished fit's files into its folder dir: the
// retained states when kept, then its tables (writeFit, or writeLayersFit
// for the layers of a multi-layer fit).
func (r *openedRun) writeResults(dir string, f *fitted) error {
	if f.layers != nil {
		return writeLayersFit(dir, r.src, f.layers, f.score)
	}
	if r.cfg.KeepSamples {
		b, err := f.res.MarshalSamples()
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
	return writeFit(dir, r.src, f.res, f.score, len(r.fixed))
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

func (w *wholeFit) run(ctx context.Context, onSweep func(string) error) (err error) {
	w.res, err = w.Run(context.WithoutCancel(ctx), func(st gibbs.SweepStats) error { return onSweep(sweepNote(st)) })
	return err
}

func (w *wholeFit) save(_ context.Context, meta rundir.CheckpointMeta, k saveKind) error {
	return w.cw.save(w.Sampler, meta, k)
}

func (w *wholeFit) result(context.Context) (*fitted, error) {
	score, err := fitScores(w.data, w.res, w.L, w.workers)
	return &fitted{res: w.res, score: score}, err
}

func (w *wholeFit) close() { w.cw.wait() }

// layersFit is the fitSampler of a multi-layer fit.
type layersFit struct {
	*gibbs.LayersSampler
	data    gibbs.Data
	workers int
	cw      checkpointer
	res     *gibbs.LayersResult // run's
}

func (f *layersFit) restore(_ context.Context, meta rundir.CheckpointMeta, shards string) error {
	return restore(f.LayersSampler, f.cw.path, meta, shards, 0, f.data.X.Rows())
}

func (f *layersFit) run(ctx context.Context, onSweep func(string) error) (err error) {
	f.res, err = f.Run(context.WithoutCancel(ctx), func(st gibbs.LayersSweepStats) error {
		return onSweep(fmt.Sprintf("%v λ=%s", st.Phase, lambdaText(f.Lambdas())))
	})
	return err
}

func (f *layersFit) save(_ context.Context, meta rundir.CheckpointMeta, k saveKind) error {
	return f.cw.save(f.LayersSampler, meta, k)
}

// result scores the genes of the first layer, whose codes are the fit's
// programs.
func (f *layersFit) result(context.Context) (*fitted, error) {
	first := f.res.Layers[0]
	score, err := fitScores(f.data, first, first.L, f.workers)
	return &fitted{res: first, layers: f.res, score: score}, err
}

func (f *layersFit) close() { f.cw.wait() }
