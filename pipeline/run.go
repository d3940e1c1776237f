package pipeline

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"scpipe/gibbs"
	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
	"scpipe/shard"
)

// runPlan is how a process takes part in a run: the steps of openRun
// that it takes, decided once by its entry point (newRunPlan, chainPlan,
// prepared by Fit, Prepare, FitChain and FitMPI).
type runPlan struct {
	// chain is the one chain a chain process fits, of a run another
	// process prepared (0: every chain, of a run this process prepares):
	// the run's lock is taken shared, its configuration and shards must
	// be the prepared ones, and each fit's folder is locked while fitted.
	chain int
	// continues takes the run's own configuration for the settings the
	// command did not give (a resumed run, a chain process); a run
	// started afresh is validated before anything is made.
	continues bool
	// readStored reads the run's own configuration (to continue it, or to
	// compare a run prepared again with it).
	readStored bool
	// refuse refuses settings this way of fitting cannot fit, before the
	// run directory is touched (nil: none).
	refuse func(FitConfig) error
	// reprepare keeps a run prepared before with the same settings and
	// shards, but for what killed writers left in it (Prepare).
	reprepare bool
	// fits opens the data for fitting in this process: the fixed codes
	// and the counted data (not a run only prepared, nor rank 0 of MPI,
	// whose samplers count their own cells).
	fits bool
	// resume is the command that continues fit (L, chain) after an
	// interruption, from the run's shards and output.
	resume func(shards, out string, L, chain int) string
}

// newRunPlan is the plan of a process that fits (fits) or prepares a
// whole run, exclusively: started afresh, or continued with o.Resume.
func newRunPlan(o FitOptions, fits bool) runPlan {
	return runPlan{continues: o.Resume, readStored: o.Resume, fits: fits,
		resume: func(shards, out string, _, _ int) string {
			return fmt.Sprintf("scpipe fit %s -o %s --resume", shards, out)
		}}
}

// chainPlan is the plan of a chain process, which fits chain of some L of
// a prepared run beside other processes.
func chainPlan(chain int) runPlan {
	return runPlan{chain: chain, continues: true, readStored: true, fits: true,
		resume: func(shards, out string, L, chain int) string {
			return fmt.Sprintf("scpipe fit %s -o %s --L %d --chain-index %d --resume", shards, out, L, chain)
		}}
}

// openedRun is a run opened for fitting by openRun (or openRank).
type openedRun struct {
	plan      runPlan
	cfg       FitConfig  // validated, its model and thread count resolved
	stored    *FitConfig // the run's configuration as the lock found it (nil: none, or not read)
	Ls        []int      // the latent sizes this process fits
	chains    []int      // the chains of each L it fits
	o         FitOptions
	lock      *outlock.Lock // nil in MPI ranks other than 0
	src       *shard.Shard
	data      gibbs.Data // the fits' view of the shards (fitData), counted (but under MPI, whose samplers count their cells)
	closeMask func()     // nil: no mask of the run's to close
	heldOut   int64
	fixed     []gibbs.FixedCode // the run's fixed codes (runFixedCodes), read once
	hash      string            // cfg.hash(), the key of the run's checkpoints
	crew      crew              // the processes that run each fit together
}

