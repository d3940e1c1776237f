package gibbs

// Counter-based random numbers: every draw is a hash of (seed, sweep, step,
// variable index), so it does not depend on which worker makes it or in which
// order. The hash is the SplitMix64 output function (Steele, Lea and Flood
// 2014) applied to a Weyl sequence position, which passes BigCrush.

const golden = 0x9e3779b97f4a7c15

// mix64 is the SplitMix64 finaliser: a bijection of uint64 with full avalanche.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

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
	return mix64(mix64(seed+golden) ^ (uint64(sweep)<<2 | step))
}

// bitsAt returns 64 random bits for variable i of the stream key.
func bitsAt(key uint64, i uint64) uint64 {
	return mix64(key + (i+1)*golden)
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
	return mix64(seed ^ mix64(uint64(c)*golden))
}
