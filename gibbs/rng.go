package gibbs

import "scpipe/internal/splitmix"

// Counter-based random numbers: every draw is a hash of (seed, sweep, step,
// variable index), so it does not depend on which worker makes it or in which
// order. The hash is SplitMix64's output (package splitmix) at a position of
// its Weyl sequence.

// Steps of a sweep, part of the key of every draw.
const (
	stepZ    = 0
	stepU    = 1
	stepInit = 2
	// stepInitZ keys a chain's first Z step given its seeded codes (with
	// per-cell levels); a sweep's own keys have the sweep above the step.
	stepInitZ = 3
)

// streamKey returns the key of the draws of one step of one sweep.
func streamKey(seed uint64, sweep int, step uint64) uint64 {
	return splitmix.Mix(splitmix.At(seed, 0) ^ (uint64(sweep)<<2 | step))
}

// bitsAt returns 64 random bits for variable i of the stream key.
func bitsAt(key uint64, i uint64) uint64 {
	return splitmix.At(key, i)
}

// uniformAt returns a uniform float64 in [0, 1) for variable i of the stream key.
func uniformAt(key uint64, i uint64) float64 {
	return float64(bitsAt(key, i)>>11) * 0x1p-53
}

// chainSeed returns the seed of chain c of a multi-start run; chain 0 uses
// the configured seed itself, so Starts = 1 is a plain run.
func chainSeed(seed uint64, c int) uint64 {
	if c == 0 {
		return seed
	}
	return splitmix.Mix(seed ^ splitmix.Mix(uint64(c)*splitmix.Golden))
}