// openRun opens the run cfg.Output as plan p says, top to bottom.
func openRun(ctx context.Context, cfg FitConfig, o FitOptions, p runPlan) (_ *openedRun, err error) {
	r := &openedRun{plan: p, o: o, crew: alone{}}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if !p.continues {
		// A new run's settings are all given: refused before anything is
		// made, not even the lock beside the run.
		if _, err := cfg.Validate(); err != nil {
			return nil, err
		}
	}
	if r.lock, err = lockRun(cfg, p, o); err != nil {
		return nil, err
	}
	if p.readStored {
		if r.stored, err = storedConfig(cfg.Output); err != nil {
			return nil, err
		}
	}
	if r.stored != nil && p.continues {
		cfg = o.Given.over(*r.stored, cfg)
	}
	if p.refuse != nil {
		// Before the run directory is touched: a resumed run's own
		// settings may be what this process cannot fit.
		if err := p.refuse(cfg); err != nil {
			return nil, err
		}
	}
	if r.Ls, err = cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg, r.chains, err = r.ownChains(cfg); err != nil {
		return nil, err
	}
	// The shards are checked before the run directory is touched, so that
	// bad input never costs an existing run (not even with --force).
	start := time.Now()
	workers := threads(cfg.Threads)
	if r.src, err = shard.OpenVerified(ctx, cfg.Shards, workers); err != nil {
		return nil, err
	}
	o.Timings.since(phaseVerify, start)
	if cfg, err = r.prepareDir(cfg, shardsIdentity(cfg.Shards, r.src.Manifest())); err != nil {
		return nil, err
	}
	cfg.Threads = workers // after the configuration is written: config.toml keeps what was given
	r.cfg, r.hash = cfg, cfg.hash()
	start = time.Now()
	if r.data, r.closeMask, r.heldOut, err = fitData(ctx, r.src, cfg, o, p.chain == 0); err != nil {
		return nil, err
	}
	o.Timings.since(phaseMask, start)
	if !p.fits {
		return r, nil
	}
	start = time.Now()
	if r.fixed, err = runFixedCodes(cfg, r.src.Manifest()); err != nil {
		return nil, err
	}
	if r.data, err = r.data.Counted(cfg.Threads); err != nil {
		return nil, err
	}
	o.Timings.since(phaseSetup, start)
	return r, nil
}

// ownChains returns the chains of each L this process fits (every chain
// of the run, or a chain process's one), and the configuration a chain
// process takes from its prepared run.
func (r *openedRun) ownChains(cfg FitConfig) (FitConfig, []int, error) {
	if r.plan.chain > 0 {
		cfg, err := preparedConfig(r.stored, cfg, r.plan.chain, r.Ls)
		return cfg, []int{r.plan.chain}, err
	}
	var chains []int
	for c := 1; c <= cfg.Chains; c++ {
		chains = append(chains, c)
	}
	return cfg, chains, nil
}

// checkChain refuses a chain process's settings that no prepared run
// takes.
func checkChain(cfg FitConfig, chain int, o FitOptions) error {
	if o.Force {
		return fmt.Errorf("fit: --force replaces a whole run and cannot go with --chain-index (to fit one (L, chain) again, delete its folder, such as %s)", rundir.FitDir(cfg.Output, cfg.L[0], chain))
	}
	return checkRunInputs(cfg)
}

// prepareDir prepares the run directory for cfg on the shards id, its
// model resolved, which it returns: it writes the configuration, the fixed
// codes and shards.json (prepareRunDir). A run prepared again
// (plan.reprepare) with the same settings and shards stays as it is, but
// for what killed writers left in it. A chain process's run was prepared
// by another: it checks the shards are the run's, and that its fits have
// not started unless it resumes them.
func (r *openedRun) prepareDir(cfg FitConfig, id rundir.ShardsIdentity) (FitConfig, error) {
	if r.plan.chain > 0 {
		if err := rundir.SameShards(cfg.Output, id, r.o.Log); err != nil {
			return cfg, fmt.Errorf("fit: %w", err)
		}
		if !r.o.Resume {
			return cfg, refuseStarted(cfg.Output, r.Ls, r.plan.chain)
		}
		return cfg, nil
	}
	cfg, err := cfg.resolveModel(r.src.Manifest(), r.o.Log)
	if err != nil {
		return cfg, err
	}
	existing := false
	if r.plan.reprepare {
		if existing, err = preparedBefore(r.stored, cfg, id, r.o); err != nil {
			return cfg, err
		}
	}
	// Before the run directory is touched, so that a bad source costs
	// nothing.
	sets, err := fixedCodeSets(cfg, r.src.Manifest(), r.Ls, r.o.Resume || existing, r.o.Log)
	if err != nil {
		return cfg, err
	}
	if existing { // its settings and shards checked by preparedBefore
		if err := removeLeftovers(cfg.Output, r.o.Log); err != nil {
			return cfg, err
		}
		return cfg, writeFixedCodes(cfg.Output, sets)
	}
	if err := prepareRunDir(cfg, r.o, id, r.stored); err != nil {
		return cfg, err
	}
	if err := writeConfig(cfg); err != nil {
		return cfg, err
	}
	return cfg, writeFixedCodes(cfg.Output, sets)
}

