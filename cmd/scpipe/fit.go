package main

import (
	"encoding"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"scpipe/pipeline"
	"scpipe/rundir"
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
                                 first, codes.tsv, cells.parquet and trace.parquet (rundir/README.md)

The model is chosen from the shards unless --noise or --housekeeping says
otherwise (one log line says which and why): for data binarised from counts
(10x HDF5, MTX, h5ad with values above 1; simulate --kind singlecell) the
single-cell model, dropout noise with --cell-levels per-cell levels, a
housekeeping code and the uniform prior; for binary data (ratings from
ingest --format ratings, an MTX or h5ad whose values are all 1, simulate's
ormachine and digits kinds) the paper's, symmetric noise, no housekeeping
code and the empirical prior. Shards ingested before scpipe recorded their
values get the single-cell model. RUN/config.toml records the choice.

Results are identical for any -j. A run stopped by SIGINT or SIGTERM (SLURM
pre-emption) checkpoints first; --resume continues it, and gives the same
results as an uninterrupted run. While a fit works on RUN it holds the lock
.RUN.lock beside it: another fit of RUN (--resume, --force) is refused.

Many processes (the tasks of a SLURM job array, see scripts/slurm/) can fit
one run together: --prepare creates the run (shards.json, config.toml with
every L and chain, the held-out mask) and fits nothing; then each process
fits chain --chain K of the sizes --L it names (by default all of the run's),
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
   scpipe fit brain -o brain-run --L 5 --chain 2 --resume     # one fit of the prepared run
   scpipe summarize brain-run`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "run directory"},
			&cli.StringFlag{Name: "config", Usage: "TOML file setting any of the options below (flags override it)"},
			&cli.StringFlag{Name: "L", Value: d.L.String(), Usage: `latent sizes: "5", "2..10" or "2,4,8"`},
			&cli.IntFlag{Name: "chains", Value: d.Chains, Usage: "chains per L"},
			&cli.IntFlag{Name: "burn-in", Value: d.BurnIn, Usage: "discarded sweeps"},
			&cli.IntFlag{Name: "samples", Value: d.Samples, Usage: "sweeps after burn-in"},
			&cli.IntFlag{Name: "thin", Value: d.Thin, Usage: "keep every thin-th sample"},
			&cli.Uint64Flag{Name: "seed", Value: d.Seed, Usage: "master seed"},
			&cli.StringFlag{Name: "prior-u", Value: d.PriorU.String(), Usage: "prior of U: auto (uniform under dropout noise, empirical under symmetric noise: what measured best for each), uniform, empirical (from the observed density, as the paper) or a probability"},
			&cli.StringFlag{Name: "prior-z", Value: d.PriorZ.String(), Usage: "prior of Z: auto, uniform, empirical or a probability (as --prior-u)"},
			&cli.Float64Flag{Name: "holdout", Value: d.Holdout, Usage: "fraction of observed entries held out for model selection"},
			&cli.StringFlag{Name: "noise", Value: d.Noise.String(), Usage: "likelihood: auto (chosen from the shards' manifest: dropout for data binarised from counts, such as 10x, MTX or h5ad expression; symmetric for binary data, such as ratings, a 0/1 matrix or simulate's ormachine and digits kinds), dropout (separate dropout and background rates, for single-cell data) or symmetric (the paper's single λ; dropout noise predicts the missing entries of binary data at chance)"},
			&cli.IntFlag{Name: "cell-levels", Value: d.CellLevels, Usage: "per-cell background levels of dropout noise: 1, 2, 4 or 8 (deeper cells, higher background)"},
			&cli.IntFlag{Name: "gene-levels", Value: d.GeneLevels, Usage: "per-gene background levels of dropout noise: 1 (none), 2, 4 or 8 (genes detected in many cells whatever their type, higher background); need --cell-levels > 1"},
			&cli.StringFlag{Name: "init", Value: d.Init.String(), Usage: "starting point: cluster (codes seeded from cell types), data (codes seeded from random cells) or random (the paper's fair coin)"},
			&cli.StringFlag{Name: "housekeeping", Value: d.Housekeeping.String(), Usage: "a code every cell uses, for the genes detected everywhere: on, off, or auto (on for data binarised from counts, off for binary data, as --noise auto)"},
			&cli.BoolFlag{Name: "reseed", Value: d.Reseed, Usage: "during the burn-in, re-seed every code that covers nothing from the cells and genes the state leaves unexplained (--reseed=false: codes the start leaves empty may stay empty)"},
			&cli.IntFlag{Name: "starts", Value: d.Starts, Usage: "short chains per fit, the best by log-likelihood continued"},
			&cli.IntFlag{Name: "start-sweeps", Value: d.StartSweeps, Usage: "length of those short chains"},
			&cli.StringFlag{Name: "fixed-codes", Usage: "hold known codes fixed and infer the rest: a GMT `FILE` of gene programs (symbols matched case-insensitively to the shards' genes; unknown ones reported) or a fit folder RUN/Lnn/chainK (its MAP codes); they are the first codes of every fit and L counts them (--L 8 with 5 fixed codes infers 3)"},
			&cli.IntFlag{Name: "checkpoint-every", Value: d.CheckpointEvery, Usage: "sweeps between checkpoints"},
			&cli.Float64Flag{Name: "checkpoint-minutes", Value: d.CheckpointMinutes, Usage: "minutes between checkpoints at most"},
			&cli.BoolFlag{Name: "resume", Usage: "continue an interrupted run (finished fits are skipped)"},
			&cli.BoolFlag{Name: "prepare", Usage: "create the run for --chain processes (shards.json, config.toml, held-out mask) and fit nothing"},
			&cli.IntFlag{Name: "chain", Usage: "fit only chain `K` of each --L, in a run made by --prepare, beside other processes fitting the rest"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing run directory"},
			&cli.StringFlag{Name: "layers", Usage: "fit the multi-layer OrMachine, layer sizes from the data up (`7,4,2`): layer k factorises the usage Z of layer k−1; the paper's symmetric-noise model, so it sets --noise symmetric, --housekeeping off, --starts 1 and --L to the first size, and refuses dropout noise, a housekeeping code, several starts and other L; outputs per layer in RUN/Lnn/chainK/layerK (rundir/README.md)"},
			&cli.StringFlag{Name: "layer-prior-u", Usage: "with --layers, each layer's code prior: uniform, a probability, or empirical for the first layer (the paper's digits: `0.01,0.05,0.2`); default --prior-u for the first layer, uniform above"},
			&cli.BoolFlag{Name: "keep-samples", Usage: "keep every retained state of each fit (RUN/Lnn/chainK/samples.bin: about (cells + genes)·L/8 bytes a sample, cells + genes more with levels) for the sample-averaged predictive of scpipe evaluate --predictive samples; single-layer fits, not with --mpi"},
			&cli.BoolFlag{Name: "mpi", Usage: "spread every fit over the ranks of mpirun, each sweeping its share of the shards' cell blocks; the same results as one process (needs a build with -tags mpi)"},
		),
		Action: func(c *cli.Context) error {
			shards, err := oneArg(c, "shard folder")
			if err != nil {
				return err
			}
			cfg, err := fitConfig(c, shards)
			if err != nil {
				return err
			}
			env, err := newEnvThreads(c, cfg.Threads)
			if err != nil {
				return err
			}
			o := pipeline.FitOptions{
				Resume: c.Bool("resume"), Force: c.Bool("force"),
				Log: env.log, Progress: env.progress, ProgressTo: os.Stderr,
			}
			switch {
			case c.Bool("mpi") && (c.Bool("prepare") || c.IsSet("chain")):
				return fmt.Errorf("fit: --mpi fits the whole run on every rank: it goes without --prepare and --chain")
			case c.Bool("mpi"):
				return fitMPI(c, cfg, o, env)
			case c.Bool("prepare") && (c.IsSet("chain") || c.Bool("resume")):
				return fmt.Errorf("fit: --prepare fits nothing: it goes without --chain and --resume")
			case c.Bool("prepare"):
				_, err := pipeline.Prepare(c.Context, cfg, o)
				return err
			case c.IsSet("chain"):
				rep, err := pipeline.FitChain(c.Context, cfg, c.Int("chain"), o)
				if err != nil {
					return err
				}
				env.log.Info("fits complete", "run", rep.Run, "L", cfg.L.String(), "chain", c.Int("chain"),
					"fitted", rep.Fitted, "skipped", rep.Skipped, "then", "scpipe summarize "+rep.Run)
				return nil
			}
			rep, err := pipeline.Fit(c.Context, cfg, o)
			if err != nil {
				return err
			}
			env.log.Info("fit complete", "run", rep.Run, "fitted", rep.Fitted, "skipped", rep.Skipped,
				"summary", filepath.Join(rep.Run, rundir.SummaryFile))
			env.log.Info("results: "+filepath.Join(rep.Run, "L*", "chain*", "{codes,cells,trace}.parquet")+" per fit; next:",
				"programs", "scpipe enrich "+rep.Run+" -o "+rep.Run+"-enrich --gmt LIBRARY.gmt",
				"report", "scpipe report "+rep.Run,
				"scanpy", "scpipe export "+rep.Run+" -o "+rep.Run+".h5ad")
			return nil
		},
	}
}

// fitConfig resolves the configuration: defaults, or the stored
// configuration of the run being resumed or shared (--chain), then
// --config, then the flags given explicitly.
func fitConfig(c *cli.Context, shards string) (pipeline.FitConfig, error) {
	cfg := pipeline.DefaultFitConfig()
	var err error
	if c.Bool("resume") || c.IsSet("chain") {
		// A run folder without a configuration (a start that failed early)
		// has nothing to resume: Fit starts it from the flags.
		stored := filepath.Join(c.String("output"), rundir.ConfigFile)
		if loaded, err := pipeline.LoadFitConfig(stored, pipeline.FitConfig{}); err == nil {
			cfg = loaded
		} else if !errors.Is(err, fs.ErrNotExist) {
			return cfg, fmt.Errorf("--resume: %w", err)
		}
	}
	if p := c.String("config"); p != "" {
		if cfg, err = pipeline.LoadFitConfig(p, cfg); err != nil {
			return cfg, err
		}
	}
	cfg.Shards, cfg.Output = shards, c.String("output")
	set := func(name string, apply func()) {
		if c.IsSet(name) {
			apply()
		}
	}
	for _, t := range []struct {
		flag string
		dst  encoding.TextUnmarshaler
	}{{"L", &cfg.L}, {"prior-u", &cfg.PriorU}, {"prior-z", &cfg.PriorZ}, {"noise", &cfg.Noise}, {"housekeeping", &cfg.Housekeeping}, {"init", &cfg.Init},
		{"layers", &cfg.Layers}, {"layer-prior-u", &cfg.LayerPriorU}} {
		if c.IsSet(t.flag) {
			if err := t.dst.UnmarshalText([]byte(c.String(t.flag))); err != nil {
				return cfg, fmt.Errorf("--%s: %w", t.flag, err)
			}
		}
	}
	set("chains", func() { cfg.Chains = c.Int("chains") })
	set("burn-in", func() { cfg.BurnIn = c.Int("burn-in") })
	set("samples", func() { cfg.Samples = c.Int("samples") })
	set("thin", func() { cfg.Thin = c.Int("thin") })
	set("seed", func() { cfg.Seed = c.Uint64("seed") })

	set("holdout", func() { cfg.Holdout = c.Float64("holdout") })
	set("fixed-codes", func() { cfg.FixedCodes = c.String("fixed-codes") })
	set("keep-samples", func() { cfg.KeepSamples = c.Bool("keep-samples") })

	set("cell-levels", func() { cfg.CellLevels = c.Int("cell-levels") })
	set("gene-levels", func() { cfg.GeneLevels = c.Int("gene-levels") })
	set("reseed", func() { cfg.Reseed = c.Bool("reseed") })
	set("starts", func() { cfg.Starts = c.Int("starts") })
	set("start-sweeps", func() { cfg.StartSweeps = c.Int("start-sweeps") })
	set("checkpoint-every", func() { cfg.CheckpointEvery = c.Int("checkpoint-every") })
	set("checkpoint-minutes", func() { cfg.CheckpointMinutes = c.Float64("checkpoint-minutes") })
	// -j (or SCPIPE_THREADS) wins; then a threads key of --config; then all cores.
	if c.IsSet("threads") || cfg.Threads == 0 {
		cfg.Threads = c.Int("threads")
	}
	layerDefaults(c, &cfg)
	return cfg, nil
}

// layerDefaults gives a multi-layer fit the settings of the paper's
// model where the user left the single-layer defaults: the first layer's
// L, one start and no re-seeding (the auto model resolves to symmetric noise and no
// housekeeping code for any multi-layer fit). Settings given otherwise
// stay, for Validate to refuse with its reason.
func layerDefaults(c *cli.Context, cfg *pipeline.FitConfig) {
	if len(cfg.Layers) == 0 {
		return
	}
	d := pipeline.DefaultFitConfig()
	if !c.IsSet("L") && cfg.L.String() == d.L.String() {
		cfg.L = pipeline.LSizes{cfg.Layers[0]}
	}
	if !c.IsSet("starts") && cfg.Starts == d.Starts {
		cfg.Starts = 1
	}
	if !c.IsSet("reseed") && cfg.Reseed == d.Reseed {
		cfg.Reseed = false
	}
}
