package fiteval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"

	"golang.org/x/sync/errgroup"

	"scpipe/enrich"
	"scpipe/gibbs"
	"scpipe/internal/figure"
	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
	"scpipe/internal/stats/evaluate"
	"scpipe/pipeline/internal/holdout"
	"scpipe/pipeline/internal/predictive"
	"scpipe/shard"
	"scpipe/simulate"
)

// What Evaluate scores the predictions of a fit against.
const (
	// TargetHeldOut is the entries held out from the fits (observed in the
	// shards, not in the run's fitmask), against their observed values.
	TargetHeldOut = "heldout"
	// TargetTruth is every entry, against the planted noise-free matrix.
	TargetTruth = "truth"
	// TargetTruthUnseen is the entries the fits did not see (missing in the
	// shards or held out), against the planted noise-free matrix.
	TargetTruthUnseen = "truth_unseen"
)

var targets = []string{TargetHeldOut, TargetTruth, TargetTruthUnseen}

// The predictive estimates of the paper's section 3.3 that Evaluate scores
// (Options.Predictive).
const (
	// PredictPlugIn puts the posterior means of U and Z into the
	// likelihood: the faster estimate, and the default.
	PredictPlugIn = "plug-in"
	// PredictSamples averages the likelihood over the fit's retained
	// states (rundir.SamplesFile, which scpipe fit --keep-samples writes),
	// each with its own rates.
	PredictSamples = "samples"
)

// The files Evaluate writes (see docs/commands.md, "scpipe evaluate").
const (
	evalScoresFile      = "scores.tsv"
	evalROCFile         = "roc.tsv"
	evalCalibrationFile = "calibration.tsv"
	evalThresholdsFile  = "thresholds.tsv"
	evalImagesDir       = "images"
)

// Options configure Evaluate.
type Options struct {
	Run string // run directory
	Out string // output folder, created
	// Truth is a simulation's truth folder (OUT/truth of scpipe simulate),
	// or "" for none.
	Truth string
	// Shards replaces the shards' path recorded in RUN/shards.json, for
	// shards that moved; they must have the recorded fingerprint.
	Shards string
	// Ls restricts the fits scored; nil scores every finished fit.
	Ls []int
	// Predictive is PredictPlugIn or PredictSamples.
	Predictive string
	// FPRs are the target false-positive rates of the threshold table.
	FPRs []float64
	// CalibrationBins is the number of equal bins of the calibration curve.
	CalibrationBins int
	// Images draws each fit's codes and the reconstructions of the first
	// ImageCells cells as images (genes must be pixels named r<row>c<col>),
	// and with two or more L the programs of every L linked by the
	// hierarchy by fixed codes (hierarchyImagesFile).
	Images     bool
	ImageCells int
	// Linker infers the hierarchy by fixed codes that Images draws
	// (hierarchy.Linker); nil draws the hierarchy by overlap.
	Linker  enrich.Linker
	Force   bool // replace an existing Out
	Workers int  // goroutines that score the cells; 0: GOMAXPROCS
	Log     *slog.Logger
}

// DefaultOptions returns the defaults of scpipe evaluate.
func DefaultOptions() Options {
	return Options{Predictive: PredictPlugIn, FPRs: []float64{0.001, 0.01, 0.05, 0.1, 0.2}, CalibrationBins: 10, ImageCells: 10}
}

// Row is the scores of one fit against one target.
type Row struct {
	L, Chain int
	Target   string
	evaluate.Scores
}

// Report is what Evaluate wrote.
type Report struct {
	Out  string
	Rows []Row
}

