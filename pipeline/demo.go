package pipeline

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"scpipe/codematch"
	"scpipe/ingest"
	"scpipe/progress"
	"scpipe/rundir"
	"scpipe/simulate"
)

// DemoOptions configure Demo.
type DemoOptions struct {
	Dir        string // working folder; "" makes a new one under the system's temporary folder
	Force      bool   // replace an existing Dir
	Threads    int
	Log        *slog.Logger
	Progress   progress.Mode
	ProgressTo io.Writer
	Cached     bool // ingest through the page cache (ingest.Options.Cached)
}

// DemoFitConfig is the fit the demo runs: L = 2..8 with two chains, short
// enough for a laptop.
func DemoFitConfig() FitConfig {
	c := DefaultFitConfig()
	c.L, c.Chains, c.BurnIn, c.Samples = LSizes{2, 3, 4, 5, 6, 7, 8}, 2, 25, 25
	return c
}

// Demo runs the whole pipeline on an embedded default: it simulates a
// planted single-cell-like dataset (simulate.DefaultParams) as a 10x MTX
// folder, ingests it, fits DemoFitConfig, and prints on w where the results
// are, the model-selection summary and, for each planted program, the
// best-matching code of the fit at the planted L and their overlap.
func Demo(ctx context.Context, w io.Writer, o DemoOptions) error {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	dir := o.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "scpipe-demo-"); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	} else if _, err := os.Stat(dir); err == nil && !o.Force {
		return fmt.Errorf("demo: %s already exists (use --force to replace it)", dir)
	} else if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	p := simulate.DefaultParams()
	truth, err := simulate.New(p)
	if err != nil {
		return err
	}
	data, shards, run := filepath.Join(dir, "data"), filepath.Join(dir, "shards"), filepath.Join(dir, "run")
	o.Log.Info("demo: simulating", "cells", p.Cells, "genes", p.Genes, "programs", p.L, "to", data)
	if err := simulate.WriteMTX(ctx, data, truth, false); err != nil {
		return err
	}
	in := ingest.DefaultOptions()
	in.Input, in.Output, in.Logger, in.Cached = data, shards, o.Log, o.Cached
	if _, err := ingest.Run(ctx, in); err != nil {
		return err
	}
	cfg := DemoFitConfig()
	cfg.Shards, cfg.Output, cfg.Threads = shards, run, o.Threads
	rep, err := Fit(ctx, cfg, FitOptions{Log: o.Log, Progress: o.Progress, ProgressTo: o.ProgressTo})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "scpipe demo: %d cells × %d genes with %d planted programs, fitted at L = %s with %d chains\n\n", p.Cells, p.Genes, p.L, cfg.L, cfg.Chains)
	fmt.Fprintf(w, "  simulated data (10x MTX)  %s\n  planted truth             %s\n  shards                    %s\n  run directory             %s\n\n",
		data, filepath.Join(data, simulate.TruthDir), shards, run)
	printSelection(w, rep.Summary)
	return printRecovery(w, truth, run, p.L, rep.Summary)
}

// printSelection prints the held-out scores per L, the model-selection signal.
func printSelection(w io.Writer, rows []rundir.SummaryRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "L\tchain\theld-out accuracy\theld-out log pred\tR-hat\tagreement\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%d\t%.4f\t%.4f\t%.3g\t%.3f\t\n", r.L, r.Chain, r.HeldoutAccuracy, r.HeldoutLogPred, r.RHatLogLik, r.Agreement)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// printRecovery compares the planted programs with the codes of the best
// chain (by log-likelihood) at the planted L, matching genes by id.
func printRecovery(w io.Writer, truth *simulate.Truth, run string, L int, rows []rundir.SummaryRow) error {
	best := -1
	for i, r := range rows {
		if r.L == L && (best < 0 || r.LogLik > rows[best].LogLik) {
			best = i
		}
	}
	if best < 0 {
		return fmt.Errorf("demo: no fit at the planted L = %d", L)
	}
	chain := rows[best].Chain
	codes, err := rundir.ReadCodes(filepath.Join(rundir.FitDir(run, L, chain), rundir.CodesFile))
	if err != nil {
		return err
	}
	cells, err := rundir.ReadCells(filepath.Join(rundir.FitDir(run, L, chain), rundir.CellsFile))
	if err != nil {
		return err
	}
	found := codematch.UsedMAPSets(codes.Mean, cells.Mean, L)
	index := map[string]int{}
	for g, id := range codes.GeneIDs {
		index[id] = g
	}
	fmt.Fprintf(w, "planted programs against the codes of L = %d, chain %d (Jaccard overlap of gene sets):\n", L, chain)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "program\tgenes\tbest code\tcode genes\tJaccard\t")
	for l := range truth.L {
		planted := codematch.NewSet(len(codes.GeneIDs))
		for _, g := range truth.ProgramGenes(l) {
			if k, ok := index[simulate.GeneID(g)]; ok {
				planted.Add(k)
			}
		}
		scores := make([]float64, len(found))
		for k, s := range found {
			scores[k] = codematch.Jaccard(planted, s)
		}
		k := slices.Index(scores, slices.Max(scores))
		fmt.Fprintf(tw, "%d\t%d\tcode_%d\t%d\t%.3f\t\n", l+1, planted.Len(), k+1, found[k].Len(), scores[k])
	}
	return tw.Flush()
}
