package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"scpipe/gibbs"
	"scpipe/internal/outlock"
	"scpipe/internal/progress"
	"scpipe/internal/rundir"
	"scpipe/internal/splitmix"
	"scpipe/internal/stats/codematch"
	"scpipe/pipeline/internal/holdout"
	"scpipe/pipeline/runsummary"
	"scpipe/shard"
)

// FitOptions are the operational settings of Fit that do not change its
// results.
type FitOptions struct {
	Resume   bool          // continue unfinished fits of an existing run; skip finished ones
	Force    bool          // replace an existing run directory
	Log      *slog.Logger  // nil: discard
	Progress progress.Mode // per-fit progress meters on ProgressTo
	// ProgressTo receives the progress meters (os.Stderr in the CLI).
	ProgressTo io.Writer
	Timings    *FitTimings // when not nil, Fit adds where its time went
	// Cached writes the run's fit mask through the page cache (the CLI's
	// --no-direct-io, for network file systems) rather than around it,
	// which the sweeps that read it beside the data prefer (BENCHMARKS.md).
	Cached bool
	// Given is the settings the caller chose (its flags, its --config
	// file): over the configuration of a run it continues (Resume,
	// FitChain), the others are the run's own. The zero Given is every
	// setting.
	Given Given

	// run, set by Fit, tells the progress of the run's fits as a whole.
	run *runProgress

	// replaced, set by Fit with Force, receives where the run that Force
	// replaces was moved aside (prepareRunDir), so that Fit removes it
	// only once the new run is complete, and puts it back otherwise.
	replaced *string

	// afterSweep, when set (by tests), is called after each sweep of each
	// fit, in the fit's goroutine: a test cancels at a chosen sweep rather
	// than racing a fit that may finish first.
	afterSweep func(L, chain, sweep int)
}

func (o FitOptions) sweepDone(L, chain, sweep int) {
	if o.afterSweep != nil {
		o.afterSweep(L, chain, sweep)
	}
}

// FitReport is what Fit did.
type FitReport struct {
	Run     string
	Summary []rundir.SummaryRow
	Fitted  int // fits run (fully or from a checkpoint) in this call
	Skipped int // fits already complete (with Resume)
	HeldOut int64
}

// ErrInterrupted is wrapped by the error Fit returns when its context is
// cancelled (SIGINT, SIGTERM): the running fit was checkpointed first.
var ErrInterrupted = errors.New("fit interrupted")

// interrupted makes the error of a fit cancelled by its context (SIGINT,
// SIGTERM) in any phase, not only while it sweeps, wrap ErrInterrupted
// and say how to go on: resume names the command. Nothing is lost in any
// phase, since every file is written atomically.
func interrupted(ctx context.Context, err *error, resume string) {
	if *err == nil || ctx.Err() == nil || errors.Is(*err, ErrInterrupted) {
		return
	}
	if resume == "" { // a --force fit, undone: the old run is back
		*err = fmt.Errorf("%w (%w)", ErrInterrupted, *err)
		return
	}
	*err = fmt.Errorf("%w (%w); what was written is kept: go on with: %s", ErrInterrupted, *err, resume)
}

// restoreReplaced ends the replacement of a run by fit --force: the old
// run, moved aside to aside (empty: there was none), is removed when the
// new run is complete (*err nil), and otherwise put back in place of the
// unfinished new one, *err then saying so; it reports whether it put the
// old run back, so that Ctrl-C during fit --force leaves one run.
func restoreReplaced(run, aside string, err *error, log *slog.Logger) bool {
	if aside == "" {
		return false
	}
	if *err == nil {
		if rerr := os.RemoveAll(aside); rerr != nil {
			log.Warn("fit: the run replaced by --force could not be removed", "path", aside, "error", rerr)
		}
		return false
	}
	if rerr := os.RemoveAll(run); rerr != nil {
		*err = fmt.Errorf("%w; the run replaced by --force is kept at %s (removing the unfinished new run: %v)", *err, aside, rerr)
		return false
	}
	if rerr := os.Rename(aside, run); rerr != nil {
		*err = fmt.Errorf("%w; the run replaced by --force is kept at %s (%v)", *err, aside, rerr)
		return false
	}
	if errors.Is(*err, ErrInterrupted) || errors.Is(*err, context.Canceled) {
		// What the fit said of its checkpoint and --resume went with the
		// unfinished run.
		*err = fmt.Errorf("%w: the new run of fit --force was not complete: nothing replaced, %s is the run it was before", ErrInterrupted, run)
		return true
	}
	*err = fmt.Errorf("%w; nothing replaced: %s is the run it was before --force", *err, run)
	return true
}

