package report

import (
	"scpipe/internal/figure"
	"scpipe/internal/rundir"
)

// selectionFigure is the model-selection figure of the run's summary
// (figure.Selection, as the run's selection.svg draws it) with its
// caption.
func selectionFigure(rows []rundir.SummaryRow) (*pageFigure, error) {
	svg, err := figure.Selection(rows, 0)
	if err != nil {
		return nil, err
	}
	recommended := figure.Recommended(rows)
	caption := "Higher is better in both score panels; bars are ±1 standard error over cells. One line per chain."
	if recommended > 0 {
		caption += " Dashed: the recommended L = " + itoa(recommended) + ", the smallest whose held-out log predictive is within one " +
			"standard error of the best L's (of the paired difference over cells) or within 5% of the gain across L."
	}
	if !figure.HeldOut(rows) {
		caption = "No entries were held out (scpipe fit --holdout 0), so these are training scores, which rise with L " +
			"whether or not the data support it. One line per chain."
	} else if recommended > 0 {
		caption += " Gap to the best L: the held-out log predictive of each L's chain of highest training log-likelihood below the best L's, " +
			"with the standard error of that difference paired over cells; grey, the tolerance the rule allows each L."
	}
	if len(figure.Chains(rows)) > 1 {
		caption += " Stability: each chain's agreement with chain 1 (mean Jaccard index of the matched programs' gene sets); " +
			"above each L, the programs every chain found (matched at Jaccard ≥ 0.5) of the programs of chain 1."
	}
	return &pageFigure{ID: "selection", Title: "Model selection across L", Caption: caption, SVG: svg}, nil
}

// tracesFigure draws the traces of the run's fits (figure.Traces) with
// their caption.
func tracesFigure(traces []figure.Trace) (*pageFigure, error) {
	svg, err := figure.Traces(traces)
	if err != nil {
		return nil, err
	}
	return &pageFigure{ID: "traces", Title: "Traces",
		Caption: "Each row is one L, each line one chain, against sweep; burn-in sweeps (shaded to the longest chain's) do not enter the posterior means; " +
			"the second column draws each chain's sampling sweeps alone, on their own scale. " +
			"A chain has mixed when its sampling sweeps wander around a level without trend, and chains agree when they share it: " +
			"the chains of an L that share their parameters (share_params) sample one posterior, whose log-likelihood they trace. " +
			"With held parameters (hold_from) a window of sampling sweeps that still climbs, or whose halves differ, becomes burn-in and is drawn again, " +
			"up to max_burn_in sweeps of burn-in: the model selection's table counts each fit's sweeps.",
		SVG: svg}, nil
}
