package runsummary

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"

	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
	"scpipe/pipeline/internal/holdout"
	"scpipe/shard"
)

// Plan is what a run's configuration asks of its fits that its summary
// needs: the (L, chain) to expect and the entries held out.
type Plan struct {
	L       []int
	Chains  int // chains 1 … Chains of every L
	Holdout holdout.Spec
}

// Options are the settings of Summarize.
type Options struct {
	// Shards is the shard folder the run was fitted to; "" takes the path
	// recorded in RUN/shards.json. Either way its fingerprint must be the
	// recorded one.
	Shards  string
	Threads int          // cores for scoring held-out entries (0: all)
	Log     *slog.Logger // nil: discard
}

// MissingFit is an (L, chain) of a run's configuration that has not
// finished.
type MissingFit struct {
	L, Chain int
	// Sweep is the number of sweeps its last checkpoint holds: 0 when the
	// fit has no readable checkpoint or stopped before its first sweep.
	Sweep int64
}

func (m MissingFit) String() string {
	if m.Sweep == 0 {
		return fmt.Sprintf("L=%d chain %d (not started)", m.L, m.Chain)
	}
	return fmt.Sprintf("L=%d chain %d (checkpoint after sweep %d)", m.L, m.Chain, m.Sweep)
}

// Report is what Summarize wrote and found.
type Report struct {
	Run     string
	Summary []rundir.SummaryRow
	// Missing lists, by L then chain, the fits of the run's configuration
	// that have not finished; the summary leaves them out.
	Missing []MissingFit
}

// Summarize writes summary.tsv and selection.svg of the run directory run
// (see Write) from the fits that have finished, and reports which of the
// (L, chain) of its configuration have not. Once every fit has finished,
// it writes what the fit writes at its end, byte for byte. It holds the
// run's lock shared, so it may run while other processes fit the run (one
// chain each), but not beside a process that holds it whole (a fit or its
// preparation). plan reads the run's configuration (pipeline.SummaryPlan),
// under the lock, so that it is the configuration of the fits summarised;
// an error of plan wrapping os.ErrNotExist says that run is no run
// directory.
func Summarize(ctx context.Context, run string, plan func(run string) (Plan, error), o Options) (*Report, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Threads <= 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	lk, err := outlock.AcquireShared(run, o.Log)
	if err != nil {
		return nil, fmt.Errorf("summarize: run directory %w", err)
	}
	defer lk.Release()
	p, err := plan(run)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("summarize: %s is not a run directory: it has no %s (scpipe fit writes it)", run, rundir.ConfigFile)
	}
	if err != nil {
		return nil, fmt.Errorf("summarize: %w", err)
	}
	missing, finished, err := missingFits(run, p)
	if err != nil {
		return nil, fmt.Errorf("summarize: %w", err)
	}
	rep := &Report{Run: run, Missing: missing}
	if finished == 0 {
		return rep, fmt.Errorf("summarize: no fit of %s has finished (%d of %d missing)", run, len(missing), len(p.L)*p.Chains)
	}
	path, err := runShards(run, o.Shards)
	if err != nil {
		return rep, err
	}
	src, err := shard.OpenVerified(ctx, path, o.Threads)
	if err != nil {
		return rep, fmt.Errorf("summarize: %w", err)
	}
	defer src.Close()
	m := src.Manifest()
	id := rundir.ShardsIdentity{Path: path, Fingerprint: m.Fingerprint(), Cells: m.Cells, Genes: m.Genes, Ones: m.Ones}
	if err := rundir.SameShards(run, id, o.Log); err != nil {
		return rep, fmt.Errorf("summarize: %w", err)
	}
	if rep.Summary, err = Write(ctx, run, src, p.Holdout, o.Threads, o.Log); err != nil {
		return rep, err
	}
	for _, m := range missing {
		o.Log.Warn("fit missing from the summary: it has not finished", "L", m.L, "chain", m.Chain, "checkpoint_sweep", m.Sweep)
	}
	return rep, nil
}

// missingFits lists the fits of p's (L, chain) that have not finished in
// run, and counts the finished fits of run (of any L and chain).
func missingFits(run string, p Plan) ([]MissingFit, int, error) {
	fits, err := rundir.Fits(run)
	if err != nil {
		return nil, 0, err
	}
	type key struct{ L, chain int }
	found := map[key]rundir.Fit{}
	finished := 0
	for _, f := range fits {
		found[key{f.L, f.Chain}] = f
		if f.Complete() {
			finished++
		}
	}
	var missing []MissingFit
	for _, L := range p.L {
		for chain := 1; chain <= p.Chains; chain++ {
			f, ok := found[key{L, chain}]
			if ok && f.Complete() {
				continue
			}
			m := MissingFit{L: L, Chain: chain}
			if ok && f.Checkpoint {
				meta, _, err := rundir.ReadCheckpoint(filepath.Join(f.Dir, rundir.CheckpointFile))
				if err == nil {
					m.Sweep = meta.Sweep
				}
			}
			missing = append(missing, m)
		}
	}
	return missing, finished, nil
}

// runShards returns the shard folder to summarise run with: override, or
// the path run records.
func runShards(run, override string) (string, error) {
	if override != "" {
		return override, nil
	}
	id, err := rundir.ReadShardsIdentity(filepath.Join(run, rundir.ShardsFile))
	if err != nil {
		return "", fmt.Errorf("summarize: %w (name the shards the run was fitted to with --shards)", err)
	}
	path, err := id.Find(run)
	if err != nil {
		return "", fmt.Errorf("summarize: %w: name them with --shards", err)
	}
	return path, nil
}
