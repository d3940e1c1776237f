package pipeline

import "math"

// Convergence thresholds of an L's chains: the split-R̂ of their
// log-likelihood and the agreement of their codes with chain 1's (mean
// Jaccard of the matched MAP gene sets), as the Stan and cNMF guides use.
const (
	MaxRHat      = 1.1
	MinAgreement = 0.9
)

// Converged tells whether the chains of one L agree: "yes" when R̂ is
// below MaxRHat and every chain's agreement is at least MinAgreement,
// "no" when either fails, and "" (unknown) with a single chain.
func Converged(agreement []float64, rhat float64) string {
	if len(agreement) < 2 || math.IsNaN(rhat) {
		return ""
	}
	if rhat >= MaxRHat {
		return "no"
	}
	for _, a := range agreement {
		if a < MinAgreement {
			return "no"
		}
	}
	return "yes"
}

// ElbowShare is the share of the held-out gain across the fitted L that
// RecommendL lets a smaller L forgo.
const ElbowShare = 0.05

// RecommendL picks L from the held-out log predictive of each cell under
// each L (perCell[L], from the L's chain of highest training
// log-likelihood: a chain stuck in a poorer mode says nothing about what L
// codes can explain): the smallest L whose mean over cells
// falls short of the best L's by no more than one standard error of their
// paired difference (the one-standard-error rule of cross-validation, with
// cells as the independent units) or ElbowShare of the gain from the worst
// fitted L to the best, whichever is larger. The second bound is the elbow
// of the curve: past the L that captures the data's programs, more codes
// keep improving the held-out score a little (they split programs or fit
// what the model leaves out, such as genes' detection rates), and with
// thousands of cells even that little is many standard errors. It returns
// 0 when no fit scored held-out entries.
func RecommendL(perCell map[int][]float32) int {
	best, bestMean := 0, math.Inf(-1)
	worst := math.Inf(1)
	for L, v := range perCell {
		m := meanOf(v)
		if m > bestMean || m == bestMean && L < best {
			best, bestMean = L, m
		}
		worst = min(worst, m)
	}
	if best == 0 {
		return 0
	}
	elbow := ElbowShare * (bestMean - worst)
	rec := best
	for L, v := range perCell {
		if L >= rec {
			continue
		}
		diff := make([]float64, len(v))
		for i := range v {
			diff[i] = float64(perCell[best][i]) - float64(v[i])
		}
		mean, se := meanAndSE(diff)
		if mean <= max(se, elbow) {
			rec = L
		}
	}
	return rec
}

func meanOf(v []float32) float64 {
	t := 0.0
	for _, x := range v {
		t += float64(x)
	}
	return t / float64(max(len(v), 1))
}

// meanAndSE returns the mean of v and its standard error.
func meanAndSE(v []float64) (mean, se float64) {
	n := float64(len(v))
	if n < 2 {
		return meanOf64(v), math.Inf(1)
	}
	mean = meanOf64(v)
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1) / n)
}

func meanOf64(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(max(len(v), 1))
}
