package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"scpipe/ingest"
	"scpipe/pipeline"
	"scpipe/shard"
)

// E2EOptions configure RunE2E: a generated 10x HDF5 file of Size (cells ×
// genes before the gene filter) ingested, then fitted with Fit.
type E2EOptions struct {
	Size Size
	// Shards, when not empty, is a shard folder to fit instead of
	// generating and ingesting a file (Size is then ignored): the fit's
	// phases alone, on shards made otherwise (scpipe bench's planted ones).
	Shards  string
	Density float64 // fraction of nonzero counts of the generated file
	Seed    uint64  // seed of the generated counts
	// Fit holds the fit's settings (pipeline.LoadFitConfig of
	// configs/mouse-brain-1.3m.toml, say); RunE2E sets its shards, output
	// and threads.
	Fit     pipeline.FitConfig
	Workers int    // cores for ingest and fit (-j)
	Work    string // caches the generated file; the shards and run go in a temporary folder inside, removed after
	Keep    bool   // keep the shards and the run
	Cached  bool   // write the shards and the fit mask through the page cache (shard.CreateOptions.Cached, pipeline.FitOptions.Cached)
	// CPUProfile, if not empty, receives a CPU profile of ingest and fit;
	// an existing file is replaced only with Force.
	CPUProfile string
	Force      bool
	Command    string       // the command line, recorded in the report
	Log        *slog.Logger // progress lines; nil: none
}

// E2EReport is where the time of a whole analysis went. Generating the
// input is not part of it.
type E2EReport struct {
	Command         string  `json:"command"`
	Input           string  `json:"input"`
	InputCached     bool    `json:"input_cached"`
	GenerateSeconds float64 `json:"generate_seconds,omitempty"`
	Nonzeros        int64   `json:"nonzeros"`
	CellsIn         int     `json:"cells_in"`
	GenesIn         int     `json:"genes_in"`
	Cells           int     `json:"cells"`      // after ingest's filters
	Genes           int     `json:"genes"`      // after ingest's filters
	Ones            int64   `json:"ones"`       // bits set in the shards
	Fits            int     `json:"fits"`       // (L, chain) fitted
	SweepsPerFit    int     `json:"sweeps_fit"` // burn-in + samples of the mean fit, the starts' first sweeps included
	Starts          int     `json:"starts"`
	StartSweeps     int     `json:"start_sweeps"`
	Workers         int     `json:"workers"`
	Kept            string  `json:"kept,omitempty"` // the folder of the shards and the run, with Keep

	// Seconds by phase: Ingest, then Fit's (pipeline.FitTimings), and
	// Total = Ingest + Fit's total.
	Ingest      float64 `json:"ingest_seconds"`
	Verify      float64 `json:"verify_seconds"`
	Mask        float64 `json:"mask_seconds"`
	Setup       float64 `json:"setup_seconds"`
	Sweeps      float64 `json:"sweeps_seconds"`
	Checkpoints float64 `json:"checkpoints_seconds"`
	Outputs     float64 `json:"outputs_seconds"`
	Scoring     float64 `json:"scoring_seconds"`
	Other       float64 `json:"other_seconds"` // the fit's time outside the phases above
	Total       float64 `json:"total_seconds"`

	Machine    Machine `json:"machine"`
	LoadBefore float64 `json:"load_before"`
	LoadAfter  float64 `json:"load_after"`
}

// NonSweepShare is the fraction of the total not spent sweeping.
func (r *E2EReport) NonSweepShare() float64 {
	if r.Total <= 0 {
		return 0
	}
	return 1 - r.Sweeps/r.Total
}

