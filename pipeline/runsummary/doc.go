// Package runsummary writes a run's summary (RUN/summary.tsv and
// RUN/selection.svg, internal/rundir/README.md): every finished fit's held-out
// entries scored by its predictive (package predictive), the chains of
// each L compared by their programs and traces (package codematch, and
// Converged), and the L recommended by the one-standard-error rule on the
// held-out log predictive. A fit writes it at its end (Write); scpipe
// summarize writes it from the fits of a run that have finished, while
// other processes may still fit the rest (Summarize).
//
// It reads the run directory alone: what it needs of the run's
// configuration comes from its caller (a holdout.Spec, a Plan), so that
// it does not import the package that fits.
package runsummary
