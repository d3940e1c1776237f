package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"scpipe/gibbs"
	"scpipe/internal/outlock"
	"scpipe/rundir"
	"scpipe/shard"
)

// A run directory can be fitted by many processes at once, such as the
// tasks of a SLURM job array, each fitting some of its (L, chain):
//
//  1. Prepare creates the run, holding its lock exclusively: it verifies
//     the shards and writes shards.json, config.toml (every L and chain of
//     the run) and, with held-out entries, fitmask/. It fits nothing.
//  2. FitChain fits chain K of some of the run's L. It holds the run's lock
//     shared, so that any number of them run together while Fit, Prepare
//     and --force are kept out, and the lock of each fit folder
//     (RUN/Lnn/.chainK.lock) exclusively while it fits it. It writes
//     nothing outside its fit folders.
//  3. Summarize writes summary.tsv and selection.svg from the fits that
//     have finished, and lists those that have not.
//
// A fit depends only on the run's settings, the shards and its (L, chain)
// (chainSeed), so each is bit-identical to the same fit of a single
// process's Fit.

// Prepare creates the run directory cfg.Output for fits by FitChain (see
// above): it verifies the shards, records them and the configuration, and
// builds the fit mask, but fits nothing. A run that already exists with the
// same settings and shards is left as it is (a prepared run, or one whose
// fitting has begun, such as after a requeued preparation); with other
// settings it is refused, or replaced with o.Force.
func Prepare(ctx context.Context, cfg FitConfig, o FitOptions) (_ *FitReport, err error) {
	defer interrupted(ctx, &err, fmt.Sprintf("scpipe fit %s -o %s --prepare", cfg.Shards, cfg.Output))
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	Ls, err := cfg.Validate()
	if err != nil {
		return nil, err
	}
	lk, err := lockRun(cfg, o.Log)
	if err != nil {
		return nil, err
	}
	defer lk.Release()
	src, err := openVerified(ctx, cfg.Shards)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if cfg, err = cfg.ResolveModel(src.Manifest(), o.Log); err != nil {
		return nil, err
	}
	id := shardsIdentity(cfg.Shards, src.Manifest())
	stored, err := LoadFitConfig(filepath.Join(cfg.Output, rundir.ConfigFile), FitConfig{})
	existing := err == nil && !o.Force
	switch {
	case existing:
		if d := configDiff(stored, cfg); len(d) > 0 {
			return nil, fmt.Errorf("fit: --prepare: %s was prepared with other settings (%s; see its %s): use another -o, or --force to replace it",
				cfg.Output, strings.Join(d, ", "), rundir.ConfigFile)
		}
		if err := sameShards(cfg.Output, id, o.Log); err != nil {
			return nil, fmt.Errorf("fit: --prepare: %w", err)
		}
		o.Log.Info("the run is already prepared with these settings and shards", "run", cfg.Output)
	case err != nil && !errors.Is(err, os.ErrNotExist) && !o.Force:
		return nil, fmt.Errorf("fit: --prepare: %w", err)
	}
	o.Resume = existing // checks the run again and removes what killed writers left
	fixed, err := fixedCodeSets(cfg, src.Manifest(), Ls, existing, o.Log)
	if err != nil {
		return nil, err
	}
	if err := prepareRunDir(cfg, o, id); err != nil {
		return nil, err
	}
	if !existing {
		if err := writeConfig(cfg); err != nil {
			return nil, err
		}
	}
	if err := writeFixedCodes(cfg.Output, fixed); err != nil {
		return nil, err
	}
	_, closeMask, heldOut, err := fitData(ctx, src, cfg, o, true)
	if err != nil {
		return nil, err
	}
	closeMask()
	o.Log.Info("run prepared: fit each (L, chain) with scpipe fit SHARDS -o RUN --L l --chain c, then scpipe summarize RUN",
		"run", cfg.Output, "L", cfg.L.String(), "chains", cfg.Chains, "fits", len(Ls)*cfg.Chains)
	return &FitReport{Run: cfg.Output, HeldOut: heldOut}, nil
}

// FitChain runs (or resumes, with o.Resume) the fits of chain in each L of
// cfg.L, in the run directory cfg.Output that Prepare made, beside other
// processes fitting other (L, chain) of it (see above). cfg must match the
// run's configuration but for L, which may be any of the run's sizes, and
// the thread count and checkpoint cadence. It writes no summary (see
// Summarize).
func FitChain(ctx context.Context, cfg FitConfig, chain int, o FitOptions) (_ *FitReport, err error) {
	defer interrupted(ctx, &err, fmt.Sprintf("scpipe fit %s -o %s --chain %d --resume", cfg.Shards, cfg.Output, chain))
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	Ls, err := cfg.Validate()
	if err != nil {
		return nil, err
	}
	if chain < 1 {
		return nil, fmt.Errorf("%w: --chain %d: chains are numbered from 1", ErrConfig, chain)
	}
	if o.Force {
		return nil, fmt.Errorf("fit: --force replaces a whole run and cannot go with --chain (to fit one (L, chain) again, delete its folder, such as %s)", rundir.FitDir(cfg.Output, Ls[0], chain))
	}
	if err := checkRunInputs(cfg); err != nil {
		return nil, err
	}
	lk, err := outlock.AcquireShared(cfg.Output, o.Log)
	if err != nil {
		return nil, fmt.Errorf("fit: run directory %w", err)
	}
	defer lk.Release()
	run, err := preparedConfig(cfg, chain, Ls)
	if err != nil {
		return nil, err
	}
	src, err := openVerified(ctx, cfg.Shards)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if err := sameShards(cfg.Output, shardsIdentity(cfg.Shards, src.Manifest()), o.Log); err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	if !o.Resume {
		if err := refuseStarted(cfg.Output, Ls, chain); err != nil {
			return nil, err
		}
	}
	data, closeMask, heldOut, err := fitData(ctx, src, run, o, false)
	if err != nil {
		return nil, err
	}
	defer closeMask()
	if data, err = data.Counted(run.Threads); err != nil {
		return nil, err
	}
	rep := &FitReport{Run: cfg.Output, HeldOut: heldOut}
	for _, L := range Ls {
		resume := fmt.Sprintf("scpipe fit %s -o %s --L %d --chain %d --resume", cfg.Shards, cfg.Output, L, chain)
		done, err := fitLocked(ctx, src, data, run, o, L, chain, resume)
		if err != nil {
			return rep, err
		}
		if done {
			rep.Skipped++
		} else {
			rep.Fitted++
		}
	}
	return rep, nil
}

