// Package splitmix holds SplitMix64 (Steele, Lea and Flood 2014), the one
// hash behind scpipe's counter-based random numbers and seed derivations:
// its output function Mix, a bijection of uint64 with full avalanche, and
// At, the i-th output of the stream seeded with seed, which passes
// BigCrush. A draw keyed by (seed, index) is At(seed, index): it does not
// depend on which goroutine makes it or in which order, so results are the
// same for any number of workers.
//
// Every value the package returns is part of pinned results (the sampler's
// digests, simulated data, barcodes, chain seeds): it must never change.
package splitmix

// Golden is the increment of SplitMix64's Weyl sequence: 2⁶⁴/φ, odd.
const Golden = 0x9e3779b97f4a7c15

// Mix is SplitMix64's output function (its finaliser, Stafford's Mix13
// variant).
func Mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// At returns output i (from 0) of the SplitMix64 stream seeded with seed:
// the state after i+1 steps of the Weyl sequence, mixed.
func At(seed, i uint64) uint64 { return Mix(seed + (i+1)*Golden) }