// Fit runs every (L, chain) fit of cfg over the shards cfg.Shards and writes
// the run directory cfg.Output (see internal/rundir/README.md). Fits run one after
// another, each on cfg.Threads cores. Results are bit-identical for any
// thread count and across interruption and resumption; only the seconds
// columns differ.
func Fit(ctx context.Context, cfg FitConfig, o FitOptions) (_ *FitReport, err error) {
	resume := fmt.Sprintf("scpipe fit %s -o %s --resume", cfg.Shards, cfg.Output)
	defer func() { interrupted(ctx, &err, resume) }()
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	defer o.Timings.since(phaseTotal, time.Now())
	if o.Force && !o.Resume {
		o.replaced = new(string)
		// Runs before the lock is released (r.Close, deferred below).
		defer func() {
			if restoreReplaced(cfg.Output, *o.replaced, &err, o.Log) {
				resume = ""
			}
		}()
	}
	r, err := openRun(ctx, cfg, o, newRunPlan(o, true))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	r.o.run = newRunProgress(o.Log, r.cfg, r.Ls)
	rep, err := r.fitAll(ctx, r.fitProcess)
	if err != nil {
		return rep, err
	}
	start := time.Now()
	var consensus time.Duration
	rep.Summary, err = runsummary.WriteWith(ctx, r.cfg.Output, r.src, r.cfg.holdoutSpec(), r.cfg.Threads, o.Log,
		func(L int) error {
			defer func(start time.Time) { consensus = time.Since(start) }(time.Now())
			return r.consensus(ctx, L)
		})
	o.Timings.add(phaseScoring, time.Since(start)-consensus)
	o.Timings.add(phaseConsensus, consensus)
	return rep, err
}

// prepareRunDir creates the run directory and records the shards it is
// fitted to (id), refusing to touch an existing one unless resuming (then
// its configuration, stored, and shards must match) or forced. A folder
// that a failed start left without a configuration is started afresh. The
// caller holds the run's lock.
func prepareRunDir(cfg FitConfig, o FitOptions, id rundir.ShardsIdentity, stored *FitConfig) error {
	_, err := os.Stat(cfg.Output)
	fresh := false
	if err == nil {
		if fresh, err = unstarted(cfg.Output); err != nil {
			return err
		}
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		if o.Resume {
			return fmt.Errorf("fit: --resume: run directory %s does not exist", cfg.Output)
		}
	case err != nil:
		return fmt.Errorf("fit: %w", err)
	case fresh:
		o.Log.Info("the run directory holds no fit yet: starting the run", "output", cfg.Output)
		if err := removeLeftovers(cfg.Output, o.Log); err != nil {
			return err
		}
	case o.Resume:
		if stored == nil {
			return fmt.Errorf("fit: --resume: %s holds no %s: not a run to resume (use --force to replace it)", cfg.Output, rundir.ConfigFile)
		}
		if d := configDiff(*stored, cfg); len(d) > 0 {
			return fmt.Errorf("fit: --resume: the configuration differs from the one %s was started with (%s; see its %s; only --threads and the checkpoint cadence may change)",
				cfg.Output, strings.Join(d, ", "), rundir.ConfigFile)
		}
		if err := checkShards(cfg.Output, id, o.Log); err != nil {
			return err
		}
		return removeLeftovers(cfg.Output, o.Log)
	case o.Force:
		if err := outlock.Refuse(cfg.Output, true); err != nil {
			return fmt.Errorf("fit: %w", err)
		}
		if o.replaced != nil {
			// Fit removes it once the new run is complete, and puts it
			// back otherwise (restoreReplaced).
			aside := outlock.AsideName(cfg.Output)
			if err := os.Rename(cfg.Output, aside); err != nil {
				return fmt.Errorf("fit: --force: moving the old run aside: %w", err)
			}
			*o.replaced = aside
		} else if err := os.RemoveAll(cfg.Output); err != nil {
			return fmt.Errorf("fit: --force: %w", err)
		}
	default:
		return fmt.Errorf("fit: run directory %s already exists (use --resume to continue it or --force to replace it)", cfg.Output)
	}
	if err := os.MkdirAll(cfg.Output, 0o777); err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	// Before the configuration: a run with a configuration always says
	// which shards it was started on, and its identity, which its tables
	// and fit mask record.
	id.Run = cfg.hash()
	return rundir.WriteShardsIdentity(filepath.Join(cfg.Output, rundir.ShardsFile), id)
}

