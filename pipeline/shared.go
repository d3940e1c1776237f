package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"scpipe/internal/rundir"
	"scpipe/pipeline/runsummary"
)

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
	p := newRunPlan(o, false)
	p.readStored, p.reprepare = o.Resume || !o.Force, true
	r, err := openRun(ctx, cfg, o, p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	o.Log.Info("run prepared: fit each (L, chain) with scpipe fit SHARDS -o RUN --L l --chain-index c, then scpipe summarize RUN",
		"output", cfg.Output, "L", r.cfg.L.String(), "chains", r.cfg.Chains, "fits", len(r.Ls)*r.cfg.Chains)
	return &FitReport{Run: cfg.Output, HeldOut: r.heldOut}, nil
}

// FitChain runs (or resumes, with o.Resume) the fits of chain in each L of
// cfg.L, in the run directory cfg.Output that Prepare made, beside other
// processes fitting other (L, chain) of it (see above). cfg must match the
// run's configuration but for L, which may be any of the run's sizes, and
// the thread count and checkpoint cadence. It writes no summary (see
// runsummary.Summarize).
func FitChain(ctx context.Context, cfg FitConfig, chain int, o FitOptions) (_ *FitReport, err error) {
	defer interrupted(ctx, &err, fmt.Sprintf("scpipe fit %s -o %s --chain-index %d --resume", cfg.Shards, cfg.Output, chain))
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if chain < 1 {
		return nil, fmt.Errorf("%w: --chain-index %d: chains are numbered from 1", ErrConfig, chain)
	}
	r, err := openRun(ctx, cfg, o, chainPlan(chain))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.fitAll(ctx, r.fitProcess)
}

// preparedConfig checks that cfg (and the fits it asks for, chain of
// each of Ls) is of the prepared run cfg.Output, whose configuration is
// stored (nil: none). It returns cfg with the run's L, so that
// checkpoints carry the run's configuration hash whichever process writes
// them.
func preparedConfig(stored *FitConfig, cfg FitConfig, chain int, Ls []int) (FitConfig, error) {
	if stored == nil {
		return cfg, fmt.Errorf("fit: --chain-index: %s is not a prepared run (it has no %s): prepare it first with scpipe fit %s -o %s --prepare and the run's settings (--config …)",
			cfg.Output, rundir.ConfigFile, cfg.Shards, cfg.Output)
	}
	if chain > stored.Chains {
		return cfg, fmt.Errorf("%w: --chain-index %d: %s has %d chains per L (chains in its %s)", ErrConfig, chain, cfg.Output, stored.Chains, rundir.ConfigFile)
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
	if d := configDiff(*stored, run); len(d) > 0 {
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
		enc, _ := c.encodeTOML()
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

// SummaryPlan reads what the summary of the run directory run needs of its
// configuration (config.toml): the fits it asks for and the entries it
// holds out. It is runsummary.Summarize's plan; a run without a
// configuration gives an error wrapping os.ErrNotExist.
func SummaryPlan(run string) (runsummary.Plan, error) {
	path := filepath.Join(run, rundir.ConfigFile)
	cfg, keys, err := LoadFitConfig(path, FitConfig{})
	if err != nil {
		return runsummary.Plan{}, err
	}
	// Every config.toml scpipe fit writes has them; taken as zero, a file
	// cut short would summarise a run as one that held nothing out.
	var missing []string
	for _, k := range []string{"L", "chains", "holdout"} {
		if !slices.Contains(keys, k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return runsummary.Plan{}, fmt.Errorf("config %s: %w: it lacks %s, which scpipe fit always writes (cut short or edited?)", path, ErrConfig, strings.Join(missing, ", "))
	}
	return runsummary.Plan{L: cfg.L, Chains: cfg.Chains, Holdout: cfg.holdoutSpec()}, nil
}
