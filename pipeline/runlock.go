package pipeline

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"scpipe/internal/infile"
	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
	"scpipe/shard"
)

// lockRun takes the run directory's lock, so that a second fit of the
// same run (a requeued job while the first still runs, a --force
// replacing it) fails at once with a message naming the holder: shared by
// a chain process (after refusing its settings that no prepared run
// takes), exclusively by the others. It first refuses a run directory
// that is, holds or lies inside one of the fit's inputs (checkRunInputs).
func lockRun(cfg FitConfig, p runPlan, o FitOptions) (*outlock.Lock, error) {
	acquire := outlock.Acquire
	if p.chain != 0 {
		if err := checkChain(cfg, p.chain, o); err != nil {
			return nil, err
		}
		acquire = outlock.AcquireShared
	} else if err := checkRunInputs(cfg); err != nil {
		return nil, err
	}
	lk, err := acquire(cfg.Output, o.Log)
	if err != nil {
		return nil, fmt.Errorf("fit: run directory %w", err)
	}
	return lk, nil
}

// checkRunInputs refuses a run directory that is, holds or lies inside the
// shards or the source of the fixed codes, symbolic links resolved: --force
// would delete them, and a fit writes inside its run.
func checkRunInputs(cfg FitConfig) error {
	if err := outlock.CheckInputs(cfg.Output, cfg.Shards, cfg.FixedCodes); err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	return nil
}

// shardsIdentity describes the shards at path, whose manifest is m, for
// RUN/shards.json and the checkpoints.
func shardsIdentity(path string, m *shard.Manifest) rundir.ShardsIdentity {
	return rundir.ShardsIdentity{Path: path, Fingerprint: m.Fingerprint(), Cells: m.Cells, Genes: m.Genes, Ones: m.Ones}
}

// unstarted reports whether the existing folder run holds nothing but what
// a start that failed before writing the configuration leaves: nothing,
// shards.json, temporaries. Such a folder is started afresh, with or
// without --resume; anything else in it (another program's files) keeps
// it from being touched.
func unstarted(run string) (bool, error) {
	if err := infile.Dir(run); err != nil {
		return false, fmt.Errorf("fit: run directory %w", err)
	}
	entries, err := os.ReadDir(run)
	if err != nil {
		return false, fmt.Errorf("fit: %w", err)
	}
	for _, e := range entries {
		if e.Name() != rundir.ShardsFile && !outlock.IsTemp(e.Name()) {
			return false, nil
		}
	}
	return true, nil
}

// checkShards refuses to resume run on shards other than those it was
// started on. A run started by a version that did not record them is not
// given a record now, lest it be of the wrong shards: the checkpoints
// written from now on carry the fingerprint instead (see restore).
func checkShards(run string, id rundir.ShardsIdentity, log *slog.Logger) error {
	path := filepath.Join(run, rundir.ShardsFile)
	stored, err := rundir.ReadShardsIdentity(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		log.Warn("the run does not record the shards it was started on (an older scpipe started it): they cannot be checked", "output", run, "shards", id.Path)
		return nil
	case err != nil:
		return fmt.Errorf("fit: --resume: %w", err)
	case stored.Fingerprint != id.Fingerprint:
		return fmt.Errorf("fit: --resume: %s was started on the shards %s, not on %s: resume it with the shards it was started on, or start a new run (another -o, or --force to replace this one)",
			run, stored, id)
	case stored.Path != id.Path && !namesFolder(run, stored, id.Path):
		log.Info("resuming on the same shards at another path", "was", stored.Path, "now", id.Path)
		return rundir.WriteShardsIdentity(path, id)
	}
	return nil
}

// namesFolder reports whether the shards run's shards.json records
// (stored: ShardsIdentity.Paths) are the folder path: the shards did not
// move, the command runs in another folder.
func namesFolder(run string, stored rundir.ShardsIdentity, path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	for _, c := range stored.Paths(run) {
		if ci, err := os.Stat(c); err == nil && os.SameFile(ci, fi) {
			return true
		}
	}
	return false
}

// removeLeftovers removes the temporaries that killed writes left in the
// run directory, or in a fit folder of it (its lock held).
func removeLeftovers(run string, log *slog.Logger) error {
	removed, err := rundir.RemoveTemporaries(run)
	for _, p := range removed {
		log.Info("removed a leftover of an interrupted fit", "path", p)
	}
	if err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	return nil
}
