package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"scpipe/shard"
	"scpipe/simulate"
)

// The flags that belong to one kind of simulation only.
var (
	orMachineFlags  = []string{"code-density", "usage-density", "flip-on", "flip-off", "flip"}
	singleCellFlags = []string{"depth-sigma", "baseline-median", "baseline-sigma", "housekeeping-fraction", "housekeeping-median",
		"housekeeping-sigma", "lift-median", "lift-sigma", "program-size-min", "program-size-max", "programs-per-cell-min", "programs-per-cell-max"}
)

func simulateCommand() *cli.Command {
	d, sc := simulate.DefaultParams(), simulate.DefaultSingleCell()
	return &cli.Command{
		Name:  "simulate",
		Usage: "draw planted data from the OrMachine or a single-cell-like generative model",
		Description: `Draws L gene programs (random gene sets) and their usage by cells, forms the
Boolean product and adds noise, then writes a 10x v3 MTX folder, or shards
directly (--shards) for data too large for text. The planted truth goes to
OUT/truth/ (programs.tsv, usage.tsv, truth.json with every parameter).

--kind ormachine (the default) is the paper's model: dropout (--flip-off) and
background (--flip-on) at fixed rates. --kind singlecell is what real data
do: each cell has a depth (lognormal size factor s, median 1), each gene a
baseline rate μ (lognormal; a few housekeeping genes high), each program gene
a lift ν, and an entry's UMI count is Poisson(s·(μ + ν·covered)), so dropout
falls with depth and background rises with it; its truth adds
gene_rates.tsv and cell_depth.tsv. Output is the same for any -j.

   scpipe simulate -o sim                               # the demo's default
   scpipe simulate -o sim --cells 1000 --genes 1000 --L 5 --code-density 0.3 \
       --usage-density 0.3 --flip 0.05                   # the paper's symmetric noise
   scpipe simulate -o sc --kind singlecell               # PBMC-like sparsity and depth
   scpipe simulate -o big --shards --cells 1300000 --genes 11000 --L 2`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "output folder"},
			&cli.StringFlag{Name: "kind", Value: simulate.OrMachine.String(), Usage: "generative model: ormachine or singlecell"},
			&cli.IntFlag{Name: "cells", Value: d.Cells, Usage: "number of cells"},
			&cli.IntFlag{Name: "genes", Value: d.Genes, Usage: "number of genes"},
			&cli.IntFlag{Name: "L", Value: d.L, Usage: "number of planted programs"},
			&cli.Float64Flag{Name: "code-density", Value: d.CodeDensity, Usage: "ormachine: fraction of genes in each program"},
			&cli.Float64Flag{Name: "usage-density", Value: d.UsageDensity, Usage: "ormachine: fraction of cells using each program"},
			&cli.Float64Flag{Name: "flip-on", Value: d.FlipOn, Usage: "ormachine: probability that a noise-free 0 is observed as 1"},
			&cli.Float64Flag{Name: "flip-off", Value: d.FlipOff, Usage: "ormachine: probability that a noise-free 1 is observed as 0 (dropout)"},
			&cli.Float64Flag{Name: "flip", Usage: "ormachine: symmetric flip noise: sets both --flip-on and --flip-off"},
			&cli.Float64Flag{Name: "depth-sigma", Value: sc.DepthSigma, Usage: "singlecell: σ of the log size factor of cells"},
			&cli.Float64Flag{Name: "baseline-median", Value: sc.BaselineMedian, Usage: "singlecell: median baseline rate μ of ordinary genes"},
			&cli.Float64Flag{Name: "baseline-sigma", Value: sc.BaselineSigma, Usage: "singlecell: σ of log μ of ordinary genes"},
			&cli.Float64Flag{Name: "housekeeping-fraction", Value: sc.HousekeepingFraction, Usage: "singlecell: fraction of genes that are housekeeping"},
			&cli.Float64Flag{Name: "housekeeping-median", Value: sc.HousekeepingMedian, Usage: "singlecell: median baseline rate μ of housekeeping genes"},
			&cli.Float64Flag{Name: "housekeeping-sigma", Value: sc.HousekeepingSigma, Usage: "singlecell: σ of log μ of housekeeping genes"},
			&cli.Float64Flag{Name: "lift-median", Value: sc.LiftMedian, Usage: "singlecell: median program lift ν"},
			&cli.Float64Flag{Name: "lift-sigma", Value: sc.LiftSigma, Usage: "singlecell: σ of log ν"},
			&cli.Float64Flag{Name: "program-size-min", Value: sc.ProgramSizeMin, Usage: "singlecell: fraction of genes in the smallest program"},
			&cli.Float64Flag{Name: "program-size-max", Value: sc.ProgramSizeMax, Usage: "singlecell: fraction of genes in the largest program"},
			&cli.IntFlag{Name: "programs-per-cell-min", Value: sc.ProgramsPerCellMin, Usage: "singlecell: fewest programs a cell uses"},
			&cli.IntFlag{Name: "programs-per-cell-max", Value: sc.ProgramsPerCellMax, Usage: "singlecell: most programs a cell uses"},
			&cli.Float64Flag{Name: "missing", Usage: "fraction of entries unobserved (shards only)"},
			&cli.Uint64Flag{Name: "seed", Value: d.Seed, Usage: "random seed"},
			&cli.BoolFlag{Name: "shards", Usage: "write shards (OUT/shards) instead of an MTX folder"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing output folder"},
		),
		Action: func(c *cli.Context) error {
			env, err := newEnv(c)
			if err != nil {
				return err
			}
			p, err := simulateParams(c)
			if err != nil {
				return err
			}
			t, err := simulate.New(p)
			if err != nil {
				return err
			}
			t.Workers = env.threads
			out := c.String("output")
			if c.Bool("shards") {
				err = simulate.WriteShards(c.Context, out, t, shard.CreateOptions{Force: c.Bool("force"), Cached: env.cached})
			} else {
				err = simulate.WriteMTX(c.Context, out, t, c.Bool("force"))
			}
			if err == nil {
				env.log.Info("simulated", "output", out, "kind", p.Kind, "cells", p.Cells, "genes", p.Genes, "L", p.L)
			}
			return err
		},
	}
}

