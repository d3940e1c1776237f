// Package demo runs the whole pipeline on an embedded default, as
// scpipe demo does: a planted single-cell-like dataset simulated as a 10x
// MTX folder, ingested, fitted, enriched against a library of its planted
// programs and decoys, and reported, with how well each planted program
// was recovered.
package demo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"scpipe/enrich"
	"scpipe/ingest"
	"scpipe/internal/outlock"
	"scpipe/internal/progress"
	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
	"scpipe/pipeline"
	"scpipe/pipeline/hierarchy"
	"scpipe/report"
	"scpipe/simulate"
)

// Options configure Run.
type Options struct {
	Dir        string // working folder; "" makes a new one under the system's temporary folder, removed if the demo fails
	Force      bool   // replace an existing Dir
	Threads    int
	Log        *slog.Logger
	Progress   progress.Mode
	ProgressTo io.Writer
	Cached     bool // ingest and write the fit mask through the page cache (ingest.Options.Cached, pipeline.FitOptions.Cached)
}

// FitConfig is the fit the demo runs: L = 2..8 with two chains, short
// enough for a laptop.
func FitConfig() pipeline.FitConfig {
	c := pipeline.DefaultFitConfig()
	c.L, c.Chains, c.BurnIn, c.Samples = pipeline.LSizes{2, 3, 4, 5, 6, 7, 8}, 2, 25, 25
	return c
}

// Run runs the whole pipeline on an embedded default: it simulates a
// planted single-cell-like dataset (simulate.DefaultParams) as a 10x MTX
// folder, ingests it, fits FitConfig, writes a gene-set library of the
// planted programs and decoys, runs enrich and report, and prints on w
// where the results are, the model-selection summary, for each planted
// program the best-matching code of the fit at the planted L and their
// overlap, and the best term of the program that recovered it with its
// adjusted p; last, the path of the report.
func Run(ctx context.Context, w io.Writer, o Options) error {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "scpipe-demo-")
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		// A temporary folder is the demo's own: what a failed or
		// interrupted demo leaves in it is neither read nor resumed.
		if err := run(ctx, w, dir, o); err != nil {
			if ctx.Err() != nil { // not fit's "resume with" a folder about to go
				err = fmt.Errorf("demo: %w", ctx.Err())
			}
			return errors.Join(err, os.RemoveAll(dir))
		}
		return nil
	}
	dir := o.Dir
	if err := outlock.Refuse(dir, o.Force); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return run(ctx, w, dir, o)
}

// run runs the demo in the working folder dir.
func run(ctx context.Context, w io.Writer, dir string, o Options) error {
	p := simulate.DefaultParams()
	truth, err := simulate.New(ctx, p)
	if err != nil {
		return err
	}
	truth.Workers, truth.Log = o.Threads, o.Log
	data, shards, run := filepath.Join(dir, "data"), filepath.Join(dir, "shards"), filepath.Join(dir, "run")
	o.Log.Info("demo: simulating", "cells", p.Cells, "genes", p.Genes, "programs", p.L, "output", data)
	if err := simulate.WriteMTX(ctx, data, truth, false); err != nil {
		return err
	}
	in := ingest.DefaultOptions()
	in.Input, in.Output, in.Logger, in.Cached, in.Workers = data, shards, o.Log, o.Cached, o.Threads
	if _, err := ingest.Run(ctx, in); err != nil {
		return err
	}
	cfg := FitConfig()
	cfg.Shards, cfg.Output, cfg.Threads = shards, run, o.Threads
	rep, err := pipeline.Fit(ctx, cfg, pipeline.FitOptions{Log: o.Log, Progress: o.Progress, ProgressTo: o.ProgressTo, Cached: o.Cached})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "scpipe demo: %d cells × %d genes with %d planted programs, fitted at L = %s with %d chains\n\n", p.Cells, p.Genes, p.L, cfg.L, cfg.Chains)
	fmt.Fprintf(w, "  simulated data (10x MTX)  %s\n  planted truth             %s\n  shards                    %s\n  run directory             %s\n\n",
		data, filepath.Join(data, simulate.TruthDir), shards, run)
	printSelection(w, rep.Summary)
	if err := printRecovery(w, truth, run, p.L, rep.Summary); err != nil {
		return err
	}
	return demoEnrichReport(ctx, w, dir, run, truth, o)
}

// demoDecoys is the number of decoy sets per planted program in the demo's
// library.
const demoDecoys = 3

