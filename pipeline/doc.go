// Package pipeline wires scpipe's stages together for the commands: it opens
// shards, runs the sampler and writes run directories (the fits, then their
// summary by package runsummary), with their default configuration, so that
// cmd/scpipe only parses flags.
//
// # A run's lifecycle
//
// Every way of fitting a run goes through one lifecycle: openRun takes the
// run's lock, reads the run's own configuration once where the command
// continues it (a resumed run, a chain process: o.Given), validates the
// configuration, verifies the shards, resolves the model, prepares the
// run directory (or checks the prepared run it shares), reads the fixed
// codes and opens the data the fits sweep, once; fitAll then fits the
// process's (L, chain) in turn, each with fitOne (fitone.go), the one
// loop of a fit whatever its crew, and Close lets the run go. Each entry
// point says, in its runPlan, which of openRun's steps it takes:
//
//   - Fit (newRunPlan): every fit, in one process, the run's lock held
//     exclusively.
//   - Prepare (newRunPlan, reprepare): the run made ready for processes
//     that share it; nothing is fitted.
//   - FitChain (chainPlan): one chain of some L of a prepared run, beside
//     other processes: the run's lock shared, each fit's folder locked.
//   - FitMPI (newRunPlan, refuse: mpiRefuses): every fit spread over MPI
//     ranks (the crew ranks); rank 0 opens the run as Fit does, the other
//     ranks their cell blocks (openRank).
//
// # One loop for every crew
//
// A fit runs in one process (Fit, FitChain), or on every rank of an MPI
// world at once, each rank sweeping its share of the cells (FitMPI).
// fitOne is the one loop for both. Where the processes could see
// different things (is the fit complete, did one fail, was one stopped,
// is a checkpoint due by the lead's clock) it asks its crew, so that every
// process takes the same steps and collectives; it drives the fit's
// sampler (a gibbs.Runner: the crew's single-layer sampler, or a
// multi-layer one in a process alone) through its crew, which saves it
// and takes its results. A process alone agrees with itself; the ranks
// of an MPI world stop together between sweeps (gibbs.PartSampler.Run).
//
// # Processes that share a run
//
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
//  3. runsummary.Summarize, given the run's configuration by SummaryPlan,
//     writes summary.tsv and selection.svg from the fits that have
//     finished, and lists those that have not.
//
// A fit depends only on the run's settings, the shards and its (L, chain)
// (chainSeed), so each is bit-identical to the same fit of a single
// process's Fit.
//
// # Fixed codes
//
// Fixed codes (FitConfig.FixedCodes, `scpipe fit --fixed-codes`) are known
// gene programs that every fit holds fixed while it infers the rest: the
// sets of a GMT file, or the MAP codes of another fit. They are resolved
// against the shards once, when the run starts, and kept in the run
// directory (rundir.FixedCodesFile, with the shards' gene ids), which every
// later fit, resume and --chain-index process reads: the source may change or
// move without changing the run. They are codes 0 … F−1 of the sampler and
// the first F codes of every fit's tables; L counts them.
//
// # The model
//
// A fit's model (its likelihood and whether it adds a housekeeping code)
// is "auto" by default: it is chosen once, when the shards' manifest is
// read, from what the data were before they were binarised, so that the
// defaults suit binary data as well as expression counts. Measured through
// scpipe fit (VALIDATION.md): the single-cell model predicts the held-out
// entries of sparse binary data at chance, where the paper's model
// predicts them well above it.
package pipeline