// simulateParams reads the flags of the chosen kind, refusing a flag that
// belongs to the other kind.
func simulateParams(c *cli.Context) (simulate.Params, error) {
	kind, err := simulate.ParseKind(c.String("kind"))
	if err != nil {
		return simulate.Params{}, fmt.Errorf("--kind: %w", err)
	}
	p := simulate.Params{
		Kind:  kind,
		Cells: c.Int("cells"), Genes: c.Int("genes"), L: c.Int("L"),
		Missing: c.Float64("missing"), Seed: c.Uint64("seed"),
	}
	foreign := singleCellFlags
	if kind == simulate.SingleCell {
		foreign = orMachineFlags
	}
	for _, name := range foreign {
		if c.IsSet(name) {
			return p, fmt.Errorf("--%s does not apply to --kind %s", name, kind)
		}
	}
	if kind == simulate.SingleCell {
		p.SingleCell = simulate.SingleCellParams{
			DepthSigma:     c.Float64("depth-sigma"),
			BaselineMedian: c.Float64("baseline-median"), BaselineSigma: c.Float64("baseline-sigma"),
			HousekeepingFraction: c.Float64("housekeeping-fraction"),
			HousekeepingMedian:   c.Float64("housekeeping-median"), HousekeepingSigma: c.Float64("housekeeping-sigma"),
			LiftMedian: c.Float64("lift-median"), LiftSigma: c.Float64("lift-sigma"),
			ProgramSizeMin: c.Float64("program-size-min"), ProgramSizeMax: c.Float64("program-size-max"),
			ProgramsPerCellMin: c.Int("programs-per-cell-min"), ProgramsPerCellMax: c.Int("programs-per-cell-max"),
		}
		return p, nil
	}
	p.CodeDensity, p.UsageDensity = c.Float64("code-density"), c.Float64("usage-density")
	p.FlipOn, p.FlipOff = c.Float64("flip-on"), c.Float64("flip-off")
	if c.IsSet("flip") {
		p.FlipOn, p.FlipOff = c.Float64("flip"), c.Float64("flip")
	}
	return p, nil
}
