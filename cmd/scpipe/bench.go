package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"scpipe/cmd/scpipe/internal/bench"
	"scpipe/gibbs"
	"scpipe/pipeline"
)

func benchCommand() *cli.Command {
	d := bench.DefaultOptions()
	return &cli.Command{
		Name:  "bench",
		Usage: "time Gibbs sweeps over generated planted shards of a ladder of sizes",
		Description: `Generates planted single-cell-like shards (7% ones by default) for every size,
caching them in --work so that later runs reuse them, then for every size and
L times sweeps of the sampler over the memory-mapped shards, as a fit runs
them, after --warmup untimed sweeps. It prints per (size, L): seconds per
sweep (median and range), entries/s in total and per core, the time to
read the same bit-packed X and Xᵀ once (parallel read-only passes in file
order, same run; an untimed pass counts their ones to check every word is
read), the ratio sweep/stream, the peak anonymous resident memory (RssAnon)
next to the O((cells + genes)·L) sampler state, and VmHWM (which also counts
the mapped shards' page cache).

--size takes entry counts (laid out as the paper's 11,000 genes by
entries/11,000 cells) or CELLSxGENES shapes:

   scpipe bench                                        # 1.3M × 11k, L = 2 and 10 (3.6 GB of shards)
   scpipe bench --size 1e8,1e9,1.4e10 --L 2,10 --sweeps 5
   scpipe bench --size 20000x2000 --L 2..10 --json > bench.json
   scpipe bench --cpuprofile cpu.pprof && go tool pprof -tagfocus phase=timed scpipe cpu.pprof

--e2e times the paper's whole analysis instead: it generates a CellRanger v2
HDF5 file of --size (cells × genes before the gene filter; kept in --work for
later runs), runs scpipe ingest on it (genes expressed in at least 1% of
cells) and scpipe fit with --config (the fit's defaults without it; --L, when
given, replaces its sizes), and prints the total and where it went: ingest,
verify, mask, setup (counting, the starts' seedings), sweeps, checkpoints,
outputs, scoring. The shards and the run go in a temporary folder in --work
(--keep keeps them). --shards DIR fits DIR instead, timing the fit alone.

   scpipe bench --e2e --size 2000x1500                                  # seconds
   scpipe bench --e2e --size 1300000x15200 --config configs/mouse-brain-1.3m.toml`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "size", Value: bench.DefaultSizes, Usage: `sizes: entry counts "1e8,1e9,1.4e10" or shapes "1300000x11000"`},
			&cli.StringFlag{Name: "L", Value: "2,10", Usage: `latent sizes: "5", "2..10" or "2,10"`},
			&cli.IntFlag{Name: "sweeps", Value: d.Sweeps, Usage: "timed sweeps per size and L"},
			&cli.IntFlag{Name: "warmup", Value: d.Warmup, Usage: "untimed sweeps first, so the chain settles"},
			&cli.IntFlag{Name: "stream-passes", Value: d.StreamReps, Usage: "timed stream-once passes per size and L"},
			&cli.Float64Flag{Name: "density", Value: d.Density, Usage: "fraction of ones of the planted data"},
			&cli.Uint64Flag{Name: "seed", Value: d.Seed, Usage: "seed of the planted data and the sampler"},
			&cli.StringFlag{Name: "prior", Value: d.Prior, Usage: "prior of Z and U: uniform (as fit), empirical or a probability"},
			&cli.StringFlag{Name: "noise", Value: d.Noise.String(), Usage: "likelihood: dropout (as fit) or symmetric (the paper's)"},
			&cli.StringFlag{Name: "housekeeping", Value: pipeline.GivenHousekeeping(d.Housekeeping).String(), Usage: "time a housekeeping code beside the L codes, as fit does: on or off"},
			&cli.IntFlag{Name: "cell-levels", Value: d.CellLevels, Usage: "per-cell background levels of dropout noise, as fit (1, 2, 4 or 8)"},
			&cli.IntFlag{Name: "gene-levels", Value: d.GeneLevels, Usage: "per-gene background levels of dropout noise, as fit (1: none, 2, 4 or 8)"},
			&cli.StringFlag{Name: "work", Value: d.Work, Usage: "folder caching the generated shards"},
			&cli.StringFlag{Name: "kernel", Usage: "sampler kernel to measure (" + strings.Join(gibbs.Kernels(), ", ") + "; default: the first, the fastest this CPU runs)"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile of the measurements (labels: phase, size, L)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON instead of a table"},
			&cli.BoolFlag{Name: "e2e", Usage: "time the whole analysis: generate a 10x HDF5 file of --size, ingest it, fit it with --config"},
			&cli.StringFlag{Name: "config", Usage: "with --e2e: the fit's TOML configuration (default: scpipe fit's defaults)"},
			&cli.BoolFlag{Name: "keep", Usage: "with --e2e: keep the shards and the run directory"},
			&cli.StringFlag{Name: "shards", Usage: "with --e2e: fit this shard folder instead of generating and ingesting a file (--size is ignored)"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing --cpuprofile file"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("bench: takes no arguments (got %q); sizes go in --size", c.Args().First())
			}
			env, err := newEnv(c)
			if err != nil {
				return err
			}
			if c.Bool("e2e") {
				return benchE2E(c, env)
			}
			o := bench.DefaultOptions()
			if o.Sizes, err = bench.ParseSizes(c.String("size")); err != nil {
				return fmt.Errorf("--size: %w", err)
			}
			if o.Ls, err = pipeline.ParseLSpec(c.String("L")); err != nil {
				return fmt.Errorf("--L: %w", err)
			}
			o.Workers, o.Sweeps, o.Warmup, o.StreamReps = env.threads, c.Int("sweeps"), c.Int("warmup"), c.Int("stream-passes")
			o.Density, o.Seed, o.Prior, o.Work = c.Float64("density"), c.Uint64("seed"), c.String("prior"), c.String("work")
			o.CellLevels, o.GeneLevels = c.Int("cell-levels"), c.Int("gene-levels")
			// The words of fit's --housekeeping, less auto: the bench's data
			// are generated, so there is nothing to resolve it from.
			var hk pipeline.HousekeepingSetting
			if err := hk.UnmarshalText([]byte(c.String("housekeeping"))); err != nil || hk.Auto {
				return fmt.Errorf("bench: --housekeeping %q: want on or off", c.String("housekeeping"))
			}
			o.Housekeeping = hk.On
			if err := o.Noise.UnmarshalText([]byte(c.String("noise"))); err != nil {
				return fmt.Errorf("bench: --noise: %w", err)
			}
			o.CPUProfile, o.Force, o.Kernel = c.String("cpuprofile"), c.Bool("force"), c.String("kernel")
			o.Command, o.Log, o.Cached = strings.Join(os.Args, " "), env.log, env.cached
			rep, err := bench.Run(c.Context, o)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return rep.WriteJSON(os.Stdout)
			}
			return rep.WriteTable(os.Stdout)
		},
	}
}