// Evaluate scores the predictive of every finished fit of a run (section
// 3.3 of the paper: by default the posterior means of U and Z put into the
// likelihood, o.Predictive) against the run's held-out entries and, with a truth folder,
// against the planted noise-free matrix, and writes the scores, ROC
// curves, calibration curves and threshold tables as TSV and SVG into
// o.Out (written under a temporary name, renamed when complete; an
// existing o.Out is replaced only with o.Force).
//
// Against held-out entries, the prediction is the plug-in predictive of an
// observation, P(x = 1) = σ(λ(2c − 1)) under symmetric noise and
// β + (1 − α − β)·c under dropout noise, with c = 1 − ∏_l(1 − ẑ_nl û_ld)
// (the housekeeping code, when the fit has one, used by every cell).
// Against the truth, it is c itself: the posterior probability that the
// noise-free entry is 1. With o.Predictive = PredictSamples, both are
// averaged over the fit's retained states instead (the paper's second
// estimate): P(x = 1) of each state's coverage under its own rates, and the
// fraction of states that cover the entry. Results do not depend on
// o.Workers.
func Evaluate(ctx context.Context, o Options) (*Report, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	in, err := openEvalInput(ctx, o)
	if err != nil {
		return nil, err
	}
	defer in.close()
	fits, err := rundir.Fits(o.Run)
	if err != nil {
		return nil, err
	}
	fits = slices.DeleteFunc(fits, func(f rundir.Fit) bool {
		if o.Ls != nil && !slices.Contains(o.Ls, f.L) {
			return true
		}
		if !f.Complete() {
			o.Log.Warn("evaluate: skipping an unfinished fit", "fit", f.Dir)
			return true
		}
		return false
	})
	if len(fits) == 0 {
		return nil, fmt.Errorf("evaluate: %s has no finished fit%s", o.Run, lText(o.Ls))
	}
	rep := &Report{Out: o.Out}
	series := make([][]evaluate.Series, len(targets)) // by target
	figures := map[string]func(io.Writer) error{}
	for _, f := range fits {
		m, err := loadFitModel(f, in.src.Manifest(), o.Predictive)
		if err != nil {
			return nil, err
		}
		tallies, err := in.score(ctx, m, o)
		if err != nil {
			return nil, err
		}
		for t, tl := range tallies {
			if tl == nil {
				continue
			}
			name := fmt.Sprintf("L=%d chain %d", f.L, f.Chain)
			series[t] = append(series[t], evaluate.Series{Keys: []string{strconv.Itoa(f.L), strconv.Itoa(f.Chain), targets[t]}, Name: name, Tally: tl})
			rep.Rows = append(rep.Rows, Row{L: f.L, Chain: f.Chain, Target: targets[t], Scores: tl.Scores()})
		}
		if o.Images {
			fig, err := in.figure(f, m, o.ImageCells)
			if err != nil {
				return nil, err
			}
			base := filepath.Join(evalImagesDir, fmt.Sprintf("L%02d_chain%d", f.L, f.Chain))
			figures[base+".png"], figures[base+".svg"] = fig.WritePNG, fig.WriteSVG
		}
		o.Log.Info("evaluated", "L", f.L, "chain", f.Chain)
	}
	if o.Images {
		if err := hierarchyImages(ctx, o, fits, figures); err != nil {
			return nil, err
		}
	}
	return rep, writeEvaluation(ctx, o, series, figures)
}

func lText(Ls []int) string {
	if Ls == nil {
		return ""
	}
	return fmt.Sprintf(" at L in %v", Ls)
}

func (o *Options) check() error {
	switch {
	case o.Run == "":
		return errors.New("evaluate: no run directory")
	case o.Out == "":
		return errors.New("evaluate: no output folder (-o)")
	case o.CalibrationBins < 1 || o.CalibrationBins > 1000:
		return fmt.Errorf("evaluate: %d calibration bins: want 1..1000", o.CalibrationBins)
	case o.Predictive != PredictPlugIn && o.Predictive != PredictSamples:
		return fmt.Errorf("evaluate: predictive %q: want %s or %s", o.Predictive, PredictPlugIn, PredictSamples)
	case o.Workers < 0:
		return fmt.Errorf("evaluate: %d workers: want 0 (every core) or more", o.Workers)
	case o.Images && o.ImageCells < 0:
		return fmt.Errorf("evaluate: %d image cells: want at least 0", o.ImageCells)
	}
	for _, a := range o.FPRs {
		if !(a >= 0 && a <= 1) {
			return fmt.Errorf("evaluate: target false-positive rate %v outside [0, 1]", a)
		}
	}
	if err := outlock.CheckInputs(o.Out, append([]string{o.Run, o.Shards, o.Truth}, rundir.ShardsInputs(o.Run)...)...); err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	return nil
}

// evalInput is what every fit of a run is scored on: the shards, the
// fits' observed-entry mask and the planted truth, aligned with the
// shards.
type evalInput struct {
	src *shard.Shard
	fm  *shard.Shard // nil: the fits saw every observed entry
	// With a truth: the planted programs of each shard gene and cell.
	geneSets, cellSets []uint64
	enabled            [3]bool // by index of targets
	bins               int
	words              int
}

