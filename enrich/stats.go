package enrich

import (
	"cmp"
	"math"
	"slices"
)

// lchoose returns ln C(n, k) for 0 ≤ k ≤ n.
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// tailCut is how far below the running sum, in natural log units, the
// bound on the terms left out may lie when the tail sum stops early:
// e^-40 ≈ 4e-18, below the rounding of a double.
const tailCut = 40

// LogHypergeomSF returns ln P(X ≥ k) for X hypergeometric: the number of
// successes in n draws without replacement from N objects of which K are
// successes. For enrichment, N is the background's size, K the gene set's,
// n the query's and k their overlap, and the result is the log of the
// one-sided p-value that Enrichr, gseapy (scipy's hypergeom.sf(k-1, N, K, n))
// and R's phyper(k-1, K, N-K, n, lower.tail = FALSE) give.
//
// The tail is summed in log space, so nothing overflows or underflows: the
// first term is ln C(K,i) + ln C(N-K,n-i) - ln C(N,n) by math.Lgamma, each
// next one follows by the exact ratio of consecutive terms, and the terms
// are added by log-sum-exp. The probability mass function is log-concave, so
// once the ratio r of consecutive terms falls below 1 the terms left sum to
// at most t·r/(1-r) after the current term t; the sum stops when that is
// below e^-40 of the sum. ln p is accurate to a few 1e-10 absolute, so p is
// to a few 1e-10 relative (the rounding of the Lgamma differences, values
// near N·ln N), for N up to 10⁵ and p far below 1e-300.
//
// It returns 0 (probability 1) for k at or below the smallest possible
// overlap, -Inf for k above the largest, and NaN for arguments that describe
// no hypergeometric distribution (negative, K > N or n > N).
func LogHypergeomSF(k, K, n, N int) float64 {
	if K < 0 || n < 0 || N < 0 || K > N || n > N {
		return math.NaN()
	}
	lo, hi := max(k, 0, n+K-N), min(n, K)
	switch {
	case lo > hi:
		return math.Inf(-1)
	case lo <= max(0, n+K-N):
		return 0
	}
	t := lchoose(K, lo) + lchoose(N-K, n-lo) - lchoose(N, n) // ln of the term at i = lo
	top, sum := t, 1.0                                       // the sum is exp(top)·sum
	for i := lo; i < hi; i++ {
		// Term i+1 over term i; the products are exact in float64 for N < 2^26.
		r := float64(K-i) * float64(n-i) / (float64(i+1) * float64(N-K-n+i+1))
		if r < 1 && t+math.Log(r/(1-r)) < top+math.Log(sum)-tailCut {
			break
		}
		t += math.Log(r)
		if t > top {
			sum = sum*math.Exp(top-t) + 1
			top = t
		} else {
			sum += math.Exp(t - top)
		}
	}
	return min(top+math.Log(sum), 0)
}

// AdjustBH returns the Benjamini–Hochberg adjusted p-values of the tests
// whose log p-values are logp, as logs too: q_(i) = min over j ≥ i of
// p_(j)·m/j for the p-values sorted ascending (ranks j = 1…m), capped at 1.
// Working with logs keeps q exact where p underflows a double. NaN entries
// are left NaN and do not count as tests.
func AdjustBH(logp []float64) []float64 {
	order := make([]int, 0, len(logp))
	for i, lp := range logp {
		if !math.IsNaN(lp) {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(logp[a], logp[b]) })
	logq := make([]float64, len(logp))
	for i := range logq {
		logq[i] = math.NaN()
	}
	m := float64(len(order))
	running := 0.0 // ln 1: the cap
	for j := len(order) - 1; j >= 0; j-- {
		i := order[j]
		running = min(running, logp[i]+math.Log(m/float64(j+1)))
		logq[i] = running
	}
	return logq
}

// haldane is the count added to every cell of the 2×2 table before the odds
// ratio is taken (the Haldane–Anscombe correction), as gseapy does.
const haldane = 0.5

// OddsRatio returns the odds ratio of the 2×2 table of a query of n genes
// against a gene set of K genes in a background of N, overlapping in k, as
// gseapy's offline enrich computes it (gseapy/stats.py, calc_pvalues): the
// Haldane–Anscombe corrected ((k+½)(N-K-n+k+½)) / ((K-k+½)(n-k+½)), finite
// even when a cell of the table is empty. Enrichr's web server uses no
// correction (gseapy's comment: "when bu=0, the result is exactly equal to
// Enrichr"), so its odds ratios differ where counts are small.
func OddsRatio(k, K, n, N int) float64 {
	a, b := float64(k)+haldane, float64(K-k)+haldane
	c, d := float64(n-k)+haldane, float64(N-K-n+k)+haldane
	return a * d / (b * c)
}

// CombinedScore is Enrichr's combined score, -ln(p) × odds ratio, from ln p:
// finite where p itself underflows to 0 (gseapy, computing -log(p), gives
// +Inf there).
func CombinedScore(logp, oddsRatio float64) float64 { return -logp * oddsRatio }
