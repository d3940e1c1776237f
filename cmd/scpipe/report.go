package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"scpipe/enrich"
	"scpipe/pipeline/hierarchy"
	"scpipe/report"
)

func reportCommand() *cli.Command {
	d := report.DefaultOptions()
	return &cli.Command{
		Name:      "report",
		Usage:     "one self-contained HTML report of a run: model selection, traces, programs across L, heat maps, tables",
		ArgsUsage: "RUN",
		Description: `Writes one HTML file to open in any browser, offline (no script, nothing
loaded from elsewhere), and every figure again as an SVG file in a folder beside
it: first the answer (the recommended L, whether the chains agree, and its
programs with their top genes and terms), then the model selection across L
(held-out log predictive and accuracy per chain), the traces (log-likelihood,
dropout and background rates against sweep, burn-in shaded), the programs
across L (splits, merges, each labelled with its top enrichment term), and for
each L the codes × genes and cell usage heat maps and a table of its codes:
genes, unique genes, cells, stability, top genes by score (posterior mean for
runs fitted before scores), top terms with adjusted p.

Enrichment terms come from an output of scpipe enrich: --enrich DIR, or else
RUN/enrich or RUN-enrich when one exists (its threshold and hierarchy method are
then the report's).

   RUN/report.html            the report (default; -o FILE.html elsewhere)
   RUN/report-figures/*.svg   selection, traces, hierarchy, L05_genes, L05_cells, ...

   scpipe enrich run -o run-enrich --gmt GO_Biological_Process_2023.gmt
   scpipe report run                        # finds run-enrich
   scpipe report run -o ~/www/run.html --force`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the HTML file (default: RUN/report.html); figures go in FILE-figures/"},
			&cli.StringFlag{Name: "enrich", Usage: "output folder of scpipe enrich for this run (default: RUN/enrich or RUN-enrich if present)"},
			&cli.BoolFlag{Name: "no-enrich", Usage: "show no enrichment terms, even if an enrich output is found"},
			&cli.Float64Flag{Name: "threshold", Value: d.Threshold, Usage: "posterior mean at or above which a gene is in a code and a cell uses it, in [0, 1], without an enrich output"},
			&cli.StringFlag{Name: "hierarchy", Usage: "how programs of neighbouring L are linked: fixed-codes or overlap, as in scpipe enrich (default: the enrich output's, else fixed-codes)"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing report and its figures"},
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
			o := report.DefaultOptions()
			o.Run, o.Out, o.Enrich, o.Force, o.Log = run, c.String("output"), c.String("enrich"), c.Bool("force"), env.log
			o.Threshold = c.Float64("threshold")
			if c.IsSet("hierarchy") {
				if o.Hierarchy, err = enrich.ParseHierarchyMethod(c.String("hierarchy")); err != nil {
					return fmt.Errorf("report: --hierarchy: %w", err)
				}
			}
			o.Linker = hierarchy.Linker(hierarchy.DefaultOptions())
			if c.Bool("no-enrich") {
				if o.Enrich != "" {
					return fmt.Errorf("report: --enrich and --no-enrich together")
				}
				o.Enrich = report.NoEnrich
			}
			res, err := report.Write(c.Context, o)
			if err != nil {
				return err
			}
			env.log.Info("report complete", "output", res.HTML, "figures", report.FiguresDir(res.HTML), "enrich", res.Enrich)
			fmt.Fprintln(os.Stdout, res.HTML)
			return nil
		},
	}
}
