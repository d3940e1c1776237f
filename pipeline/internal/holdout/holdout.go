// Package holdout decides which observed entries of the shards a run hides
// from every fit, so that the run's summary can score the fits on entries
// they never saw: drawn from the run's seed and held-out fraction
// (Spec.Row), written once as the fit mask the sampler reads (WriteMask,
// RUN/fitmask), and read back for scoring (OpenEntries).
package holdout

import (
	"math/rand/v2"

	"scpipe/internal/bernoulli"
)

// Spec decides which observed entries are hidden from every fit. Entry
// (n, d) is held out with probability Frac, independently, from a random
// stream keyed by (Seed, n): the same entries for every L, chain, worker
// count and machine, and regenerated rather than stored.
type Spec struct {
	Seed uint64
	Frac float64
}

// Row writes the held-out entries of cell n (a subset of observed, which
// has D bits) into dst.
//
// Its stream is math/rand/v2's PCG keyed by (Seed, n) rather than
// SplitMix64 (package splitmix): bernoulli.Each draws from a *rand.Rand,
// as the simulations' rows do, and the entries must stay those that runs
// already on disk held out, since a run without a fit mask has them drawn
// again to score its fits; another generator would score entries the fits
// had seen (TestPinned).
func (s Spec) Row(n, D int, observed, dst []uint64) {
	clear(dst)
	if s.Frac <= 0 {
		return
	}
	r := rand.New(rand.NewPCG(s.Seed^0x686f6c646f7574, uint64(n)+1))
	bernoulli.Each(D, s.Frac, r, func(d int) { dst[d/64] |= 1 << (d % 64) })
	for i := range dst {
		dst[i] &= observed[i]
	}
}