// hash identifies the settings that determine a run's results: everything
// but the paths, the thread count and the checkpoint cadence.
func (c FitConfig) hash() string {
	c.Shards, c.Output, c.Threads = "", "", 0
	c.CheckpointEvery, c.CheckpointMinutes = 0, 0
	b, _ := c.encodeTOML()
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func writeConfig(cfg FitConfig) error {
	b, err := cfg.encodeTOML()
	if err != nil {
		return err
	}
	return rundir.WriteFileAtomic(filepath.Join(cfg.Output, rundir.ConfigFile), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// fitData returns the sampler's view of the shards: with entries held out,
// the observed-entry mask comes from a shard folder in the run directory,
// made once (when create allows; the holder of the run's lock only) and
// reused on resume.
func fitData(ctx context.Context, src *shard.Shard, cfg FitConfig, o FitOptions, create bool) (gibbs.Data, func(), int64, error) {
	data := gibbs.Data{X: src.X(), XT: src.XT()}
	if m := src.Mask(); m != nil {
		data.Mask, data.MaskT = m, src.MaskT()
	}
	if cfg.Holdout == 0 {
		return data, func() {}, 0, nil
	}
	var held int64
	fm, err := holdout.OpenMask(ctx, cfg.Output, src, cfg.Threads)
	if err == nil && fm == nil {
		if !create {
			return data, nil, 0, fmt.Errorf("fit: %s holds no fit mask (%s) although it holds out entries: prepare the run again (scpipe fit %s -o %s --prepare)",
				cfg.Output, filepath.Join(cfg.Output, rundir.FitMaskDir), cfg.Shards, cfg.Output)
		}
		o.Log.Info("holding out entries", "fraction", cfg.Holdout)
		if held, err = holdout.WriteMask(ctx, cfg.Output, src, cfg.holdoutSpec(), shard.CreateOptions{Cached: o.Cached, Workers: cfg.Threads}); err != nil {
			return data, nil, 0, err
		}
		fm, err = holdout.OpenMask(ctx, cfg.Output, src, cfg.Threads)
	}
	if err != nil {
		return data, nil, 0, fmt.Errorf("fit: %w", err)
	}
	if held == 0 {
		held = src.Manifest().Observed
		if src.Mask() == nil {
			held = int64(src.Manifest().Cells) * int64(src.Manifest().Genes)
		}
		held -= fm.Manifest().Ones
	}
	// --holdout 0.9999999 once fitted about no entry without a word
	// (log-likelihood 0).
	if fitted := fm.Manifest().Ones; fitted == 0 {
		fm.Close()
		return data, nil, 0, fmt.Errorf("fit: holdout = %v hides every observed entry of %s from the fits: nothing is left to fit (hold out a small fraction, such as the default %v)",
			cfg.Holdout, cfg.Shards, DefaultFitConfig().Holdout)
	} else if cfg.Holdout > 0.5 {
		o.Log.Warn("fit: most observed entries are held out: the fits see only the rest", "holdout", cfg.Holdout, "fitted_entries", fitted, "held_out_entries", held)
	}
	data.Mask, data.MaskT = fm.X(), fm.XT()
	return data, func() { fm.Close() }, held, nil
}

// samplerConfig maps the fit configuration onto the sampler's for one
// (L, chain).
func samplerConfig(cfg FitConfig, L, chain int) gibbs.Config {
	c := gibbs.DefaultConfig()
	c.L, c.BurnIn, c.Samples, c.Thin = L, cfg.BurnIn, cfg.Samples, cfg.Thin
	c.Seed = chainSeed(cfg.Seed, L, chain)
	c.Workers = cfg.Threads
	c.Starts, c.StartSweeps = cfg.Starts, cfg.StartSweeps
	c.PriorU, c.PriorZ = cfg.PriorU.Resolve(cfg.Noise.Noise), cfg.PriorZ.Resolve(cfg.Noise.Noise)
	c.Noise, c.CellLevels, c.GeneLevels = cfg.Noise.Noise, cfg.CellLevels, cfg.GeneLevels
	c.Housekeeping = cfg.Housekeeping.On
	c.Init, c.KeepSamples, c.Reseed, c.Swaps = cfg.Init, cfg.KeepSamples, cfg.Reseed, cfg.Swaps
	c.GeneSwaps = cfg.GeneSwaps
	c.SplitMerge = cfg.SplitMerge
	if c.Noise == gibbs.Dropout && cfg.HoldFrom > 0 {
		c.HoldFrom = min(cfg.HoldFrom, cfg.BurnIn)
		if cfg.MaxBurnIn > cfg.BurnIn && c.HoldFrom > 0 {
			c.MaxBurnIn = cfg.MaxBurnIn
		}
	}
	return c
}

// chainSeed derives the seed of one (L, chain) from the master seed with
// the SplitMix64 finaliser, so that fits are independent streams.
func chainSeed(seed uint64, L, chain int) uint64 {
	return splitmix.Mix(seed ^ uint64(L)<<32 ^ uint64(chain))
}

// complete reports whether a fit's result tables are all written; the trace
// is written last, so its presence means the fit finished.
func complete(dir string) bool {
	for _, f := range []string{rundir.CodesFile, rundir.CellsFile, rundir.TraceFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}

// restore loads a checkpoint into s, which sweeps cells lo … hi−1, when
// one exists, after checking that it belongs to this fit, configuration
// and shards (those at shards).
func restore(s encoding.BinaryUnmarshaler, path string, want rundir.CheckpointMeta, shards string, lo, hi int) error {
	meta, payload, err := rundir.ReadCheckpoint(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fit: %w (delete it to restart this fit from scratch)", err)
	}
	if meta.L != want.L || meta.Chain != want.Chain || meta.ConfigHash != want.ConfigHash {
		return fmt.Errorf("fit: checkpoint %s is for L=%d chain %d config %s, not L=%d chain %d config %s",
			path, meta.L, meta.Chain, meta.ConfigHash, want.L, want.Chain, want.ConfigHash)
	}
	if meta.Shards != "" && meta.Shards != want.Shards {
		return fmt.Errorf("fit: checkpoint %s was fitted to shards with fingerprint %.12s, not to %s (fingerprint %.12s): resume with the shards the run was started on",
			path, meta.Shards, shards, want.Shards)
	}
	if err := s.UnmarshalBinary(payload); err != nil {
		return fmt.Errorf("fit: checkpoint %s: %w", path, err)
	}
	if meta.Parts > 0 {
		ps, ok := s.(partRestorer)
		if !ok {
			return fmt.Errorf("fit: checkpoint %s is in parts (fit --mpi), which only a single-layer fit writes", path)
		}
		return restoreParts(ps, lo, hi, path, meta) // a checkpoint of fit --mpi
	}
	return nil
}

// writeFit writes a finished fit's tables, codes ordered by decreasing
// number of genes (MAP) so that code_1 is the broadest program in every run.
// A code that no cell uses counts as having no genes and comes last: its
// genes' posterior means stay at the prior and say nothing. A
// housekeeping code goes to the housekeeping column of codes.parquet and
// not among the codes. The fixed codes (the sampler's first, fixed of
// them) come first, in their order. score holds the genes' scores for the
// codes but the housekeeping one, in the sampler's order (fitScores). The
// tables hold codesOut codes, at least the fit's: those past the fit's
// hold no gene (posterior means and scores 0) and no cell uses them.
func writeFit(dir string, src *shard.Shard, res *gibbs.Result, score []float64, fixed, codesOut int) error {
	m := src.Manifest()
	barcodes, err := src.Barcodes()
	if err != nil {
		return err
	}
	L, uMean, zMean, hk := res.Codes()
	order := fixedFirst(codematch.SizeOrder(codematch.UsedMAPSets(uMean, zMean, L)), fixed)
	for k := L; k < codesOut; k++ {
		order = append(order, -1)
	}
	codes := rundir.Codes{GeneIDs: m.GeneIDs, GeneNames: m.GeneNames, L: len(order), Mean: permuteCols(uMean, L, order), Housekeeping: hk,
		Score: permuteCols(score, L, order), GeneLift: res.GeneLift}
	if res.SampleGeneLift != nil {
		codes.Samples, codes.SampleGeneLift = m.SampleNames(), res.SampleGeneLift
	}
	if len(codes.GeneIDs) == 0 {
		codes.GeneIDs = numbered("gene", res.D)
	}
	if len(codes.GeneNames) == 0 {
		codes.GeneNames = codes.GeneIDs
	}
	cells := rundir.Cells{Barcodes: barcodes, L: len(order), Mean: permuteCols(zMean, L, order),
		Dropout: res.CellDropout, Background: res.CellBackground}
	if len(cells.Barcodes) == 0 {
		cells.Barcodes = numbered("cell", res.N)
	}
	cells.Samples = cellSampleNames(m, res.N)
	if err := rundir.WriteCodes(filepath.Join(dir, rundir.CodesFile), codes); err != nil {
		return err
	}
	if err := rundir.WriteCells(filepath.Join(dir, rundir.CellsFile), cells); err != nil {
		return err
	}
	return rundir.WriteTrace(filepath.Join(dir, rundir.TraceFile), traceRows(res.Trace))
}

// traceRows converts a sampler's trace to trace.parquet's rows.
func traceRows(tr []gibbs.SweepStats) []rundir.TraceRow {
	trace := make([]rundir.TraceRow, len(tr))
	for i, st := range tr {
		phase := rundir.PhaseBurnIn
		if st.Phase == gibbs.Sample {
			phase = rundir.PhaseSample
		}
		trace[i] = rundir.TraceRow{Sweep: int64(st.Sweep + 1), Phase: phase, Lambda: st.Lambda,
			Dropout: st.Dropout, Background: st.Background, LogLik: st.LogLik,
			TrainAccuracy: st.Accuracy, Flips: st.Flips, Seconds: st.Seconds}
	}
	return trace
}

// mkdir creates the folder dir and its parents.
func mkdir(dir string) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	return nil
}

// rateText describes a likelihood's parameters for a progress line: λ when
// it has one, else the dropout and background rates.
func rateText(lambda, dropout, background float64) string {
	if !math.IsNaN(lambda) {
		return fmt.Sprintf("λ=%.3f", lambda)
	}
	return fmt.Sprintf("dropout=%.3f background=%.4f", dropout, background)
}

// permuteCols returns the rows × L matrix m as a rows × len(order)
// matrix whose column k is column order[k] of m, or 0 where order[k] is
// −1.
func permuteCols(m []float64, L int, order []int) []float64 {
	out := make([]float64, len(m)/L*len(order))
	for i, j := 0, 0; i < len(m); i, j = i+L, j+len(order) {
		for k, from := range order {
			if from >= 0 {
				out[j+k] = m[i+from]
			}
		}
	}
	return out
}

func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i+1)
	}
	return out
}

// cellSampleNames returns each cell's sample name for cells.parquet, or
// nil when the shards hold one input's cells (or, defensively, not cells
// cells).
func cellSampleNames(m *shard.Manifest, cells int) []string {
	cs := m.CellSamples()
	if cs == nil || len(cs) != cells {
		return nil
	}
	names := m.SampleNames()
	out := make([]string, len(cs))
	for i, k := range cs {
		out[i] = names[k]
	}
	return out
}
