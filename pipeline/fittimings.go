package pipeline

import "time"

// FitTimings says where the wall time of a Fit went, summed over its fits.
// Only the Sweeps are the sampler's work proper; the rest is what a run
// costs besides, which `scpipe bench --e2e` reports.
type FitTimings struct {
	Verify time.Duration // the shards' checksums, once per run
	Mask   time.Duration // the held-out mask, written once per run (or opened)
	// Setup is each fit's NewSampler and checkpoint restore: counting the
	// ones, and seeding the starts (the cell-type start's clustering).
	Setup time.Duration
	// Sweeps is the sampler's sweeps, the starts' first sweeps included,
	// less the checkpoints written between them.
	Sweeps      time.Duration
	Checkpoints time.Duration // the checkpoints written during and after the sweeps
	Outputs     time.Duration // each fit's codes, cells and trace tables
	// Scoring is runsummary.Write: reading the fits' tables, scoring the
	// held-out entries, chain matching, summary.tsv and selection.svg.
	Scoring time.Duration
	// Consensus is the consensus stage as a whole (consensus.go); its
	// fits' setup, sweeps, checkpoints and outputs count in those phases
	// as well.
	Consensus time.Duration
	Total     time.Duration // the whole Fit
}

// fitPhase names a field of FitTimings.
type fitPhase int

const (
	phaseVerify fitPhase = iota
	phaseMask
	phaseSetup
	phaseSweeps
	phaseCheckpoints
	phaseOutputs
	phaseScoring
	phaseTotal
	phaseConsensus
)

// since adds the time since start to phase p; a nil t records nothing.
func (t *FitTimings) since(p fitPhase, start time.Time) {
	t.add(p, time.Since(start))
}

func (t *FitTimings) add(p fitPhase, d time.Duration) {
	if t == nil {
		return
	}
	*[...]*time.Duration{&t.Verify, &t.Mask, &t.Setup, &t.Sweeps, &t.Checkpoints, &t.Outputs, &t.Scoring, &t.Total, &t.Consensus}[p] += d
}
