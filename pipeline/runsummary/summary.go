package runsummary

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"

	"scpipe/internal/figure"
	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
	"scpipe/pipeline/internal/holdout"
	"scpipe/pipeline/internal/predictive"
	"scpipe/shard"
)

// Write reads every complete fit of the run directory run, fitted to src
// with the entries h held out, and writes summary.tsv and selection.svg,
// scoring the held-out entries on workers goroutines; it logs the L
// recommended and how each L's chains compare to log. Everything it
// reports is computed from the fits' tables and the shards, in an order
// that does not depend on workers, so a resumed run summarises exactly as
// an uninterrupted one.
func Write(ctx context.Context, run string, src *shard.Shard, h holdout.Spec, workers int, log *slog.Logger) ([]rundir.SummaryRow, error) {
	return WriteWith(ctx, run, src, h, workers, log, nil)
}

// WriteWith is Write, calling recommended (when not nil) with the L it
// recommends (when it recommends one) before it judges each L's
// convergence and writes anything: the fit's consensus stage
// (pipeline/consensus.go) builds the L's consensus there, which the
// judgement reads (ConvergedByConsensus) as it reads any consensus
// folder of the run (rundir.ConsensusDir).
func WriteWith(ctx context.Context, run string, src *shard.Shard, h holdout.Spec, workers int, log *slog.Logger,
	recommended func(L int) error) ([]rundir.SummaryRow, error) {
	fits, err := rundir.Fits(run)
	if err != nil {
		return nil, err
	}
	held, err := holdout.OpenEntries(ctx, run, src, h, workers)
	if err != nil {
		return nil, err
	}
	defer held.Close()
	var rows []rundir.SummaryRow
	byL := map[int][]int{} // L → indices into rows
	sets := map[int][][]codematch.Set{}
	traces := map[int][]sampleTrace{}
	perCell := map[int][]float32{} // L → held-out log predictive per cell of the L's most likely chain
	var entries []int32            // held-out entries per cell, the same in every fit
	bestLL := map[int]float64{}
	var byMean, bySample []string // fits by the gene offsets their scores read (sameSampleScoring)
	for _, f := range fits {
		if !f.Complete() {
			continue
		}
		row, codeSets, trace, sc, err := summariseFit(ctx, f, src, held, workers)
		if err != nil {
			return nil, err
		}
		switch sc.offsets {
		case meanGeneOffsets:
			byMean = append(byMean, f.Dir)
		case sampleGeneOffsets:
			bySample = append(bySample, f.Dir)
		}
		byL[f.L] = append(byL[f.L], len(rows))
		sets[f.L] = append(sets[f.L], codeSets)
		traces[f.L] = append(traces[f.L], trace)
		if ll, seen := bestLL[f.L]; sc.perCell != nil && (!seen || row.LogLik > ll) {
			perCell[f.L], bestLL[f.L] = sc.perCell, row.LogLik
			entries = sc.entries
		}
		rows = append(rows, row)
	}
	if err := sameSampleScoring(src.Manifest(), byMean, bySample); err != nil {
		return nil, err
	}
	sel := recommendL(perCell, entries)
	if recommended != nil && sel.L > 0 {
		if err := recommended(sel.L); err != nil {
			return nil, err
		}
	}
	for L, idx := range byL {
		d := chainDiagnostics(sets[L], traces[L])
		reproduces, err := consensusReproduces(run, L)
		if err != nil {
			return nil, err
		}
		d.converged = ConvergedByConsensus(d.converged, d.rhatWithin, reproduces)
		for k, i := range idx {
			r := &rows[i]
			r.Agreement, r.RHatLogLik, r.RHat, r.RHatWithin = d.agreement[k], d.rhatLogLik, d.rhat, d.rhatWithin
			r.Programs, r.StablePrograms, r.StableCodes = d.programs[k], -1, nil
			if len(idx) > 1 {
				r.StablePrograms, r.StableCodes = d.stability.Stable(), oneBased(d.stability.Codes[k])
			}
			r.Converged = d.converged
		}
	}
	for L, idx := range byL {
		for _, i := range idx {
			rows[i].Recommended = L == sel.L
			rows[i].LogPredGap, rows[i].LogPredGapSE, rows[i].LogPredTolerance = math.NaN(), math.NaN(), math.NaN()
			if gap, ok := sel.Gap[L]; ok {
				rows[i].LogPredGap, rows[i].LogPredGapSE, rows[i].LogPredTolerance = gap, sel.GapSE[L], sel.tolerance(L)
			}
		}
	}
	if err := rundir.WriteSummary(filepath.Join(run, rundir.SummaryFile), rows); err != nil {
		return nil, err
	}
	svg, err := figure.Selection(rows, MinAgreement)
	if err != nil {
		return nil, err
	}
	if err := rundir.WriteFileAtomic(filepath.Join(run, rundir.SelectionFile), func(w io.Writer) error {
		_, err := w.Write(svg)
		return err
	}); err != nil {
		return nil, err
	}
	if err := writeSamples(run, src, rows); err != nil {
		return nil, err
	}
	logSelection(log, rows)
	return rows, nil
}

