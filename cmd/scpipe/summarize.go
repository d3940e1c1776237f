package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"scpipe/internal/rundir"
	"scpipe/pipeline"
	"scpipe/pipeline/runsummary"
)

func summarizeCommand() *cli.Command {
	return &cli.Command{
		Name:      "summarize",
		Usage:     "write a run's summary.tsv and selection.svg from the fits that have finished",
		ArgsUsage: "RUN",
		Description: `Reads every finished fit of a run directory and writes RUN/summary.tsv (one
row per (L, chain): rates, log-likelihood, accuracies, held-out scores, the
chains' agreement and R-hat, converged, recommended) and RUN/selection.svg,
as scpipe fit does at its end: once every fit has finished, the same bytes.
It says which (L, chain) of the run's configuration have not finished (they
are left out) and how far their checkpoints got. Use it after the fits of a
run that many processes shared (scpipe fit --chain-index, scripts/slurm/), or to
look at a run while it is being fitted.

The held-out entries are scored against the shards the run records in
RUN/shards.json; --shards names them where they have moved (their content
must be the same).

   scpipe summarize brain-run
   scpipe summarize brain-run --shards /scratch/brain --strict`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "shards", Usage: "the shard folder the run was fitted to (default: the path in RUN/shards.json)"},
			&cli.BoolFlag{Name: "strict", Usage: "exit with an error when fits are missing (the summary of the others is written all the same)"},
		),
		Action: func(c *cli.Context) error {
			run, err := oneArg(c, "run directory")
			if err != nil {
				return err
			}
			env, err := newEnv(c)
			if err != nil {
				return err
			}
			rep, err := runsummary.Summarize(c.Context, run, pipeline.SummaryPlan, runsummary.Options{
				Shards: c.String("shards"), Threads: env.threads, Log: env.log,
			})
			if rep != nil && len(rep.Missing) > 0 {
				names := make([]string, len(rep.Missing))
				for i, m := range rep.Missing {
					names[i] = m.String()
				}
				if err == nil && c.Bool("strict") {
					err = fmt.Errorf("summarize: %d fits of %s have not finished: %s", len(rep.Missing), run, strings.Join(names, ", "))
				}
			}
			if err != nil {
				return err
			}
			env.log.Info("summary written", "output", filepath.Join(run, rundir.SummaryFile),
				"fits", len(rep.Summary), "missing", len(rep.Missing))
			return nil
		},
	}
}