func openEvalInput(ctx context.Context, o Options) (*evalInput, error) {
	id, err := rundir.ReadShardsIdentity(filepath.Join(o.Run, rundir.ShardsFile))
	if err != nil {
		return nil, fmt.Errorf("evaluate: %s is not a run directory of scpipe fit: %w", o.Run, err)
	}
	path := o.Shards
	if path == "" {
		if path, err = id.Find(o.Run); err != nil {
			return nil, fmt.Errorf("evaluate: %w (give their path with --shards if they moved)", err)
		}
	}
	if err := outlock.CheckInputs(o.Out, path); err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	src, err := shard.Open(path)
	if err != nil {
		return nil, fmt.Errorf("evaluate: the run's shards: %w (give their new path with --shards if they moved)", err)
	}
	in := &evalInput{src: src, bins: o.CalibrationBins}
	if fp := src.Manifest().Fingerprint(); fp != id.Fingerprint {
		in.close()
		return nil, fmt.Errorf("evaluate: %s are not the shards %s was fitted to (%s)", path, o.Run, id)
	}
	// The fingerprint is taken from the manifest's checksums, not the
	// data: a changed bit in a data file would be scored as an entry.
	if err := src.Verify(ctx, o.Workers); err != nil {
		in.close()
		return nil, fmt.Errorf("evaluate: the run's shards: %w", err)
	}
	m := src.Manifest()
	in.words = (m.Genes + 63) / 64
	if in.fm, err = holdout.OpenMask(ctx, o.Run, src, o.Workers); err != nil {
		in.close()
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	in.enabled[0] = in.fm != nil
	if o.Truth != "" {
		if err := in.alignTruth(o.Truth); err != nil {
			in.close()
			return nil, err
		}
		in.enabled[1], in.enabled[2] = true, in.fm != nil || src.Mask() != nil
	}
	if !slices.Contains(in.enabled[:], true) {
		in.close()
		return nil, fmt.Errorf("evaluate: nothing to score: %s holds no entries out (fit with --holdout) and no --truth was given", o.Run)
	}
	return in, nil
}

// alignTruth reads the planted truth and finds each shard gene and cell in
// it, by gene id and barcode (shards without names: by position).
func (in *evalInput) alignTruth(dir string) error {
	p, err := simulate.ReadTruth(dir)
	if err != nil {
		return fmt.Errorf("evaluate: --truth: %w", err)
	}
	m := in.src.Manifest()
	// Simulations of one shape share their barcodes and gene ids, so the
	// truth of another seed matched by name and was scored against.
	if m.Source.Format == "simulate" && p.Seed != nil && *p.Seed != m.Source.Seed {
		return fmt.Errorf("evaluate: --truth %s is the truth of a simulation with seed %d, the shards were simulated with seed %d: is it the truth of these data?",
			dir, *p.Seed, m.Source.Seed)
	}
	barcodes, err := in.src.Barcodes()
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	var err1, err2 error
	in.geneSets, err1 = alignSets(m.GeneIDs, m.Genes, p.GeneIDs, p.Genes, "gene", dir)
	in.cellSets, err2 = alignSets(barcodes, m.Cells, p.Barcodes, p.Cells, "cell", dir)
	return errors.Join(err1, err2)
}

// alignSets returns the truth's set of each of the n shard items named
// names (by position when the shards name none).
func alignSets(names []string, n int, truthNames []string, truthSets []uint64, what, dir string) ([]uint64, error) {
	if len(names) == 0 {
		if n != len(truthSets) {
			return nil, fmt.Errorf("evaluate: --truth %s has %d %ss, the shards %d (and no names to match them by)", dir, len(truthSets), what, n)
		}
		return truthSets, nil
	}
	index := make(map[string]int, len(truthNames))
	for i, s := range truthNames {
		index[s] = i
	}
	out := make([]uint64, n)
	for i, s := range names {
		j, ok := index[s]
		if !ok {
			return nil, fmt.Errorf("evaluate: the shards' %s %q is not in the truth %s: is it the truth of these data?", what, s, dir)
		}
		out[i] = truthSets[j]
	}
	return out, nil
}

func (in *evalInput) close() {
	if in.fm != nil {
		in.fm.Close()
	}
	in.src.Close()
}

// fitModel is what the predictive of one fit needs.
type fitModel struct {
	predictive.Means
	lik       predictive.PlugIn
	samples   *gibbs.Samples // with PredictSamples: the fit's retained states
	geneNames []string
	barcodes  []string
}

func loadFitModel(f rundir.Fit, m *shard.Manifest, method string) (*fitModel, error) {
	trace, err := rundir.ReadTrace(filepath.Join(f.Dir, rundir.TraceFile))
	if err != nil {
		return nil, err
	}
	if len(trace) == 0 {
		return nil, fmt.Errorf("evaluate: %s has an empty trace", f.Dir)
	}
	codes, err := rundir.ReadCodes(filepath.Join(f.Dir, rundir.CodesFile))
	if err != nil {
		return nil, err
	}
	cells, err := rundir.ReadCells(filepath.Join(f.Dir, rundir.CellsFile))
	if err != nil {
		return nil, err
	}
	if len(codes.Mean) != m.Genes*f.L || len(cells.Mean) != m.Cells*f.L {
		return nil, fmt.Errorf("evaluate: %s does not match the shards (%d cells × %d genes at L=%d)", f.Dir, m.Cells, m.Genes, f.L)
	}
	last := trace[len(trace)-1]
	fm := &fitModel{Means: predictive.Means{L: f.L, Z: cells.Mean, U: codes.Mean, Housekeeping: codes.Housekeeping},
		lik:       predictive.NewPlugIn(last, cells, codes),
		geneNames: codes.GeneNames, barcodes: cells.Barcodes}
	if method == PredictSamples {
		sampled := f.L // the sampler's codes: the housekeeping code is its last
		if fm.Housekeeping != nil {
			sampled++
		}
		if fm.samples, err = loadSamples(f.Dir, m, sampled); err != nil {
			return nil, err
		}
	}
	return fm, nil
}

// loadSamples reads the retained states of the fit in dir, whose sampler
// had L codes.
func loadSamples(dir string, m *shard.Manifest, L int) (*gibbs.Samples, error) {
	path := filepath.Join(dir, rundir.SamplesFile)
	b, err := rundir.ReadChecksummed(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("evaluate: the %s predictive needs the fit's retained states, and %s has none: fit with --keep-samples", PredictSamples, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	s, err := gibbs.UnmarshalSamples(b)
	if err != nil {
		return nil, fmt.Errorf("evaluate: %s: %w", path, err)
	}
	if n, d, l := s.Shape(); n != m.Cells || d != m.Genes || l != L {
		return nil, fmt.Errorf("evaluate: %s holds states of %d cells × %d genes and %d codes, not the fit's %d × %d and %d", path, n, d, l, m.Cells, m.Genes, L)
	}
	return s, nil
}

// observation returns the predictive P(x = 1) of an observation of (c, d).
func (m *fitModel) observation(r *cellRow, c, d int) float64 {
	if m.samples != nil {
		return m.samples.Predict(c, d)
	}
	return r.lik.P(d, m.Uncovered(c, d, r.used))
}

// clean returns the posterior probability that the noise-free (c, d) is 1.
func (m *fitModel) clean(r *cellRow, c, d int) float64 {
	if m.samples != nil {
		return m.samples.Coverage(c, d)
	}
	return 1 - m.Uncovered(c, d, r.used)
}

// cellRow is one cell's view of the data and of a fit.
type cellRow struct {
	obs, fit, x []uint64        // observed, seen by the fit, data
	used        []int           // codes the cell uses (predictive.Means.Used)
	lik         predictive.Cell // the plug-in predictive of the cell's entries
}

// load fills r for cell c; obs and fit are r's own scratch.
func (in *evalInput) load(r *cellRow, m *fitModel, c int) {
	in.src.ObservedRow(c, r.obs)
	r.fit = r.obs
	if in.fm != nil {
		r.fit = in.fm.X().Segment(c, 0)
	}
	r.x = in.src.X().Segment(c, 0)
	r.used = m.Used(c, r.used)
	m.lik.Cell(c, &r.lik)
}

// score returns the tallies of one fit, one per target (nil when the
// target is not scored). Cells are scored in chunks on o.Workers
// goroutines and the chunks' tallies merged in chunk order, so the sums do
// not depend on the number of workers.
func (in *evalInput) score(ctx context.Context, m *fitModel, o Options) ([]*evaluate.Tally, error) {
	cells := in.src.Manifest().Cells
	genes := in.src.Manifest().Genes
	newSet := func() []*evaluate.Tally {
		set := make([]*evaluate.Tally, len(targets))
		for t, on := range in.enabled {
			if on {
				set[t] = evaluate.NewTally(in.bins)
			}
		}
		return set
	}
	total := newSet()
	err := orderedChunks(ctx, cells, o.Workers, newSet, func(set []*evaluate.Tally, lo, hi int) {
		r := &cellRow{obs: make([]uint64, in.words)}
		for c := lo; c < hi; c++ {
			in.load(r, m, c)
			if t := set[0]; t != nil {
				eachBit(r.obs, r.fit, true, genes, func(d int) {
					t.Add(m.observation(r, c, d), r.x[d/64]>>(d%64)&1 == 1)
				})
			}
			if set[1] == nil {
				continue
			}
			for d := range genes {
				clean := in.cellSets[c]&in.geneSets[d] != 0
				p := m.clean(r, c, d)
				set[1].Add(p, clean)
				if set[2] != nil && r.fit[d/64]>>(d%64)&1 == 0 {
					set[2].Add(p, clean)
				}
			}
		}
	}, func(set []*evaluate.Tally) {
		for t, tl := range set {
			if tl != nil {
				total[t].Merge(tl)
				tl.Reset()
			}
		}
	})
	return total, err
}

// eachBit calls f for every d < n set in a and, with andNot, not set in b
// (a &^ b).
func eachBit(a, b []uint64, andNot bool, n int, f func(d int)) {
	for i, w := range a {
		if andNot {
			w &^= b[i]
		}
		for ; w != 0; w &= w - 1 {
			if d := i*64 + bits.TrailingZeros64(w); d < n {
				f(d)
			}
		}
	}
}

// orderedChunks runs work on the cell chunks [k·predictive.CellChunk, …)
// on workers goroutines and hands each chunk's result to merge in chunk
// order. Each worker owns two results made by newResult,
// which merge must leave ready for reuse: memory stays O(workers) whatever
// the number of chunks.
func orderedChunks[R any](ctx context.Context, cells, workers int, newResult func() R, work func(r R, lo, hi int), merge func(R)) error {
	chunks := (cells + predictive.CellChunk - 1) / predictive.CellChunk
	W := max(1, min(workers, chunks))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	outs, free := make([]chan R, W), make([]chan R, W)
	for w := range W {
		outs[w], free[w] = make(chan R, 1), make(chan R, 2)
		free[w] <- newResult()
		free[w] <- newResult()
		g.Go(func() error {
			defer close(outs[w])
			for k := w; k < chunks; k += W {
				var r R
				select {
				case r = <-free[w]:
				case <-gctx.Done():
					return gctx.Err()
				}
				work(r, k*predictive.CellChunk, min((k+1)*predictive.CellChunk, cells))
				select {
				case outs[w] <- r:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		})
	}
	for k := range chunks {
		r, ok := <-outs[k%W]
		if !ok {
			break // a worker stopped: g.Wait says why
		}
		merge(r)
		free[k%W] <- r
	}
	return g.Wait()
}

// svgFile writes the figure that draw draws.
func svgFile(draw func() ([]byte, error)) func(io.Writer) error {
	return func(w io.Writer) error {
		svg, err := draw()
		if err != nil {
			return err
		}
		_, err = w.Write(svg)
		return err
	}
}

// writeEvaluation writes the tables, the figures of each target scored and
// the images into a temporary folder and renames it to o.Out.
func writeEvaluation(ctx context.Context, o Options, series [][]evaluate.Series, images map[string]func(io.Writer) error) error {
	var all []evaluate.Series
	for _, ss := range series {
		all = append(all, ss...)
	}
	keys := []string{"L", "chain", "target"}
	files := map[string]func(io.Writer) error{
		evalScoresFile:      func(w io.Writer) error { return evaluate.WriteScores(w, keys, all) },
		evalROCFile:         func(w io.Writer) error { return evaluate.WriteROC(w, keys, all) },
		evalCalibrationFile: func(w io.Writer) error { return evaluate.WriteCalibration(w, keys, all) },
		evalThresholdsFile:  func(w io.Writer) error { return evaluate.WriteThresholds(w, keys, all, o.FPRs) },
	}
	what := map[string]string{TargetHeldOut: "held-out entries", TargetTruth: "every entry against the truth", TargetTruthUnseen: "unseen entries against the truth"}
	for t, ss := range series {
		if len(ss) == 0 {
			continue
		}
		files["roc_"+targets[t]+".svg"] = svgFile(func() ([]byte, error) { return figure.ROC("ROC: "+what[targets[t]], ss) })
		files["calibration_"+targets[t]+".svg"] = svgFile(func() ([]byte, error) {
			return figure.Calibration("Calibration: "+what[targets[t]], ss)
		})
	}
	for name, f := range images {
		files[name] = f
	}
	return outlock.CommitDir(o.Out, "evaluate", o.Force, o.Log, func(tmp string) error {
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range files {
				if !yield(n) {
					return
				}
			}
		})
		for _, name := range names {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("evaluate: %w", err)
			}
			if err := writeFileIn(tmp, name, files[name]); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil { // the last look before the folder is installed
			return fmt.Errorf("evaluate: %w", err)
		}
		return nil
	})
}

// writeFileIn writes tmp/name through write, creating its folder.
func writeFileIn(tmp, name string, write func(io.Writer) error) error {
	path := filepath.Join(tmp, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if err := outlock.WriteFile(path, write); err != nil {
		return fmt.Errorf("evaluate: writing %w", err)
	}
	return nil
}