// benchE2E runs scpipe bench --e2e.
func benchE2E(c *cli.Context, env runEnv) error {
	sizes, err := bench.ParseSizes(c.String("size"))
	if err != nil {
		return fmt.Errorf("--size: %w", err)
	}
	if len(sizes) != 1 {
		return fmt.Errorf("bench --e2e: --size takes one size, not %d", len(sizes))
	}
	fit := pipeline.DefaultFitConfig()
	if path := c.String("config"); path != "" {
		if fit, _, err = pipeline.LoadFitConfig(path, fit); err != nil {
			return err
		}
	}
	if c.IsSet("L") {
		Ls, err := pipeline.ParseLSpec(c.String("L"))
		if err != nil {
			return fmt.Errorf("--L: %w", err)
		}
		fit.L = Ls
	}
	o := bench.E2EOptions{Size: sizes[0], Shards: c.String("shards"), Density: c.Float64("density"), Seed: c.Uint64("seed"), Fit: fit,
		Workers: env.threads, Work: c.String("work"), Keep: c.Bool("keep"), Cached: env.cached,
		CPUProfile: c.String("cpuprofile"), Force: c.Bool("force"),
		Command: strings.Join(os.Args, " "), Log: env.log}
	rep, err := bench.RunE2E(c.Context, o)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return rep.WriteJSON(os.Stdout)
	}
	return rep.WriteTable(os.Stdout)
}