// RunE2E generates (or takes from o.Work) a CellRanger v2 HDF5 file of
// o.Size, ingests it with ingest's defaults (genes expressed in at least 1%
// of cells) and fits the shards with o.Fit, timing each phase.
func RunE2E(ctx context.Context, o E2EOptions) (*E2EReport, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Shards == "" && (o.Size.Cells < 1 || o.Size.Genes < 1) {
		return nil, fmt.Errorf("%w: e2e size %v", errOptions, o.Size)
	}
	if o.Workers < 1 {
		return nil, fmt.Errorf("%w: workers = %d, want at least 1", errOptions, o.Workers)
	}
	if o.Work == "" {
		return nil, fmt.Errorf("%w: no work folder", errOptions)
	}
	check := o.Fit
	check.Shards, check.Output = "shards", "run" // RunE2E's own, in a temporary folder
	if _, err := check.Validate(); err != nil {
		return nil, fmt.Errorf("bench: e2e fit: %w", err)
	}
	if o.CPUProfile != "" && !o.Force {
		if _, err := os.Stat(o.CPUProfile); err == nil {
			return nil, fmt.Errorf("%w: CPU profile %s already exists (use --force to replace it)", errOptions, o.CPUProfile)
		}
	}
	if err := os.MkdirAll(o.Work, 0o777); err != nil {
		return nil, fmt.Errorf("bench: creating work folder: %w", err)
	}
	rep := &E2EReport{Command: o.Command, Workers: o.Workers, Machine: machine(), LoadBefore: loadAvg()}
	if o.Shards == "" {
		if err := generateInput(ctx, o, rep); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp(o.Work, "e2e-")
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	if o.Keep {
		rep.Kept = dir
	} else {
		defer os.RemoveAll(dir)
	}
	stopProfile, err := startProfile(o.CPUProfile)
	if err != nil {
		return nil, err
	}
	defer stopProfile()
	shards := o.Shards
	if shards == "" {
		if shards, err = ingestInput(ctx, o, rep, filepath.Join(dir, "shards")); err != nil {
			return nil, err
		}
	} else if err := describeShards(shards, rep); err != nil {
		return nil, err
	}
	cfg := o.Fit
	cfg.Shards, cfg.Output, cfg.Threads = shards, filepath.Join(dir, "run"), o.Workers
	var t pipeline.FitTimings
	o.Log.Info("fitting", "cells", rep.Cells, "genes", rep.Genes, "L", cfg.L.String(), "chains", cfg.Chains)
	fr, err := pipeline.Fit(ctx, cfg, pipeline.FitOptions{Log: o.Log, Timings: &t, Cached: o.Cached})
	if err != nil {
		return nil, fmt.Errorf("bench: e2e fit: %w", err)
	}
	// A burn-in may run on past burn_in while the samples climb: the mean
	// fit's sweeps, rounded.
	sweeps := 0
	for _, r := range fr.Summary {
		sweeps += r.Sweeps
	}
	rep.Fits, rep.SweepsPerFit, rep.Starts, rep.StartSweeps = fr.Fitted, (sweeps+len(fr.Summary)/2)/max(len(fr.Summary), 1), cfg.Starts, cfg.StartSweeps
	rep.Verify, rep.Mask, rep.Setup = t.Verify.Seconds(), t.Mask.Seconds(), t.Setup.Seconds()
	rep.Sweeps, rep.Checkpoints, rep.Outputs, rep.Scoring = t.Sweeps.Seconds(), t.Checkpoints.Seconds(), t.Outputs.Seconds(), t.Scoring.Seconds()
	parts := t.Verify + t.Mask + t.Setup + t.Sweeps + t.Checkpoints + t.Outputs + t.Scoring
	rep.Other = (t.Total - parts).Seconds()
	rep.Total = rep.Ingest + t.Total.Seconds()
	rep.LoadAfter = loadAvg()
	return rep, stopProfile()
}

// ingestInput ingests rep.Input into out with ingest's defaults, timing it
// into rep, and returns out.
func ingestInput(ctx context.Context, o E2EOptions, rep *E2EReport, out string) (string, error) {
	in := ingest.DefaultOptions()
	in.Input, in.Output, in.Cached, in.Workers, in.Logger = rep.Input, out, o.Cached, o.Workers, o.Log
	o.Log.Info("ingesting", "input", rep.Input)
	ir, err := ingest.Run(ctx, in)
	if err != nil {
		return "", fmt.Errorf("bench: e2e ingest: %w", err)
	}
	rep.Ingest, rep.Nonzeros = ir.Total.Seconds(), ir.NNZ
	rep.CellsIn, rep.GenesIn, rep.Cells, rep.Genes, rep.Ones = ir.CellsIn, ir.GenesIn, ir.CellsOut, ir.GenesOut, ir.Ones
	return out, nil
}

// describeShards sets rep's input and shape from the shard folder dir.
func describeShards(dir string, rep *E2EReport) error {
	s, err := shard.Open(dir)
	if err != nil {
		return fmt.Errorf("bench: e2e: %w", err)
	}
	defer s.Close()
	m := s.Manifest()
	rep.Input, rep.InputCached = dir, true
	rep.CellsIn, rep.GenesIn, rep.Cells, rep.Genes, rep.Ones = m.Cells, m.Genes, m.Cells, m.Genes, m.Ones
	return nil
}

// generateInput sets rep.Input to the cached file of o's size, density and
// seed in o.Work, generating it first when absent.
func generateInput(ctx context.Context, o E2EOptions, rep *E2EReport) error {
	rep.Input = filepath.Join(o.Work, fmt.Sprintf("e2e-tenxv2-%s-d%g-seed%d.h5", o.Size, o.Density, o.Seed))
	if _, err := os.Stat(rep.Input); err == nil {
		rep.InputCached = true
		o.Log.Info("using cached input", "path", rep.Input)
		return nil
	}
	o.Log.Info("generating a 10x HDF5 file", "path", rep.Input, "cells", o.Size.Cells, "genes", o.Size.Genes, "density", o.Density)
	start := time.Now()
	nnz, err := ingest.GenerateTenXV2(ctx, rep.Input, o.Size.Genes, o.Size.Cells, o.Density, o.Seed, o.Workers)
	if err != nil {
		return fmt.Errorf("bench: generating the e2e input: %w", err)
	}
	rep.GenerateSeconds = time.Since(start).Seconds()
	o.Log.Info("generated", "path", rep.Input, "nonzeros", nnz, "seconds", rep.GenerateSeconds)
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r *E2EReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("bench: writing JSON report: %w", err)
	}
	return nil
}

