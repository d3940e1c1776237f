package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v2"

	"scpipe/internal/rundir"
	"scpipe/pipeline"
)

func fitCommand() *cli.Command {
	d := pipeline.DefaultFitConfig()
	return &cli.Command{
		Name:      "fit",
		Usage:     "fit the OrMachine for several latent sizes and chains",
		ArgsUsage: "SHARDS",
		Description: `Runs the OrMachine's Gibbs sampler on the shards for every latent size L and
chain, one fit after another, each on all --threads cores, and writes the run
directory:

   RUN/config.toml               resolved configuration (--config RUN/config.toml reproduces the run)
   RUN/shards.json               the shards fitted (--resume refuses others)
   RUN/summary.tsv               one row per (L, chain): lambda or dropout and background rates, loglik, accuracies, held-out scores, R-hat
   RUN/selection.svg             held-out accuracy and log predictive against L
   RUN/L05/chain1/codes.parquet  per gene: posterior mean of each code (U)
   RUN/L05/chain1/cells.parquet  per cell: posterior mean of each code's usage (Z)
   RUN/L05/chain1/trace.parquet  per sweep: lambda, dropout, background, loglik, accuracy, flips, seconds
   RUN/L05/chain1/state.ckpt     checkpoint
   RUN/fixed-codes.gmt           with --fixed-codes: the codes every fit holds fixed (its first ones), by gene id
   RUN/L07/chain1/layers.tsv     with --layers: per layer L, lambda, sigma(lambda), accuracy; layer1/, layer2/, … hold
                                 each layer's prototypes.parquet (codes fed forward to the genes) and, above the
                                 first, codes.tsv, cells.parquet and trace.parquet (internal/rundir/README.md)

The model is chosen from the shards unless --noise or --housekeeping says
otherwise (one log line says which and why): for data binarised from counts
(10x HDF5, MTX, h5ad with values above 1; simulate --kind singlecell, and
every MTX folder simulate writes) the single-cell model, dropout noise with --cell-levels per-cell levels, a
housekeeping code and the uniform prior; for binary data (ratings from
ingest --format ratings, an MTX or h5ad whose values are all 1, simulate
--shards of the ormachine and digits kinds) the paper's, symmetric noise, no housekeeping
code and the empirical prior. Shards ingested before scpipe recorded their
values get the single-cell model. RUN/config.toml records the choice.

Results are identical for any -j. A run stopped by SIGINT or SIGTERM (SLURM
pre-emption) checkpoints first; --resume continues it, and gives the same
results as an uninterrupted run. While a fit works on RUN it holds the lock
.RUN.lock beside it: another fit of RUN (--resume, --force) is refused.

Many processes (the tasks of a SLURM job array, see scripts/slurm/) can fit
one run together: --prepare creates the run (shards.json, config.toml with
every L and chain, the held-out mask) and fits nothing; then each process
fits chain --chain-index K of the sizes --L it names (by default all of the run's),
with the run's settings read from RUN/config.toml, and writes only its own
fit folders; scpipe summarize RUN writes summary.tsv from the fits that have
finished. Each fit is identical to the same fit of a single process.

   scpipe fit shards -o run --L 2..10
   scpipe fit shards -o run --L 2,4,8 --chains 4 --holdout 0.02
   scpipe fit shards -o run2 --L 6..10 --fixed-codes markers.gmt   # known programs fixed, the rest inferred
   scpipe fit shards -o run3 --L 6 --fixed-codes run/L04/chain1    # a fit's 4 codes fixed, 2 more inferred
   scpipe fit brain -o brain-run --config configs/mouse-brain-1.3m.toml -j 24
   scpipe fit brain -o brain-run --resume
   scpipe fit calc50/shards -o deep --layers 7,4,2 --layer-prior-u 0.01,0.05,0.2 --init random --burn-in 200 --samples 200
   scpipe fit brain -o brain-run --config configs/mouse-brain-1.3m.toml --prepare
   scpipe fit brain -o brain-run --L 5 --chain-index 2 --resume   # one fit of the prepared run
   scpipe summarize brain-run`,
		// Usage lines stay short; docs/commands.md explains each flag.
		Flags: slices.Concat(
			inCategory("Run", append(commonFlags(),
				&cli.StringFlag{Name: "config", Usage: "TOML `FILE` setting any option (flags override it)"},
				&cli.BoolFlag{Name: "resume", Usage: "continue an interrupted run (finished fits are skipped)"},
				&cli.IntFlag{Name: "checkpoint-every", Value: d.CheckpointEvery, Usage: "sweeps between checkpoints"},
				&cli.Float64Flag{Name: "checkpoint-minutes", Value: d.CheckpointMinutes, Usage: "minutes between checkpoints at most"},
			)...),
			inCategory("Output",
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "run directory"},
				&cli.BoolFlag{Name: "force", Usage: "replace an existing run directory"},
				&cli.BoolFlag{Name: "keep-samples", Usage: "keep every retained state, for evaluate --predictive samples"},
			),
			inCategory("Model",
				&cli.StringFlag{Name: "L", Value: d.L.String(), Usage: `latent sizes: "5", "2..10" or "2,4,8"`},
				&cli.StringFlag{Name: "noise", Value: d.Noise.String(), Usage: "likelihood: auto (from the shards), dropout (counts) or symmetric (binary data)"},
				&cli.StringFlag{Name: "housekeeping", Value: d.Housekeeping.String(), Usage: "a code every cell uses, for the genes detected everywhere: auto, on or off"},
				&cli.IntFlag{Name: "cell-levels", Value: d.CellLevels, Usage: "per-cell background levels of dropout noise: 1, 2, 4 or 8"},
				&cli.IntFlag{Name: "gene-levels", Value: d.GeneLevels, Usage: "per-gene background levels of dropout noise: 1, 2, 4 or 8 (with --cell-levels > 1)"},
				&cli.BoolFlag{Name: "samples-model", Value: d.SamplesModel, Usage: "shards of several samples: each sample's own gene levels (its ambient profile), so that no program is a sample's background; a sample is a technical grouping, never the condition studied"},
				&cli.StringFlag{Name: "prior-u", Value: d.PriorU.String(), Usage: "prior of U: auto, uniform, empirical, a probability, or one per program with a single L (`0.1,0.1,0.2,0.2`; a housekeeping code takes 1/2, or its own last)"},
				&cli.StringFlag{Name: "prior-z", Value: d.PriorZ.String(), Usage: "prior of Z: auto, uniform, empirical or a probability"},
				&cli.Float64Flag{Name: "holdout", Value: d.Holdout, Usage: "fraction of observed entries held out for model selection"},
				&cli.StringFlag{Name: "fixed-codes", Usage: "hold known codes fixed: a GMT `FILE` of programs, or a fit folder RUN/Lnn/chainK"},
				&cli.StringFlag{Name: "layers", Usage: "fit the multi-layer OrMachine, layer sizes from the data up (`7,4,2`)"},
				&cli.StringFlag{Name: "layer-prior-u", Usage: "with --layers, each layer's prior of U, one per layer (`0.01,0.05,0.2`)"},
			),
			inCategory("Sampler",
				&cli.IntFlag{Name: "chains", Value: d.Chains, Usage: "chains per L"},
				&cli.IntFlag{Name: "consensus-chains", Value: d.ConsensusChains, Usage: "at the recommended L, a consensus of this many chains: further chains, the programs most of them found kept with their frequency, and a fit with those codes fixed, in RUN/Lnn/consensus (0: none)"},
				&cli.IntFlag{Name: "burn-in", Value: d.BurnIn, Usage: "discarded sweeps"},
				&cli.IntFlag{Name: "samples", Value: d.Samples, Usage: "sweeps after burn-in"},
				&cli.IntFlag{Name: "hold-from", Value: d.HoldFrom, Usage: "dropout noise: estimate the rates and levels in the sweeps before this one (at most --burn-in), then hold them, so that the samples share one posterior (0: re-estimate after every sweep)"},
				&cli.IntFlag{Name: "max-burn-in", Value: d.MaxBurnIn, Usage: "with held rates, a window of --samples sweeps whose log-likelihood still trends (or whose halves differ) becomes burn-in and is drawn again, while the burn-in stays within this many sweeps (0: exactly --burn-in)"},
				&cli.BoolFlag{Name: "swaps", Value: d.Swaps, Usage: "move cells between codes in one step besides single flips (--swaps=false: flips only)"},
				&cli.BoolFlag{Name: "gene-swaps", Value: d.GeneSwaps, Usage: "move genes between codes, the housekeeping code among them, in one step besides single flips"},
				&cli.IntFlag{Name: "split-merge", Value: d.SplitMerge, Usage: "split–merge proposals each chain makes before each burn-in sweep: a code's cells split between it and an unused code, two codes merged, or two codes' cells divided afresh, in one exact step (0: none)"},
				&cli.BoolFlag{Name: "share-params", Value: d.ShareParams, Usage: "dropout noise with held parameters: the chains of each L hold one set, estimated once (RUN/Lnn/params.bin), so that they sample one posterior"},
				&cli.IntFlag{Name: "thin", Value: d.Thin, Usage: "keep every thin-th sample"},
				&cli.Uint64Flag{Name: "seed", Value: d.Seed, Usage: "master seed"},
				&cli.StringFlag{Name: "init", Value: d.Init.String(), Usage: "start: cluster (from cell types), data (from random cells) or random"},
				&cli.BoolFlag{Name: "reseed", Value: d.Reseed, Usage: "re-seed empty codes during the burn-in (--reseed=false: none)"},
				&cli.IntFlag{Name: "starts", Value: d.Starts, Usage: "short chains per fit, the best by log-likelihood continued"},
				&cli.IntFlag{Name: "start-sweeps", Value: d.StartSweeps, Usage: "sweeps of each of the --starts short chains (at most --burn-in)"},
			),
			inCategory("HPC",
				&cli.BoolFlag{Name: "prepare", Usage: "create the run for --chain-index processes and fit nothing"},
				&cli.IntFlag{Name: "chain-index", Usage: "fit only chain `K` of each --L of a prepared run (one task of a job array)", DefaultText: "every chain"},
				// The name of --chain-index before it was told apart from
				// --chains, kept for the job scripts written with it.
				&cli.IntFlag{Name: "chain", Hidden: true},
				&cli.BoolFlag{Name: "mpi", Usage: "spread every fit over the ranks of mpirun (a build with -tags mpi)"},
			),
		),
		Action: func(c *cli.Context) error {
			var given []string
			err := fitAction(c, &given)
			return fitFlags(c, "").Source(err, given)
		},
	}
}