// fitLocked runs fitOne holding the fit folder's lock, after removing the
// temporaries that a killed writer of this fit left in it.
func fitLocked(ctx context.Context, src *shard.Shard, data gibbs.Data, cfg FitConfig, o FitOptions, L, chain int, resume string) (bool, error) {
	dir := rundir.FitDir(cfg.Output, L, chain)
	lk, err := outlock.Acquire(dir, o.Log)
	if err != nil {
		return false, fmt.Errorf("fit: L=%d chain %d: %w", L, chain, err)
	}
	defer lk.Release()
	if _, err := os.Stat(dir); err == nil && lk.Held() {
		if err := removeLeftovers(dir, o.Log); err != nil {
			return false, err
		}
	}
	return fitOne(ctx, src, data, cfg, o, L, chain, resume)
}

// preparedConfig reads the configuration of the prepared run cfg.Output
// and checks that cfg (and the fits it asks for, chain of each of Ls) is
// of that run. It returns cfg with the run's L, so that checkpoints carry
// the run's configuration hash whichever process writes them.
func preparedConfig(cfg FitConfig, chain int, Ls []int) (FitConfig, error) {
	path := filepath.Join(cfg.Output, rundir.ConfigFile)
	stored, err := LoadFitConfig(path, FitConfig{})
	if errors.Is(err, os.ErrNotExist) {
		return cfg, fmt.Errorf("fit: --chain: %s is not a prepared run (it has no %s): prepare it first with scpipe fit %s -o %s --prepare and the run's settings (--config …)",
			cfg.Output, rundir.ConfigFile, cfg.Shards, cfg.Output)
	}
	if err != nil {
		return cfg, fmt.Errorf("fit: --chain: %w", err)
	}
	if chain > stored.Chains {
		return cfg, fmt.Errorf("%w: --chain %d: %s has %d chains per L (chains in its %s)", ErrConfig, chain, cfg.Output, stored.Chains, rundir.ConfigFile)
	}
	for _, L := range Ls {
		if !slices.Contains(stored.L, L) {
			return cfg, fmt.Errorf("%w: --L %s: %s fits L = %s (its %s), not %d", ErrConfig, LSizes(Ls), cfg.Output, stored.L, rundir.ConfigFile, L)
		}
	}
	run := cfg
	run.L = stored.L
	// The run's model was resolved from these shards when it was prepared.
	if run.Noise.Auto {
		run.Noise = stored.Noise
	}
	if run.Housekeeping.Auto {
		run.Housekeeping = stored.Housekeeping
	}
	if d := configDiff(stored, run); len(d) > 0 {
		return cfg, fmt.Errorf("%w: the settings differ from those %s was prepared with (%s; see its %s; only --L, --chain, --threads and the checkpoint cadence may differ)",
			ErrConfig, cfg.Output, strings.Join(d, ", "), rundir.ConfigFile)
	}
	return run, nil
}

// refuseStarted refuses, without --resume, fits among chain of each of Ls
// that a process has already started or finished.
func refuseStarted(run string, Ls []int, chain int) error {
	for _, L := range Ls {
		dir := rundir.FitDir(run, L, chain)
		for _, f := range []string{rundir.TraceFile, rundir.CheckpointFile} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				return fmt.Errorf("fit: L=%d chain %d of %s has already been started (%s exists): use --resume to continue it, or skip it if it has finished",
					L, chain, run, filepath.Join(dir, f))
			}
		}
	}
	return nil
}

// configDiff lists the settings that make a and b's results differ, as
// "key: a's value ≠ b's value" (paths, threads and checkpoint cadence
// aside).
func configDiff(a, b FitConfig) []string {
	if a.hash() == b.hash() {
		return nil
	}
	kv := func(c FitConfig) map[string]string {
		c.Shards, c.Output, c.Threads = "", "", 0
		c.CheckpointEvery, c.CheckpointMinutes = 0, 0
		enc, _ := c.EncodeTOML()
		m := map[string]string{}
		for line := range strings.Lines(string(enc)) {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok {
				m[k] = v
			}
		}
		return m
	}
	ma, mb := kv(a), kv(b)
	var d []string
	for _, k := range configKeys() {
		if ma[k] != mb[k] {
			d = append(d, fmt.Sprintf("%s: %s ≠ %s", k, orNone(ma[k]), orNone(mb[k])))
		}
	}
	if len(d) == 0 { // a difference the keys do not show (cannot happen while hash encodes the same TOML)
		d = append(d, "configuration hash")
	}
	return d
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

// openVerified opens the shards at path and checks every checksum.
func openVerified(ctx context.Context, path string) (*shard.Shard, error) {
	src, err := shard.Open(path)
	if err != nil {
		return nil, err
	}
	if err := src.Verify(ctx); err != nil {
		src.Close()
		return nil, err
	}
	return src, nil
}