// WriteTable writes the breakdown for people: one row per phase with its
// seconds and share of the total, then the data, the run and the machine.
func (r *E2EReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tseconds\tshare\t")
	for _, p := range []struct {
		name string
		s    float64
	}{
		{"ingest", r.Ingest}, {"verify", r.Verify}, {"mask", r.Mask}, {"setup", r.Setup},
		{"sweeps", r.Sweeps}, {"checkpoints", r.Checkpoints}, {"outputs", r.Outputs},
		{"scoring", r.Scoring}, {"other", r.Other}, {"total", r.Total},
	} {
		fmt.Fprintf(tw, "%s\t%.2f\t%.1f%%\t\n", p.name, p.s, 100*p.s/max(r.Total, 1e-9))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("bench: writing table: %w", err)
	}
	m := r.Machine
	input := fmt.Sprintf("%s (%d cells × %d genes, %d nonzeros; generated in %.1f s, or cached: %v)", r.Input, r.CellsIn, r.GenesIn, r.Nonzeros, r.GenerateSeconds, r.InputCached)
	if r.Nonzeros == 0 && r.Ingest == 0 {
		input = r.Input + " (shards given: nothing generated or ingested)"
	}
	_, err := fmt.Fprintf(w, "\nnot sweeping: %.1f%% of the total\n"+
		"input: %s\n"+
		"shards: %d cells × %d genes, %d ones; %d fits of %d sweeps (the first %d with %d starts), -j %d\n"+
		"machine: %s, %d cores (GOMAXPROCS %d), %s RAM, %s %s/%s; %s\n",
		100*r.NonSweepShare(), input,
		r.Cells, r.Genes, r.Ones, r.Fits, r.SweepsPerFit, r.StartSweeps, r.Starts, r.Workers,
		m.CPU, m.Cores, m.GOMAXPROCS, byteSize(m.MemBytes), m.GoVersion, m.OS, m.Arch, loadNote(r.LoadBefore, r.LoadAfter, []int{r.Workers}))
	if err != nil {
		return fmt.Errorf("bench: writing table: %w", err)
	}
	return nil
}