// fitAction is fit's Action; givenOut receives the settings that the flags
// and the --config file gave, by their TOML keys.
func fitAction(c *cli.Context, givenOut *[]string) error {
	shards, err := oneArg(c, "shard folder")
	if err != nil {
		return err
	}
	cfg, given, err := fitConfig(c, shards)
	if err != nil {
		return err
	}
	*givenOut = given
	env, err := newEnvThreads(c, cfg.Threads) // its error named by FitFlags.Source
	if err != nil {
		return err
	}
	o := pipeline.FitOptions{
		Resume: c.Bool("resume"), Force: c.Bool("force"), Given: pipeline.GivenKeys(given...),
		Log: env.log, Progress: env.progress, ProgressTo: os.Stderr, Cached: env.cached,
	}
	chain, oneChain := chainIndex(c)
	switch {
	case c.Bool("mpi") && (c.Bool("prepare") || oneChain):
		return fmt.Errorf("fit: --mpi fits the whole run on every rank: it goes without --prepare and --chain-index")
	case c.Bool("mpi"):
		return fitMPI(c, cfg, o, env)
	case c.Bool("prepare") && (oneChain || c.Bool("resume")):
		return fmt.Errorf("fit: --prepare fits nothing: it goes without --chain-index and --resume")
	case c.Bool("prepare"):
		_, err := pipeline.Prepare(c.Context, cfg, o)
		return err
	case oneChain:
		rep, err := pipeline.FitChain(c.Context, cfg, chain, o)
		if err != nil {
			return err
		}
		env.log.Info("fits complete", "output", rep.Run, "chain", chain,
			"fitted", rep.Fitted, "skipped", rep.Skipped, "then", "scpipe summarize "+rep.Run)
		return nil
	}
	rep, err := pipeline.Fit(c.Context, cfg, o)
	if err != nil {
		return err
	}
	env.log.Info("fit complete", "output", rep.Run, "fitted", rep.Fitted, "skipped", rep.Skipped,
		"summary", filepath.Join(rep.Run, rundir.SummaryFile))
	env.log.Info("results: "+filepath.Join(rep.Run, "L*", "chain*", "{codes,cells,trace}.parquet")+" per fit; next:",
		"programs", "scpipe enrich "+rep.Run+" -o "+rep.Run+"-enrich --gmt LIBRARY.gmt",
		"report", "scpipe report "+rep.Run,
		"scanpy", "scpipe export "+rep.Run+" -o "+rep.Run+".h5ad")
	return nil
}

