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

// Every way of fitting a run goes through one lifecycle: openRun takes the
// run's lock, reads the run's own configuration once where the command
// continues it (a resumed run, a chain process: o.Given), validates the
// configuration, verifies the shards, resolves the model, prepares the
// run directory (or checks the prepared run it shares), reads the fixed
// codes and opens the data the fits sweep, once; fitAll then fits the
// process's (L, chain) in turn, each with fitOne (fitone.go), the one
// loop of a fit whatever its crew, and Close lets the run go. The ways differ in what they open and fit:
//
//   - Fit (wholeRun): every fit, in one process, the run's lock held
//     exclusively.
//   - Prepare (prepareRun): the run made ready for processes that share
//     it; nothing is fitted.
//   - FitChain (chainRun): one chain of some L of a prepared run, beside
//     other processes: the run's lock shared, each fit's folder locked.
//   - FitMPI (mpiRun): every fit spread over MPI ranks (the crew ranks);
//     rank 0 opens the run as Fit does, the other ranks their cell blocks
//     (openRank).

// runMode is how a process takes part in a run.
type runMode uint8

const (
	wholeRun runMode = iota
	prepareRun
	chainRun
	mpiRun
)

// openedRun is a run opened for fitting by openRun (or openRank).
type openedRun struct {
	mode      runMode
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

// openRun opens the run cfg.Output for mode; chain is the chain a
// chainRun fits.
func openRun(ctx context.Context, cfg FitConfig, o FitOptions, mode runMode, chain int) (_ *openedRun, err error) {
	r := &openedRun{mode: mode, o: o, crew: alone{}}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if mode != chainRun && !o.Resume {
		// A new run's settings are all given: refused before anything is
		// made, not even the lock beside the run.
		if _, err := cfg.Validate(); err != nil {
			return nil, err
		}
	}
	if mode == chainRun {
		if err := checkChain(cfg, chain, o); err != nil {
			return nil, err
		}
		if r.lock, err = outlock.AcquireShared(cfg.Output, o.Log); err != nil {
			return nil, fmt.Errorf("fit: run directory %w", err)
		}
	} else if r.lock, err = lockRun(cfg, o.Log); err != nil {
		return nil, err
	}
	if mode == chainRun || o.Resume || mode == prepareRun && !o.Force {
		if r.stored, err = storedConfig(cfg.Output); err != nil {
			return nil, err
		}
	}
	if r.stored != nil && (mode == chainRun || o.Resume) {
		cfg = cfg.over(*r.stored, o.Given)
	}
	if mode == mpiRun {
		// Before the run directory is touched: a resumed run's own
		// settings may be what MPI cannot fit.
		if err := mpiRefuses(cfg); err != nil {
			return nil, err
		}
	}
	if r.Ls, err = cfg.Validate(); err != nil {
		return nil, err
	}
	if mode == chainRun {
		if cfg, err = preparedConfig(r.stored, cfg, chain, r.Ls); err != nil {
			return nil, err
		}
		r.chains = []int{chain}
	} else {
		for c := 1; c <= cfg.Chains; c++ {
			r.chains = append(r.chains, c)
		}
	}
	// The shards are checked before the run directory is touched, so that
	// bad input never costs an existing run (not even with --force).
	start := time.Now()
	workers := threads(cfg.Threads)
	if r.src, err = shard.OpenVerified(ctx, cfg.Shards, workers); err != nil {
		return nil, err
	}
	o.Timings.since(phaseVerify, start)
	id := shardsIdentity(cfg.Shards, r.src.Manifest())
	if mode == chainRun {
		if err := rundir.SameShards(cfg.Output, id, o.Log); err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
		if !o.Resume {
			if err := refuseStarted(cfg.Output, r.Ls, chain); err != nil {
				return nil, err
			}
		}
	} else {
		if cfg, err = cfg.resolveModel(r.src.Manifest(), o.Log); err != nil {
			return nil, err
		}
		if err := r.prepareDir(cfg, id); err != nil {
			return nil, err
		}
	}
	cfg.Threads = workers // after the configuration is written: config.toml keeps what was given
	r.cfg, r.hash = cfg, cfg.hash()
	start = time.Now()
	if r.data, r.closeMask, r.heldOut, err = fitData(ctx, r.src, cfg, o, mode != chainRun); err != nil {
		return nil, err
	}
	o.Timings.since(phaseMask, start)
	if mode == prepareRun || mode == mpiRun {
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

// checkChain refuses a chain process's settings that no prepared run
// takes.
func checkChain(cfg FitConfig, chain int, o FitOptions) error {
	if chain < 1 {
		return fmt.Errorf("%w: --chain-index %d: chains are numbered from 1", ErrConfig, chain)
	}
	if o.Force {
		return fmt.Errorf("fit: --force replaces a whole run and cannot go with --chain-index (to fit one (L, chain) again, delete its folder, such as %s)", rundir.FitDir(cfg.Output, cfg.L[0], chain))
	}
	return checkRunInputs(cfg)
}

// prepareDir prepares the run directory for the resolved cfg on the
// shards id: it writes the configuration, the fixed codes and shards.json
// (prepareRunDir). A prepareRun leaves a run prepared with the same
// settings and shards as it is, but for what killed writers left in it.
func (r *openedRun) prepareDir(cfg FitConfig, id rundir.ShardsIdentity) error {
	existing := false
	if r.mode == prepareRun {
		var err error
		if existing, err = preparedBefore(r.stored, cfg, id, r.o); err != nil {
			return err
		}
	}
	// Before the run directory is touched, so that a bad source costs
	// nothing.
	sets, err := fixedCodeSets(cfg, r.src.Manifest(), r.Ls, r.o.Resume || existing, r.o.Log)
	if err != nil {
		return err
	}
	if existing { // its settings and shards checked by preparedBefore
		if err := removeLeftovers(cfg.Output, r.o.Log); err != nil {
			return err
		}
		return writeFixedCodes(cfg.Output, sets)
	}
	if err := prepareRunDir(cfg, r.o, id, r.stored); err != nil {
		return err
	}
	if err := writeConfig(cfg); err != nil {
		return err
	}
	return writeFixedCodes(cfg.Output, sets)
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
	r := &openedRun{mode: mpiRun, o: o}
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
	switch r.mode {
	case chainRun:
		return fmt.Sprintf("scpipe fit %s -o %s --L %d --chain-index %d --resume", r.cfg.Shards, r.cfg.Output, L, chain)
	case mpiRun:
		return fmt.Sprintf("mpirun … scpipe fit --mpi %s -o %s --resume", r.cfg.Shards, r.cfg.Output)
	}
	return fmt.Sprintf("scpipe fit %s -o %s --resume", r.cfg.Shards, r.cfg.Output)
}

// fitProcess runs (or resumes, or skips when complete) fit (L, chain) in
// this process: a chain process holds the fit folder's lock while it
// fits, after removing the temporaries that a killed writer of this fit
// left in it.
func (r *openedRun) fitProcess(ctx context.Context, L, chain int) (bool, error) {
	if r.mode == chainRun {
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
