// Package fiteval is scpipe evaluate: it scores the predictive of every
// finished fit of a run directory (package predictive's plug-in estimate,
// or the likelihood averaged over the states a fit kept) against the
// entries held out from the fits and, given a simulation's truth, against
// the planted noise-free matrix, and writes the scores, ROC and
// calibration curves and threshold tables (package evaluate's tallies,
// package figure's plots) and, for image data, the codes, reconstructions
// and hierarchy as images (package imagegrid). It reads the run directory
// and the shards only, so it never imports the sampler's wiring
// (pipeline); the hierarchy by fixed codes comes through Options.Linker.
//
//	o := fiteval.DefaultOptions()
//	o.Run, o.Out, o.Workers = "run", "run-eval", 8
//	rep, err := fiteval.Evaluate(ctx, o)
package fiteval
