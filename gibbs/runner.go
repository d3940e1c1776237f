package gibbs

import "context"

// Runner is what the three samplers share: a fit at a sweep boundary,
// swept to its end by Run, and restored from a whole state
// (MarshalBinary's). Sampler, PartSampler and LayersSampler meet it, each
// with its own results (Result, Whole after Gather, LayersSampler.Result)
// and its own way to checkpoint (MarshalBinary, MarshalShared and
// MarshalPart).
type Runner interface {
	// Sweep returns the number of completed sweeps.
	Sweep() int
	// Sweeps returns the total number of sweeps as far as they are known.
	Sweeps() int
	// Kernel returns the name of the sweep kernel in use.
	Kernel() string
	// Run runs the remaining sweeps, calling onSweep (if not nil) after
	// each; it stops between sweeps when ctx is done or onSweep fails.
	Run(ctx context.Context, onSweep func(SweepStats) error) error
	// UnmarshalBinary restores a state that MarshalBinary encoded.
	UnmarshalBinary(data []byte) error
}

var (
	_ Runner = (*Sampler)(nil)
	_ Runner = (*PartSampler)(nil)
	_ Runner = (*LayersSampler)(nil)
)
