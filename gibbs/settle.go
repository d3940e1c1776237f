package gibbs

import (
	"math"
	"slices"

	"scpipe/internal/stats/codematch"
)

// SettleRho bounds the absolute Spearman correlation of a settled
// window's log-likelihood with the sweep.
const SettleRho = 0.3

// SettleRHat bounds the within-chain rank-normalised split-R̂ of a settled
// window's log-likelihood (codematch.WithinRHat, the statistic the run's
// summary reports as rhat_within): its halves sit at one level.
const SettleRHat = 1.05

// burnInAfter returns the burn-in's length after the sweeps of trace,
// given its length b before the last of them and samples sampling sweeps:
// b, or b+samples when the last sweep ended the sampling window [b,
// b+samples) (whose states the chain has retained), the window has not
// settled, and b+samples is still within the most burn-in. The window's
// sweeps then become burn-in, and samples more are drawn.
func (sc schedule) burnInAfter(b, samples int, trace []SweepStats) int {
	t := len(trace)
	if sc.holdFrom == 0 && !sc.fixed || t != b+samples || t > sc.maxBurnIn || settled(trace[b:]) {
		return b
	}
	return t
}

// settled reports whether the log-likelihood of the sweeps of window shows
// no trend (|Spearman| < SettleRho) and its halves agree (within-chain
// split-R̂ < SettleRHat). A window too short for R̂ (fewer than four
// sweeps) is settled: nothing can be said of it.
func settled(window []SweepStats) bool {
	ll := make([]float64, len(window))
	for i, st := range window {
		ll[i] = st.LogLik
	}
	r := codematch.WithinRHat([][]float64{ll})
	return math.IsNaN(r) || r < SettleRHat && math.Abs(trendRho(ll)) < SettleRho
}

// trendRho returns the Spearman correlation of v with its index (ties
// take their mean rank); 0 for a constant v.
func trendRho(v []float64) float64 {
	n := len(v)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	rank := make([]float64, n)
	for i := 0; i < n; {
		j := i
		for j+1 < n && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			rank[idx[k]] = float64(i+j) / 2
		}
		i = j + 1
	}
	mean := float64(n-1) / 2
	var sxy, sxx, syy float64
	for i, r := range rank {
		x := float64(i) - mean
		sxy += x * (r - mean)
		sxx += x * x
		syy += (r - mean) * (r - mean)
	}
	if syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}
