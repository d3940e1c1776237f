package pipeline

import (
	"context"
	"encoding"
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

// crew is the processes that run each fit of a run together.
type crew interface {
	// lead reports whether this process logs the fits, shows their
	// progress and writes their results.
	lead() bool
	// any returns, in every process, whether any process set each of
	// flags. Every process must call it at the same point.
	any(ctx context.Context, flags ...bool) ([]bool, error)
	// sampler returns this process's sampler of the fit cfg, whose cost
	// it logs to log.
	sampler(ctx context.Context, data gibbs.Data, cfg gibbs.Config, log *slog.Logger) (gibbs.Runner, error)
	// cells returns the cells lo … hi−1 that this process sweeps, of n.
	cells(n int) (lo, hi int)
	// run runs the remaining sweeps of s, as s.Run does.
	run(ctx context.Context, s gibbs.Runner, onSweep func(gibbs.SweepStats) error) error
	// save checkpoints s (meta) at its sweep to w's path, as k asks.
	save(ctx context.Context, s gibbs.Runner, w *checkpointer, meta rundir.CheckpointMeta, k saveKind) error
	// result returns, in the lead, the finished fit s of data (L codes,
	// scored on workers threads); nil in the other processes.
	result(ctx context.Context, s gibbs.Runner, data gibbs.Data, L, workers int) (*fitted, error)
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

// sweepNote is the progress meter's note on sweep st of s: its phase and
// every layer's λ for a multi-layer fit, else its rates, log-likelihood
// and accuracy.
func sweepNote(s gibbs.Runner, st gibbs.SweepStats) string {
	if ls, ok := s.(*gibbs.LayersSampler); ok {
		return fmt.Sprintf("%v λ=%s", st.Phase, lambdaText(ls.Lambdas()))
	}
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
// returns err in a process that failed, errOtherRank in the others, nil
// when none did. Every process must call it at the same point.
func agree(ctx context.Context, c crew, err error) error {
	failed, aerr := c.any(ctx, err != nil)
	switch {
	case aerr != nil:
		return errors.Join(err, aerr)
	case err != nil:
		return err
	case failed[0]:
		return errOtherRank
	}
	return nil
}

// errOtherStopped is why a process that was not asked to stop stopped.
var errOtherStopped = errors.New("another rank was stopped")

// stopCause returns why err, a sampler's, stopped a fit between sweeps:
// ctx's error, errOtherStopped when another process was stopped, nil
// when err is not a stop.
func stopCause(ctx context.Context, err error) error {
	switch cause := ctx.Err(); {
	case cause != nil && errors.Is(err, cause):
		return cause
	case errors.Is(err, gibbs.ErrOtherStopped):
		return errOtherStopped
	}
	return nil
}

// fitJob is one fit of a run: its folder, its L and chain (the chain
// keys its seed, chainSeed) and the codes it holds fixed.
type fitJob struct {
	dir      string
	L, chain int
	fixed    []gibbs.FixedCode
	// codes is the number of codes its tables hold: L, or more, the codes
	// past L holding no gene and used by no cell (the consensus fit's,
	// written as a fit of the L it stands for).
	codes int
}

// chainJob is the fit (L, chain) of the run, in its folder, holding the
// run's fixed codes.
func (r *openedRun) chainJob(L, chain int) fitJob {
	return fitJob{dir: rundir.FitDir(r.cfg.Output, L, chain), L: L, chain: chain, fixed: r.fixed, codes: L}
}

// fitOne runs (or resumes, or skips when complete) the fit of one
// (L, chain) in this process and the rest of its crew. It reports
// whether the fit was already complete.
func (r *openedRun) fitOne(ctx context.Context, L, chain int) (bool, error) {
	return r.fitJob(ctx, r.chainJob(L, chain))
}

// fitJob runs (or resumes, or skips when complete) the fit j in this
// process and the rest of its crew. It reports whether the fit was
// already complete.
func (r *openedRun) fitJob(ctx context.Context, j fitJob) (bool, error) {
	cfg, o, lead := r.cfg, r.o, r.crew.lead()
	dir, L, chain := j.dir, j.L, j.chain
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
	s, sc, err := r.sampler(ctx, j)
	if cause := stopCause(ctx, err); cause != nil {
		return false, fmt.Errorf("%w at %s before its first sweep, seeding its starts or estimating the L's parameters (%w); nothing to checkpoint yet; resume with: %s",
			ErrInterrupted, fitName(cfg, L, chain), cause, r.resumeCommand(L, chain))
	}
	if err != nil {
		return false, err // the same in every process
	}
	cw := &checkpointer{path: filepath.Join(dir, rundir.CheckpointFile)}
	defer cw.wait()
	meta := rundir.CheckpointMeta{L: L, Chain: chain, ConfigHash: r.hash, Shards: r.src.Manifest().Fingerprint()}
	lo, hi := r.crew.cells(r.data.X.Rows())
	if err := agree(ctx, r.crew, restore(s, cw.path, meta, cfg.Shards, lo, hi)); err != nil {
		return false, err
	}
	o.Timings.since(phaseSetup, start)
	args := []any{"L", L, "chain", chain, "from_sweep", s.Sweep(), "sweeps", s.Sweeps(), "kernel", s.Kernel()}
	if len(cfg.Layers) > 0 {
		args = append(args, "layers", cfg.Layers.String())
	} else if sched, err := gibbs.Schedule(sc); err == nil {
		args = append(args, "schedule", sched)
	}
	o.Log.Info("fitting", args...)
	var meter *progress.Meter // nil: silent
	if lead {
		meter = progress.New(o.ProgressTo, label, int64(s.Sweeps()), o.Progress)
	}
	var saving time.Duration
	lastSave := time.Now()
	save := func(k saveKind) error {
		start := time.Now()
		m := meta
		m.Sweep, m.Created = int64(s.Sweep()), start.UTC()
		err := r.crew.save(ctx, s, cw, m, k)
		lastSave = time.Now()
		saving += lastSave.Sub(start)
		return err
	}
	// checkpoint saves the fit whole after its last sweep, else when due
	// by the cadence of the lead's sweeps and clock (only after a sweep:
	// swept).
	checkpoint := func(swept bool) error {
		at := s.Sweep()
		if at == s.Sweeps() {
			return save(saveLast)
		}
		due := lead && swept && (at%cfg.CheckpointEvery == 0 || time.Since(lastSave).Minutes() >= cfg.CheckpointMinutes)
		f, err := r.crew.any(ctx, due)
		if err != nil || !f[0] {
			return err
		}
		return save(saveDue)
	}
	start = time.Now()
	err = checkpoint(false) // a fit restored after its last sweep
	if err == nil {
		err = r.crew.run(ctx, s, func(st gibbs.SweepStats) error {
			at := s.Sweep()
			meter.SetTotal(int64(s.Sweeps()))
			meter.Set(int64(at), joinNotes(sweepNote(s, st), o.run.status(float64(at)/float64(s.Sweeps()))))
			o.sweepDone(L, chain, at-1)
			return checkpoint(true)
		})
	}
	// Stopped (SIGINT, SIGTERM: ctx, which may reach one process only),
	// every process between the same sweeps: the checkpoint is written.
	if cause := stopCause(ctx, err); cause != nil {
		if err := save(saveStop); err != nil {
			return false, err
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
	f, err := r.crew.result(ctx, s, r.data, L, cfg.Threads)
	if err != nil {
		return false, err
	}
	var werr error
	if lead {
		meter.Done(f.rates())
		werr = r.writeResults(dir, f, len(j.fixed), j.codes)
	}
	return false, agree(ctx, r.crew, werr)
}

// sampler returns this process's sampler of fit j and its configuration:
// the crew's, or a multi-layer fit's, which runs in a process alone
// (mpiRefuses), with a zero configuration.
func (r *openedRun) sampler(ctx context.Context, j fitJob) (gibbs.Runner, gibbs.Config, error) {
	if len(r.cfg.Layers) > 0 {
		s, err := gibbs.NewLayersSampler(ctx, r.data, layersConfig(r.cfg, j.L, j.chain))
		return s, gibbs.Config{}, err
	}
	sc, err := r.jobConfig(ctx, j)
	if err != nil {
		return nil, sc, err
	}
	s, err := r.crew.sampler(ctx, r.data, sc, r.o.Log.With("L", j.L, "chain", j.chain))
	return s, sc, err
}

// writeResults writes a finished fit's files into its folder dir: the
// retained states when kept, then its tables (writeFit, or writeLayersFit
// for the layers of a multi-layer fit); the fit's first fixed codes are
// fixed, and its tables hold codes codes (writeFit).
func (r *openedRun) writeResults(dir string, f *fitted, fixed, codes int) error {
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
	return writeFit(dir, r.src, f.res, f.score, fixed, codes)
}

// alone is the crew of a process that fits on its own: every cell, the
// whole of each fit.
type alone struct{}

func (alone) lead() bool { return true }

func (alone) any(_ context.Context, flags ...bool) ([]bool, error) { return flags, nil }

func (alone) sampler(ctx context.Context, data gibbs.Data, cfg gibbs.Config, _ *slog.Logger) (gibbs.Runner, error) {
	return gibbs.NewSampler(ctx, data, cfg)
}

func (alone) cells(n int) (lo, hi int) { return 0, n }

func (alone) run(ctx context.Context, s gibbs.Runner, onSweep func(gibbs.SweepStats) error) error {
	return s.Run(ctx, onSweep)
}

// save writes the whole state of s, a Sampler or a LayersSampler.
func (alone) save(_ context.Context, s gibbs.Runner, w *checkpointer, meta rundir.CheckpointMeta, k saveKind) error {
	return w.save(s.(encoding.BinaryMarshaler), meta, k)
}

// result scores the genes of a single-layer fit, or of the first layer of
// a multi-layer one, whose codes are the fit's programs.
func (alone) result(_ context.Context, s gibbs.Runner, data gibbs.Data, L, workers int) (*fitted, error) {
	f := &fitted{}
	var err error
	switch s := s.(type) {
	case *gibbs.LayersSampler:
		if f.layers, err = s.Result(); err != nil {
			return nil, err
		}
		f.res, L = f.layers.Layers[0], f.layers.Layers[0].L
	case *gibbs.Sampler:
		if f.res, err = s.Result(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("fit: %T is not a sampler of a process alone", s)
	}
	f.score, err = fitScores(data, f.res, L, workers)
	return f, err
}
