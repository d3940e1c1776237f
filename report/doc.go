// Package report writes the report of a run of scpipe fit: one HTML file
// that a biologist opens from a cluster's scratch disk, with no network and
// no script, and every figure again as a standalone SVG file.
//
// It shows the model selection across L (from summary.tsv: held-out log
// predictive and accuracy per chain with error bars of one standard error
// over cells, each L's gap to the best L with its paired standard error and
// the tolerance the recommendation allows, the chains' agreement and
// stable programs, the recommended L marked: figure.Selection, the run's
// selection.svg), the traces (log-likelihood and the noise rates against
// sweep, burn-in shaded: figure.Traces), the hierarchy of programs
// across L (labelled with each program's top enrichment term when an output
// of scpipe enrich is given or found), and for each L a heat map of codes ×
// genes, one of cell usage, and a table of its codes: genes, unique genes,
// cells, stability, top genes and top terms.
//
//	o := report.DefaultOptions()
//	o.Run = "run"                // writes run/report.html and run/report-figures/
//	res, err := report.Write(ctx, o)
//
// The programs are those of package enrich (enrich.Analyse), read once:
// its Visit hook hands the report each fit's tables as they are read. A
// million cells are drawn as a few hundred bands of equal numbers of cells
// ordered by usage pattern, from per-pattern sums (usage), so the page and
// its memory do not grow with the cells; heat maps are raster images inside
// the SVG (gonum's plotter.HeatMap, Rasterized), one element whatever their
// size.
package report