// sameSampleScoring refuses a run of shards of several samples whose
// complete fits scored their held-out entries in two ways: fits of the
// samples model written before codes.parquet carried each sample's gene
// offsets (gene_lift.SAMPLE), byMean, are scored under their mean, the
// others, bySample, under each cell's sample's, and the L they recommend
// would follow the scoring rather than the data.
func sameSampleScoring(m *shard.Manifest, byMean, bySample []string) error {
	if len(m.SampleNames()) < 2 || len(byMean) == 0 || len(bySample) == 0 {
		return nil
	}
	return fmt.Errorf("fit: %s: fitted with each sample's gene levels by an scpipe that wrote only their mean to %s (no gene_lift.SAMPLE columns), while %s has each sample's: their held-out scores would differ in kind; remove those fits' folders and resume the run to fit them again",
		strings.Join(byMean, ", "), rundir.CodesFile, bySample[0])
}

// consensusReproduces reads the consensus of L in run, if it has one
// (rundir.ConsensusFile), and reports whether it reproduces
// (codematch.Reproduces); false without one.
func consensusReproduces(run string, L int) (bool, error) {
	path := filepath.Join(rundir.ConsensusDir(run, L), rundir.ConsensusFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	rows, err := rundir.ReadConsensus(path)
	if err != nil {
		return false, err
	}
	clusters := make([]codematch.Cluster, len(rows))
	for i, r := range rows {
		clusters[i] = codematch.Cluster{Found: r.Found, Frequency: r.Frequency, Kept: r.Kept, Agreement: r.Agreement,
			Repeat: r.Repeat, ExpectedJaccard: r.ExpectedJaccard}
	}
	return codematch.Reproduces(clusters), nil
}

func oneBased(codes []int) []int {
	out := make([]int, len(codes))
	for i, k := range codes {
		out[i] = k + 1
	}
	return out
}

// sampleTrace is what the sampling sweeps of one fit traced of the
// quantities that do not depend on the order of its codes: the
// log-likelihood and the noise parameters (λ is NaN under dropout noise).
type sampleTrace struct {
	logLik, lambda, dropout, background []float64
}

// diagnostics is how the chains of one L compare.
type diagnostics struct {
	agreement  []float64 // per chain, codematch.ChainAgreement
	programs   []int     // per chain, the codes that hold genes
	stability  codematch.Stability
	rhatLogLik float64 // codematch.RankRHat of the log-likelihood
	rhat       float64 // the largest codematch.RankRHat of the traced quantities
	rhatWithin float64 // the largest codematch.WithinRHat of the traced quantities
	converged  string
}

// chainDiagnostics compares the chains of one L by their program gene
// sets (one slice per chain) and their traces.
func chainDiagnostics(sets [][]codematch.Set, traces []sampleTrace) diagnostics {
	d := diagnostics{agreement: codematch.ChainAgreement(sets), stability: codematch.StablePrograms(sets),
		rhat: math.NaN(), rhatWithin: math.NaN()}
	for _, s := range sets {
		n := 0
		for _, set := range s {
			if set.Len() > 0 {
				n++
			}
		}
		d.programs = append(d.programs, n)
	}
	quantity := func(get func(sampleTrace) []float64) [][]float64 {
		var chains [][]float64
		for _, t := range traces {
			chains = append(chains, get(t))
		}
		return chains
	}
	d.rhatLogLik = codematch.RankRHat(quantity(func(t sampleTrace) []float64 { return t.logLik }))
	for k, get := range []func(sampleTrace) []float64{
		func(t sampleTrace) []float64 { return t.logLik },
		func(t sampleTrace) []float64 { return t.lambda },
		func(t sampleTrace) []float64 { return t.dropout },
		func(t sampleTrace) []float64 { return t.background },
	} {
		q := quantity(get)
		if k > 0 && heldInEvery(q) {
			continue // a parameter (a constant log-likelihood is a chain at rest)
		}
		d.rhat = maxDefined(d.rhat, codematch.RankRHat(q))
		d.rhatWithin = maxDefined(d.rhatWithin, codematch.WithinRHat(q))
	}
	if len(sets) > 1 {
		d.converged = Converged(d.agreement, d.programs, d.stability.Stable(), d.rhatWithin)
	}
	return d
}

// heldInEvery reports whether a traced quantity is constant over the
// sampling sweeps of every chain: a parameter held since the burn-in
// (gibbs.Config.HoldFrom), which has no draws for R̂ to compare; chains
// that hold different values would give +Inf however well they mix.
func heldInEvery(chains [][]float64) bool {
	for _, c := range chains {
		for _, v := range c {
			if v != c[0] {
				return false
			}
		}
	}
	return true
}

// maxDefined is the larger of a and b where both are defined, the defined
// one where one is NaN (a quantity not traced, such as λ under dropout
// noise), and NaN where neither is.
func maxDefined(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return max(a, b)
}

// summariseFit reads one fit's tables and scores its held-out entries; it
// returns the summary row, the codes' program gene sets
// (codematch.ProgramSets), the trace of its sampling sweeps and its
// held-out score.
func summariseFit(ctx context.Context, f rundir.Fit, src *shard.Shard, h holdout.Entries, workers int) (rundir.SummaryRow, []codematch.Set, sampleTrace, heldOutScore, error) {
	row := rundir.SummaryRow{L: f.L, Chain: f.Chain}
	var st sampleTrace
	var sc heldOutScore
	trace, err := rundir.ReadTrace(filepath.Join(f.Dir, rundir.TraceFile))
	if err != nil {
		return row, nil, st, sc, err
	}
	if len(trace) == 0 {
		return row, nil, st, sc, fmt.Errorf("fit: %s has an empty trace", f.Dir)
	}
	last := trace[len(trace)-1]
	row.Sweeps, row.Lambda, row.LogLik, row.TrainAccuracy = len(trace), last.Lambda, last.LogLik, last.TrainAccuracy
	row.Dropout, row.Background = last.Dropout, last.Background
	for _, t := range trace {
		row.Seconds += t.Seconds
		if t.Phase == rundir.PhaseSample {
			st.logLik = append(st.logLik, t.LogLik)
			st.lambda = append(st.lambda, t.Lambda)
			st.dropout = append(st.dropout, t.Dropout)
			st.background = append(st.background, t.Background)
		}
	}
	codes, err := rundir.ReadCodes(filepath.Join(f.Dir, rundir.CodesFile))
	if err != nil {
		return row, nil, st, sc, err
	}
	cells, err := rundir.ReadCells(filepath.Join(f.Dir, rundir.CellsFile))
	if err != nil {
		return row, nil, st, sc, err
	}
	m := src.Manifest()
	if len(codes.Mean) != m.Genes*f.L || len(cells.Mean) != m.Cells*f.L {
		return row, nil, st, sc, fmt.Errorf("fit: %s does not match the shards (%d cells × %d genes at L=%d)", f.Dir, m.Cells, m.Genes, f.L)
	}
	means := predictive.Means{L: f.L, Z: cells.Mean, U: codes.Mean, Housekeeping: codes.Housekeeping}
	sc, err = scoreHeldOut(ctx, src, h, means, predictive.NewPlugIn(last, cells, codes), workers)
	switch {
	case codes.Samples != nil:
		sc.offsets = sampleGeneOffsets
	case codes.GeneLift != nil:
		sc.offsets = meanGeneOffsets
	}
	row.HeldoutAccuracy, row.HeldoutLogPred = sc.accuracy, sc.logpred
	row.HeldoutAccuracySE, row.HeldoutLogPredSE = math.NaN(), math.NaN()
	if sc.perCell != nil {
		row.HeldoutAccuracySE = ratioSE(sc.correct, sc.entries)
		row.HeldoutLogPredSE = ratioSE(sc.perCell, sc.entries)
	}
	return row, codematch.ProgramSets(codes.Mean, cells.Mean, codes.Housekeeping, f.L), st, sc, err
}