// chainIndex returns the chain that --chain-index (or its old name,
// --chain) names, and whether one was given.
func chainIndex(c *cli.Context) (int, bool) {
	for _, name := range []string{"chain-index", "chain"} {
		if c.IsSet(name) {
			return c.Int(name), true
		}
	}
	return 0, false
}

// fitFlags gathers fit's setting flags as they were given, for pipeline
// to resolve (pipeline.FitFlags).
func fitFlags(c *cli.Context, shards string) pipeline.FitFlags {
	f := pipeline.FitFlags{Shards: shards, Output: c.String("output"), File: c.String("config"), Set: map[string]string{},
		Continues: c.Bool("resume") || c.IsSet("chain-index") || c.IsSet("chain")}
	for _, name := range pipeline.FitFlagNames() {
		if c.IsSet(name) {
			f.Set[name] = fmt.Sprint(c.Value(name))
		}
	}
	return f
}

// fitConfig resolves fit's configuration from its flags (the defaults,
// then --config, then the flags given: pipeline.FitFlags.Resolve), with
// -j's count (or SCPIPE_THREADS, or all cores) where neither a flag nor
// the --config file set threads. It returns the settings those gave, by
// their TOML keys.
func fitConfig(c *cli.Context, shards string) (pipeline.FitConfig, []string, error) {
	cfg, given, err := fitFlags(c, shards).Resolve()
	if err == nil && cfg.Threads == 0 {
		cfg.Threads = c.Int("threads")
	}
	return cfg, given, err
}

// inCategory puts flags under one heading of the command's help.
func inCategory(name string, flags ...cli.Flag) []cli.Flag {
	for _, f := range flags {
		switch f := f.(type) {
		case *cli.BoolFlag:
			f.Category = name
		case *cli.IntFlag:
			f.Category = name
		case *cli.Uint64Flag:
			f.Category = name
		case *cli.Float64Flag:
			f.Category = name
		case *cli.StringFlag:
			f.Category = name
		default:
			panic(fmt.Sprintf("inCategory: flag type %T", f))
		}
	}
	return flags
}
