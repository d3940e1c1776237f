package rundir

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"scpipe/internal/infile"
)

// File names inside a run directory (RUN/...) and inside a fit directory
// (RUN/Lnn/chainK/...).
const (
	ConfigFile     = "config.toml"   // RUN/config.toml: the resolved configuration
	SummaryFile    = "summary.tsv"   // RUN/summary.tsv: one row per (L, chain)
	SelectionFile  = "selection.svg" // RUN/selection.svg: model selection plot
	CodesFile      = "codes.parquet" // fit: one row per gene
	CellsFile      = "cells.parquet" // fit: one row per cell
	TraceFile      = "trace.parquet" // fit: one row per sweep
	CheckpointFile = "state.ckpt"    // fit: sampler checkpoint
	// SamplesFile holds a fit's retained states (scpipe fit
	// --keep-samples), in gibbs.Result.MarshalSamples's encoding.
	SamplesFile = "samples.bin"
	// FixedCodesFile (RUN/fixed-codes.gmt) holds the codes that every fit
	// of the run holds fixed (scpipe fit --fixed-codes), as GMT with the
	// shards' gene ids: codes 1, 2, … of every fit, in its order.
	FixedCodesFile = "fixed-codes.gmt"
	// ParamsFile (RUN/Lnn/params.bin) holds the parameters the chains of
	// an L share (scpipe fit --share-params), in gibbs.Params's encoding.
	ParamsFile = "params.bin"
	// FitMaskDir (RUN/fitmask) is the shard folder of the entries the fits
	// saw when entries are held out: observed and not held out.
	FitMaskDir = "fitmask"
)

// FitDir returns the folder of the fit with L codes and the given 1-based
// chain: RUN/L05/chain1. L is written with at least two digits so that the
// folders sort by L up to 99.
func FitDir(run string, L, chain int) string {
	return filepath.Join(run, fmt.Sprintf("L%02d", L), "chain"+strconv.Itoa(chain))
}

// ParamsPath returns the file of the parameters the chains of L share:
// RUN/L05/params.bin.
func ParamsPath(run string, L int) string {
	return filepath.Join(run, fmt.Sprintf("L%02d", L), ParamsFile)
}

// Fit is one (L, chain) folder found in a run directory, with the files it
// holds.
type Fit struct {
	L, Chain int
	Dir      string // FitDir(run, L, Chain)

	Codes, Cells, Trace, Checkpoint bool // whether each file exists
}

// Complete reports whether the fit has all of its result tables, which
// pipeline writes only when the fit has finished.
func (f Fit) Complete() bool { return f.Codes && f.Cells && f.Trace }

// Fits lists the fits present in run, sorted by L and then chain. Only
// folders named exactly as FitDir names them count (L05, not L5 or L005;
// chain2, not chain02); anything else is ignored, as are the temporary files
// of unfinished atomic writes.
func Fits(run string) ([]Fit, error) {
	top, err := os.ReadDir(run)
	if err != nil {
		return nil, fmt.Errorf("rundir: list fits: %w", err)
	}
	var fits []Fit
	for _, le := range top {
		L, ok := parseNumbered(le.Name(), "L")
		if !ok || !le.IsDir() || le.Name() != fmt.Sprintf("L%02d", L) {
			continue
		}
		ldir := filepath.Join(run, le.Name())
		chains, err := os.ReadDir(ldir)
		if err != nil {
			return nil, fmt.Errorf("rundir: list fits: %w", err)
		}
		for _, ce := range chains {
			chain, ok := parseNumbered(ce.Name(), "chain")
			if !ok || !ce.IsDir() || ce.Name() != "chain"+strconv.Itoa(chain) {
				continue
			}
			dir := filepath.Join(ldir, ce.Name())
			fit := Fit{L: L, Chain: chain, Dir: dir}
			for _, f := range []struct {
				name string
				has  *bool
			}{{CodesFile, &fit.Codes}, {CellsFile, &fit.Cells}, {TraceFile, &fit.Trace}, {CheckpointFile, &fit.Checkpoint}} {
				// A pipe or a device in a table's place is damage to name,
				// not a fit that has not finished (which a resume would fit
				// again without a word).
				err := infile.Check(filepath.Join(dir, f.name))
				*f.has = err == nil
				if err != nil && !os.IsNotExist(err) {
					return nil, fmt.Errorf("rundir: list fits: %w", err)
				}
			}
			fits = append(fits, fit)
		}
	}
	slices.SortFunc(fits, func(a, b Fit) int {
		if a.L != b.L {
			return a.L - b.L
		}
		return a.Chain - b.Chain
	})
	return fits, nil
}

// parseNumbered parses names such as "L05" or "chain2": prefix then a
// positive decimal number (no sign, no spaces).
func parseNumbered(name, prefix string) (int, bool) {
	digits, ok := strings.CutPrefix(name, prefix)
	if !ok || digits == "" {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}
