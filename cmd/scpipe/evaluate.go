package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scpipe/pipeline"
	"scpipe/pipeline/fiteval"
	"scpipe/pipeline/hierarchy"
)

func evaluateCommand() *cli.Command {
	d := fiteval.DefaultOptions()
	fprs := make([]string, len(d.FPRs))
	for i, a := range d.FPRs {
		fprs[i] = strconv.FormatFloat(a, 'g', -1, 64)
	}
	return &cli.Command{
		Name:      "evaluate",
		Usage:     "score a run's predictions: accuracy, log predictive, ROC and AUC, calibration, thresholds",
		ArgsUsage: "RUN",
		Description: `Scores the plug-in predictive of every finished fit of a run directory (the
posterior means of U and Z put into the likelihood, section 3.3 of the paper)
against the entries held out from the fits (RUN/fitmask) and, with --truth
(a simulation's truth folder), against the planted noise-free matrix: every
entry, and the entries the fits did not see. Against held-out entries the
prediction is P(x = 1) of an observation; against the truth it is the
posterior probability c = 1 - prod_l(1 - z_l u_l) that the noise-free entry
is 1. --predictive samples scores the paper's second estimate instead, the
likelihood averaged over the retained samples (each with its own rates), and
against the truth the fraction of samples that cover the entry: the fits must
have kept them (scpipe fit --keep-samples).

   OUT/scores.tsv                 per (L, chain, target): n, positives, accuracy, logpred, brier, auc, auc_tie_bound
   OUT/roc.tsv                    the ROC curves: threshold, fpr, tpr, fp, tp
   OUT/calibration.tsv            per bin of predicted probability: n, positives, mean_predicted, observed (95% interval)
   OUT/thresholds.tsv             per target false-positive rate (--fpr): the threshold and its fpr, tpr, precision
   OUT/roc_TARGET.svg             ROC curves of every fit (the paper's Fig. recon_roc), AUC in the legend
   OUT/calibration_TARGET.svg     calibration curves (reliability diagrams) of every fit
   OUT/images/L07_chain1.png,svg  with --images: codes, data and posterior means as images (Fig. calc); a multi-layer fit (fit --layers) adds a row per upper layer of its codes fed forward to the pixels (Fig. deep_calc)
   OUT/images/hierarchy.png,svg   with --images and two or more L: each L's programs (scpipe enrich's) in a row, arrows
                                  to the programs of the next L that make each up (enrich --hierarchy fixed-codes; Fig. calc_hier)

Targets: heldout, truth, truth_unseen.

   scpipe evaluate run -o run-eval
   scpipe evaluate calc-run -o calc-eval --truth calc/truth --images
   scpipe evaluate ml100k-run -o ml100k-eval --fpr 0.05,0.1,0.2
   scpipe evaluate calc-run -o calc-eval-samples --truth calc/truth --predictive samples   # calc-run fitted with --keep-samples`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "output folder"},
			&cli.StringFlag{Name: "truth", Usage: "truth folder of scpipe simulate (OUT/truth): also score against the planted noise-free matrix"},
			&cli.StringFlag{Name: "shards", Usage: "the run's shards, when they moved since the fit (default: the path in RUN/shards.json)"},
			&cli.StringFlag{Name: "L", Usage: `latent sizes: "5", "2..10" or "2,4,8" (default: every L with a finished fit)`},
			&cli.StringFlag{Name: "predictive", Value: d.Predictive, Usage: "plug-in (the posterior means put into the likelihood: fast) or samples (the likelihood averaged over the samples the fits kept with fit --keep-samples)"},
			&cli.StringFlag{Name: "fpr", Value: strings.Join(fprs, ","), Usage: "target false-positive rates of the threshold table, comma-separated"},
			&cli.IntFlag{Name: "calibration-bins", Value: d.CalibrationBins, Usage: "bins of equal width of the calibration curve"},
			&cli.BoolFlag{Name: "images", Usage: "draw codes, data and posterior means as images (genes must be pixels named r<row>c<col>, as simulate --kind digits names them)"},
			&cli.IntFlag{Name: "image-cells", Value: d.ImageCells, Usage: "cells drawn with --images"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing output folder"},
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
			o := fiteval.DefaultOptions()
			o.Run, o.Out, o.Truth, o.Shards, o.Force = run, c.String("output"), c.String("truth"), c.String("shards"), c.Bool("force")
			o.CalibrationBins, o.Images, o.ImageCells = c.Int("calibration-bins"), c.Bool("images"), c.Int("image-cells")
			o.Predictive = c.String("predictive")
			o.Workers, o.Log = env.threads, env.log
			o.Linker = hierarchy.Linker(hierarchy.DefaultOptions())
			if c.IsSet("L") {
				if o.Ls, err = pipeline.ParseLSpec(c.String("L")); err != nil {
					return err
				}
			}
			if o.FPRs, err = parseRates(c.String("fpr")); err != nil {
				return err
			}
			rep, err := fiteval.Evaluate(c.Context, o)
			if err != nil {
				return err
			}
			for _, r := range rep.Rows {
				env.log.Info("scores", "L", r.L, "chain", r.Chain, "target", r.Target, "n", r.N,
					"accuracy", r.Accuracy, "logpred", r.LogPred, "auc", r.AUC)
			}
			env.log.Info("evaluate complete", "output", rep.Out)
			return nil
		},
	}
}

// parseRates reads a comma-separated list of rates.
func parseRates(s string) ([]float64, error) {
	var out []float64
	for part := range strings.SplitSeq(s, ",") {
		a, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil {
			return nil, fmt.Errorf("--fpr: %q is not a number", part)
		}
		out = append(out, a)
	}
	return out, nil
}
