// Package bernoulli selects indices independently with a fixed probability
// in time proportional to the number selected, not to the number of indices:
// the gaps between selected indices are drawn from the geometric
// distribution. Simulation noise, missing entries and held-out entries are
// all such selections over rows of tens of thousands of genes.
package bernoulli

import (
	"math"
	"math/rand/v2"
)

// Each calls hit, in increasing order, for each index in [0, n) selected
// independently with probability p (p ≤ 0 selects none, p ≥ 1 all). It
// consumes one draw from r per selected index plus one.
func Each(n int, p float64, r *rand.Rand, hit func(int)) {
	EachWhile(n, p, r, func(i int) bool { hit(i); return true })
}

// EachWhile is Each that stops once hit returns false: a long draw
// that Ctrl-C can stop. Until then it draws what Each draws.
func EachWhile(n int, p float64, r *rand.Rand, hit func(int) bool) {
	switch {
	case p <= 0:
		return
	case p >= 1:
		for i := range n {
			if !hit(i) {
				return
			}
		}
		return
	}
	logq := math.Log1p(-p)
	for i := -1; ; {
		// 1-Float64() is in (0, 1], so the log is finite.
		gap := math.Floor(math.Log(1-r.Float64()) / logq)
		if gap >= float64(n-i-1) {
			return
		}
		i += int(gap) + 1
		if !hit(i) {
			return
		}
	}
}
