package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"scpipe/cmd/scpipe/internal/demo"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run the whole pipeline on an embedded simulated dataset",
		Description: `Simulates a planted single-cell-like dataset (4000 cells × 2000 genes, six
programs, dropout and background noise) as a 10x MTX folder, ingests it, fits
L = 2..8 with two chains, writes a gene-set library of the planted programs
and decoys (planted.gmt), runs enrich (run-enrich/) and report
(run/report.html), and prints where the results are, the held-out scores per
L, how well each planted program was recovered, the top term of the program
that recovered it with its adjusted p, and the path of the report.

   scpipe demo                  # in a new temporary folder
   scpipe demo -o demo --force  # in ./demo`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "working folder (default: a new temporary folder)"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing working folder"},
		),
		Action: func(c *cli.Context) error {
			env, err := newEnv(c)
			if err != nil {
				return err
			}
			return demo.Run(c.Context, os.Stdout, demo.Options{
				Dir: c.String("output"), Force: c.Bool("force"), Threads: env.threads,
				Log: env.log, Progress: env.progress, ProgressTo: os.Stderr, Cached: env.cached,
			})
		},
	}
}