// demoEnrichReport writes the demo's library (each planted program, and
// decoys of the same sizes drawn from the genes no program holds, so that
// none can be significant), runs enrich and report, and prints for each
// planted program the top term of the program of the fit that best
// recovered it.
func demoEnrichReport(ctx context.Context, w io.Writer, dir, run string, truth *simulate.Truth, o Options) error {
	gmt := filepath.Join(dir, "planted.gmt")
	if err := writeDemoLibrary(gmt, truth); err != nil {
		return err
	}
	eo := enrich.DefaultOptions()
	eo.Run, eo.Out, eo.Libraries, eo.Log = run, run+"-enrich", []string{gmt}, o.Log
	eo.Hierarchy, eo.Linker = hierarchy.Default, hierarchy.Linker(hierarchy.DefaultOptions())
	er, err := enrich.Run(ctx, eo)
	if err != nil {
		return err
	}
	ro := report.DefaultOptions()
	ro.Run, ro.Enrich, ro.Log, ro.Linker = run, eo.Out, o.Log, eo.Linker
	rr, err := report.Write(ctx, ro)
	if err != nil {
		return err
	}
	L := truth.L
	var level *enrich.Level
	for _, lv := range er.Levels {
		if lv.L == L {
			level = lv
		}
	}
	if level == nil {
		return fmt.Errorf("demo: no programs at the planted L = %d", L)
	}
	fmt.Fprintf(w, "\nplanted programs against the programs of L = %d (consensus of the chains) and their top term in %s\n", L, gmt)
	fmt.Fprintf(w, "(%d planted programs and %d decoys; adjusted p: Benjamini-Hochberg over the sets tested):\n", L, L*demoDecoys)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "program\tfit's program\tJaccard\ttop term\tadjusted p\t")
	byID := map[string]int{}
	for g, id := range er.Genes.IDs {
		byID[id] = g
	}
	for l := range L {
		planted := codematch.NewSet(er.Genes.Len())
		for _, g := range truth.ProgramGenes(l) {
			if k, ok := byID[simulate.GeneID(g)]; ok {
				planted.Add(k)
			}
		}
		best, bestJ := -1, -1.0
		for i := range level.Programs {
			pr := &level.Programs[i]
			if pr.Status != enrich.StatusProgram {
				continue
			}
			set := codematch.NewSet(er.Genes.Len())
			for _, g := range pr.Genes {
				set.Add(g)
			}
			if j := codematch.Jaccard(planted, set); j > bestJ {
				best, bestJ = i, j
			}
		}
		term, q := "none", "NA"
		if best >= 0 {
			for _, t := range er.Enrichment[0].Tests {
				if t.Program == &level.Programs[best] && t.Query == "all" && len(t.Results) > 0 {
					term, q = t.Results[0].Term, fmt.Sprintf("%.2g", t.Results[0].Q())
				}
			}
			fmt.Fprintf(tw, "%d\t%s\t%.3f\t%s\t%s\t\n", l+1, level.Programs[best].Name(), bestJ, term, q)
		} else {
			fmt.Fprintf(tw, "%d\tnone\tNA\t%s\t%s\t\n", l+1, term, q)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n  enrichment                %s\n  report                    %s\n", eo.Out, rr.HTML)
	return nil
}

// demoProgramTerm names planted program l in the demo's library.
func demoProgramTerm(l int) string { return fmt.Sprintf("planted_program_%d", l+1) }

// writeDemoLibrary writes the planted programs and demoDecoys decoys per
// program as a GMT file, genes by their symbols.
func writeDemoLibrary(path string, truth *simulate.Truth) error {
	inSome := map[int]bool{}
	for l := range truth.L {
		for _, g := range truth.ProgramGenes(l) {
			inSome[g] = true
		}
	}
	var outside []int
	for g := range truth.Genes {
		if !inSome[g] {
			outside = append(outside, g)
		}
	}
	rng := rand.New(rand.NewPCG(truth.Seed, 0x6d6f6e6f))
	var sets []enrich.GeneSet
	symbols := func(genes []int) []string {
		s := make([]string, len(genes))
		for i, g := range genes {
			s[i] = simulate.GeneName(g)
		}
		return s
	}
	for l := range truth.L {
		genes := truth.ProgramGenes(l)
		sets = append(sets, enrich.GeneSet{Name: demoProgramTerm(l), Description: "planted by scpipe simulate", Genes: symbols(genes)})
		for d := range demoDecoys {
			decoy := make([]int, min(len(genes), len(outside)))
			for i, j := range rng.Perm(len(outside))[:len(decoy)] {
				decoy[i] = outside[j]
			}
			sets = append(sets, enrich.GeneSet{Name: fmt.Sprintf("decoy_%d_%d", l+1, d+1), Description: "genes of no planted program",
				Genes: symbols(decoy)})
		}
	}
	return rundir.WriteFileAtomic(path, func(w io.Writer) error { return enrich.WriteGMT(w, sets) })
}

// printSelection prints the held-out scores per L with their standard
// errors, the model-selection signal, and how the chains agree.
func printSelection(w io.Writer, rows []rundir.SummaryRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "L\tchain\theld-out accuracy\theld-out log pred\t± se\tagreement\tstable\tconverged\trecommended\t")
	for _, r := range rows {
		stable := "-"
		if r.StablePrograms >= 0 {
			stable = fmt.Sprintf("%d/%d", r.StablePrograms, r.Programs)
		}
		fmt.Fprintf(tw, "%d\t%d\t%.4f\t%.4f\t%.4f\t%.3f\t%s\t%s\t%s\t\n", r.L, r.Chain, r.HeldoutAccuracy, r.HeldoutLogPred,
			r.HeldoutLogPredSE, r.Agreement, stable, cmp.Or(r.Converged, "-"), map[bool]string{true: "yes", false: ""}[r.Recommended])
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