// preparedBefore reports whether the run cfg.Output was prepared before
// (its configuration stored; nil: none) with cfg's settings on the shards
// id, refusing one prepared with others (unless forced, which replaces
// it).
func preparedBefore(stored *FitConfig, cfg FitConfig, id rundir.ShardsIdentity, o FitOptions) (bool, error) {
	if o.Force || stored == nil {
		return false, nil
	}
	if d := configDiff(*stored, cfg); len(d) > 0 {
		return false, fmt.Errorf("fit: --prepare: %s was prepared with other settings (%s; see its %s): use another -o, or --force to replace it",
			cfg.Output, strings.Join(d, ", "), rundir.ConfigFile)
	}
	if err := rundir.SameShards(cfg.Output, id, o.Log); err != nil {
		return false, fmt.Errorf("fit: --prepare: %w", err)
	}
	o.Log.Info("the run is already prepared with these settings and shards", "output", cfg.Output)
	return true, nil
}

// openRank opens, for an MPI rank other than 0, its cell blocks b0 …
// b1−1 of the shards and of the fit mask of the run that rank 0 opened
// with the configuration sent (its TOML). The rank sweeps on its own
// number of threads (its -j, or its node's cores): ranks may run on nodes
// unlike rank 0's, and the results do not depend on it.
func openRank(sent []byte, ownThreads int, o FitOptions, b0, b1 int) (_ *openedRun, err error) {
	cfg, _, err := decodeFitConfig(sent, "rank 0's configuration", FitConfig{})
	if err != nil {
		return nil, err
	}
	r := &openedRun{plan: mpiPlan(), o: o}
	if r.Ls, err = cfg.Validate(); err != nil {
		return nil, err
	}
	for c := 1; c <= cfg.Chains; c++ {
		r.chains = append(r.chains, c)
	}
	if r.src, r.data, r.closeMask, err = openBlocks(cfg, b0, b1); err != nil {
		return nil, err
	}
	// The same manifest gives every rank rank 0's model.
	if r.cfg, err = cfg.resolveModel(r.src.Manifest(), o.Log); err != nil {
		r.Close()
		return nil, err
	}
	r.cfg.Threads = threads(ownThreads)
	r.hash = r.cfg.hash()
	return r, nil
}

// Close lets the run go: the data, then the lock.
func (r *openedRun) Close() {
	if r.closeMask != nil {
		r.closeMask()
	}
	if r.src != nil {
		r.src.Close()
	}
	r.lock.Release()
}

// fitAll fits each of the process's (L, chain) in turn with fit, which
// reports whether the fit was already complete.
func (r *openedRun) fitAll(ctx context.Context, fit func(ctx context.Context, L, chain int) (bool, error)) (*FitReport, error) {
	rep := &FitReport{Run: r.cfg.Output, HeldOut: r.heldOut}
	for _, L := range r.Ls {
		for _, chain := range r.chains {
			done, err := fit(ctx, L, chain)
			if err != nil {
				return rep, err
			}
			if done {
				rep.Skipped++
			} else {
				rep.Fitted++
				r.o.run.finish()
			}
		}
	}
	return rep, nil
}

// resumeCommand is the command that continues fit (L, chain) of the run
// after an interruption.
func (r *openedRun) resumeCommand(L, chain int) string {
	return r.plan.resume(r.cfg.Shards, r.cfg.Output, L, chain)
}

// fitProcess runs (or resumes, or skips when complete) fit (L, chain) in
// this process: a chain process holds the fit folder's lock while it
// fits, after removing the temporaries that a killed writer of this fit
// left in it.
func (r *openedRun) fitProcess(ctx context.Context, L, chain int) (bool, error) {
	if r.plan.chain > 0 {
		dir := rundir.FitDir(r.cfg.Output, L, chain)
		lk, err := outlock.Acquire(dir, r.o.Log)
		if err != nil {
			return false, fmt.Errorf("fit: L=%d chain %d: %w", L, chain, err)
		}
		defer lk.Release()
		if _, err := os.Stat(dir); err == nil && lk.Held() {
			if err := removeLeftovers(dir, r.o.Log); err != nil {
				return false, err
			}
		}
	}
	return r.fitOne(ctx, L, chain)
}
