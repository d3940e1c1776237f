package main

import (
	"github.com/urfave/cli/v2"

	"scpipe/simulate"
)

func simulateCommand() *cli.Command {
	d := simulate.DefaultParams()
	return &cli.Command{
		Name:  "simulate",
		Usage: "draw planted data from the OrMachine generative model",
		Description: `Draws L gene programs (random gene sets) and their usage by cells, forms the
Boolean product, adds dropout (--flip-off) and background (--flip-on) noise,
and writes a 10x v3 MTX folder, or shards directly (--shards) for data too
large for text. The planted truth goes to OUT/truth/ (programs.tsv, usage.tsv,
truth.json).

   scpipe simulate -o sim                               # the demo's default
   scpipe simulate -o sim --cells 1000 --genes 1000 --L 5 --code-density 0.3 \
       --usage-density 0.3 --flip 0.05                   # the paper's symmetric noise
   scpipe simulate -o big --shards --cells 1300000 --genes 11000 --L 2`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "output folder"},
			&cli.IntFlag{Name: "cells", Value: d.Cells, Usage: "number of cells"},
			&cli.IntFlag{Name: "genes", Value: d.Genes, Usage: "number of genes"},
			&cli.IntFlag{Name: "L", Value: d.L, Usage: "number of planted programs"},
			&cli.Float64Flag{Name: "code-density", Value: d.CodeDensity, Usage: "fraction of genes in each program"},
			&cli.Float64Flag{Name: "usage-density", Value: d.UsageDensity, Usage: "fraction of cells using each program"},
			&cli.Float64Flag{Name: "flip-on", Value: d.FlipOn, Usage: "probability that a noise-free 0 is observed as 1"},
			&cli.Float64Flag{Name: "flip-off", Value: d.FlipOff, Usage: "probability that a noise-free 1 is observed as 0 (dropout)"},
			&cli.Float64Flag{Name: "flip", Usage: "symmetric flip noise: sets both --flip-on and --flip-off"},
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
			p := simulate.Params{
				Cells: c.Int("cells"), Genes: c.Int("genes"), L: c.Int("L"),
				CodeDensity: c.Float64("code-density"), UsageDensity: c.Float64("usage-density"),
				FlipOn: c.Float64("flip-on"), FlipOff: c.Float64("flip-off"),
				Missing: c.Float64("missing"), Seed: c.Uint64("seed"),
			}
			if c.IsSet("flip") {
				p.FlipOn, p.FlipOff = c.Float64("flip"), c.Float64("flip")
			}
			t, err := simulate.New(p)
			if err != nil {
				return err
			}
			out := c.String("output")
			if c.Bool("shards") {
				err = simulate.WriteShards(c.Context, out, t, c.Bool("force"))
			} else {
				err = simulate.WriteMTX(c.Context, out, t, c.Bool("force"))
			}
			if err == nil {
				env.log.Info("simulated", "output", out, "cells", p.Cells, "genes", p.Genes, "L", p.L)
			}
			return err
		},
	}
}
