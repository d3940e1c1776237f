package enrich

import (
	"math"
	"math/big"
	"math/bits"
	"testing"
)

// TestLogHypergeomSFEnumeration checks every small case against exact
// enumeration: for N ≤ 12 objects, the first K of them successes, every
// n-subset is drawn and the subsets with at least k successes are counted,
// giving P(X ≥ k) as an exact rational.
func TestLogHypergeomSFEnumeration(t *testing.T) {
	t.Parallel()
	for N := 0; N <= 12; N++ {
		// count[K][n][i]: n-subsets of N with i of the first K objects.
		count := make([][][]int64, N+1)
		for K := range count {
			count[K] = make([][]int64, N+1)
			for n := range count[K] {
				count[K][n] = make([]int64, N+1)
			}
		}
		for mask := uint32(0); mask < 1<<N; mask++ {
			n := bits.OnesCount32(mask)
			for K := 0; K <= N; K++ {
				count[K][n][bits.OnesCount32(mask&(1<<K-1))]++
			}
		}
		for K := 0; K <= N; K++ {
			for n := 0; n <= N; n++ {
				var total int64
				for _, c := range count[K][n] {
					total += c
				}
				for k := -1; k <= N+1; k++ {
					var tail int64
					for i := max(k, 0); i <= N; i++ {
						tail += count[K][n][i]
					}
					want, _ := new(big.Rat).SetFrac64(tail, total).Float64()
					got := math.Exp(LogHypergeomSF(k, K, n, N))
					if math.Abs(got-want) > 1e-13*want || (want == 0) != (got == 0) {
						t.Errorf("P(X ≥ %d; K=%d n=%d N=%d) = %v, enumeration %d/%d = %v", k, K, n, N, got, tail, total, want)
					}
				}
			}
		}
	}
}

// binomials returns C(n, k) as a big integer.
func binomial(n, k int) *big.Int { return new(big.Int).Binomial(int64(n), int64(k)) }

// exactLogSF computes ln P(X ≥ k) from exact integers: Σ_i C(K,i)·C(N-K,n-i)
// over C(N,n), the binomials of consecutive terms updated by exact integer
// products and divisions, the logs taken of the integers' leading 64 bits.
func exactLogSF(k, K, n, N int) float64 {
	lo, hi := max(k, 0, n+K-N), min(n, K)
	if lo > hi {
		return math.Inf(-1)
	}
	a, b := binomial(K, lo), binomial(N-K, n-lo)
	sum, term, tmp := new(big.Int), new(big.Int), new(big.Int)
	for i := lo; ; i++ {
		sum.Add(sum, term.Mul(a, b))
		if i == hi {
			break
		}
		a.Div(a.Mul(a, tmp.SetInt64(int64(K-i))), tmp.SetInt64(int64(i+1)))
		b.Div(b.Mul(b, tmp.SetInt64(int64(n-i))), tmp.SetInt64(int64(N-K-n+i+1)))
	}
	return logBig(sum) - logBig(binomial(N, n))
}

// logBig returns ln x for a positive integer x, to double precision.
func logBig(x *big.Int) float64 {
	shift := max(x.BitLen()-64, 0)
	top := new(big.Int).Rsh(x, uint(shift)).Uint64()
	return math.Log(float64(top)) + float64(shift)*math.Ln2
}

// TestLogHypergeomSFLarge checks sets of thousands of genes in a background
// of 20 000, with p-values from near 1 down past the smallest double.
// Reference ln p: Python 3.11, the exact integer sum Σ math.comb(K,i)·
// math.comb(N-K,n-i) over math.comb(N,n), logs by decimal.Decimal.ln at 60
// digits (printed here to 17); the test also recomputes each with math/big
// (exactLogSF). Tolerance: 1e-9 absolute in ln p, i.e. 1e-9 relative in p
// (the rounding of Lgamma near 2·10⁵ is about 3e-11).
func TestLogHypergeomSFLarge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		k, K, n, N int
		lnp        float64
	}{
		{250, 3000, 2000, 20000, -0.00033526794324194362},
		{120, 5000, 400, 20000, -4.3770979421450022},
		{40, 200, 100, 20000, -124.03447632796495},
		{600, 3000, 2000, 20000, -167.70727370490610},
		{150, 500, 1000, 20000, -173.73734156340677},
		{890, 3000, 2000, 20000, -579.32816309161077},  // p ≈ 2.5e-252
		{950, 3000, 2000, 20000, -691.83928163271979},  // p ≈ 3.5e-301
		{960, 3000, 2000, 20000, -711.48489796598640},  // p ≈ 1e-309, subnormal
		{975, 3000, 2000, 20000, -741.43218369233263},  // p ≈ 1e-322, near the smallest double
		{1000, 3000, 2000, 20000, -792.62235878394488}, // p ≈ 6e-345, underflows to 0
		{100, 100, 100, 20000, -626.36146823655428},    // a single term
		{1500, 3000, 2000, 20000, -2170.0068159798297},
		{2000, 3000, 2000, 20000, -4591.6203921506111},
	} {
		got := LogHypergeomSF(tc.k, tc.K, tc.n, tc.N)
		if math.Abs(got-tc.lnp) > 1e-9 {
			t.Errorf("ln P(X ≥ %d; K=%d n=%d N=%d) = %.17g, reference %.17g (Δ %.2g)", tc.k, tc.K, tc.n, tc.N, got, tc.lnp, got-tc.lnp)
		}
		if ex := exactLogSF(tc.k, tc.K, tc.n, tc.N); math.Abs(ex-tc.lnp) > 1e-12 {
			t.Errorf("math/big ln P(X ≥ %d; K=%d n=%d N=%d) = %.17g, reference %.17g", tc.k, tc.K, tc.n, tc.N, ex, tc.lnp)
		}
		// The p-value as a double: 0 only below the smallest subnormal.
		p, want := math.Exp(got), math.Exp(tc.lnp)
		switch {
		case want == 0 && p != 0:
			t.Errorf("P(X ≥ %d) = %v, want 0 (ln p = %v)", tc.k, p, tc.lnp)
		case want >= 0x1p-1022 && math.Abs(p-want) > 1e-9*want:
			t.Errorf("P(X ≥ %d) = %v, want %v", tc.k, p, want)
		case want > 0 && want < 0x1p-1022 && math.Abs(p-want) > 1e-9*want+0x1p-1074:
			t.Errorf("subnormal P(X ≥ %d) = %v, want %v", tc.k, p, want)
		}
	}
}

// TestLogHypergeomSFAgainstBig compares a sweep of overlaps, including
// tails that pass through the mode, with the math/big computation.
func TestLogHypergeomSFAgainstBig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ K, n, N int }{{3000, 2000, 20000}, {15, 400, 20000}, {500, 500, 1000}, {19000, 18000, 20000}, {200, 300, 100000}} {
		lo, hi := max(0, c.n+c.K-c.N), min(c.n, c.K)
		for k := lo; k <= hi+1; k += max(1, (hi-lo)/37) {
			got, want := LogHypergeomSF(k, c.K, c.n, c.N), exactLogSF(k, c.K, c.n, c.N)
			if math.Abs(got-want) > 1e-9 && got != want { // absolute in ln p: relative in p
				t.Errorf("ln P(X ≥ %d; K=%d n=%d N=%d) = %.17g, math/big %.17g", k, c.K, c.n, c.N, got, want)
			}
		}
	}
}

func TestLogHypergeomSFEdges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		k, K, n, N int
		want       float64
	}{
		{"overlap 0", 0, 10, 5, 100, 0},
		{"overlap below the forced minimum", 3, 90, 20, 100, 0}, // at least 10 successes in any draw
		{"overlap above the set", 11, 10, 50, 100, math.Inf(-1)},
		{"overlap above the query", 6, 10, 5, 100, math.Inf(-1)},
		{"empty background", 0, 0, 0, 0, 0},
		{"set larger than background", 1, 11, 5, 10, math.NaN()},
		{"negative", 1, -1, 5, 10, math.NaN()},
	} {
		got := LogHypergeomSF(tc.k, tc.K, tc.n, tc.N)
		if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("%s: LogHypergeomSF(%d, %d, %d, %d) = %v, want %v", tc.name, tc.k, tc.K, tc.n, tc.N, got, tc.want)
		}
	}
}

func TestAdjustBH(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		p    []float64
		want []float64
	}{
		// Sorted 0.01 0.02 0.03 0.04 0.05 (m = 5): p·m/j = 0.05 for all.
		{"all equal after scaling", []float64{0.05, 0.01, 0.04, 0.02, 0.03}, []float64{0.05, 0.05, 0.05, 0.05, 0.05}},
		// 0.001·4/1 = 0.004; 0.008·4/2 = 0.016; 0.039·4/3 = 0.052; 0.041·4/4 = 0.041,
		// so the third takes the running minimum 0.041 from above.
		{"monotone from above", []float64{0.039, 0.001, 0.041, 0.008}, []float64{0.041, 0.004, 0.041, 0.016}},
		{"capped at 1", []float64{0.9, 0.8}, []float64{0.9, 0.9}},
		{"single", []float64{0.3}, []float64{0.3}},
		// Ties share the adjustment of the largest rank: 0.02·3/3.
		{"ties", []float64{0.02, 0.02, 0.02}, []float64{0.02, 0.02, 0.02}},
		{"zero stays zero", []float64{0, 0.5}, []float64{0, 0.5}},
		{"NaN is no test", []float64{0.01, nan, 0.04}, []float64{0.02, nan, 0.04}},
		{"empty", nil, nil},
	} {
		logp := make([]float64, len(tc.p))
		for i, p := range tc.p {
			logp[i] = math.Log(p)
		}
		logq := AdjustBH(logp)
		for i, want := range tc.want {
			got := math.Exp(logq[i])
			if math.Abs(got-want) > 1e-15 && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("%s: q[%d] = %v, want %v (all %v)", tc.name, i, got, want, logq)
			}
		}
	}
	// Tiny p-values stay exact in log space: 1e-400 is below any double.
	logq := AdjustBH([]float64{-400 * math.Ln10, -399 * math.Ln10})
	if want := math.Log(2) - 400*math.Ln10; math.Abs(logq[0]-want) > 1e-12 {
		t.Errorf("ln q of p = 1e-400 among 2 tests = %v, want ln(2e-400) = %v", logq[0], want)
	}
}

func TestOddsRatioAndCombinedScore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		k, K, n, N int
		want       float64
	}{
		// (k+½)(N-K-n+k+½) / ((K-k+½)(n-k+½)), worked by hand.
		{5, 10, 20, 100, 5.5 * 75.5 / (5.5 * 15.5)},
		{0, 10, 20, 100, 0.5 * 70.5 / (10.5 * 20.5)},
		{10, 10, 10, 100, 10.5 * 90.5 / (0.5 * 0.5)}, // every cell filled only by the correction
	} {
		if got := OddsRatio(tc.k, tc.K, tc.n, tc.N); math.Abs(got-tc.want) > 1e-12*tc.want {
			t.Errorf("OddsRatio(%d, %d, %d, %d) = %v, want %v", tc.k, tc.K, tc.n, tc.N, got, tc.want)
		}
	}
	if got := CombinedScore(-800, 3); got != 2400 {
		t.Errorf("CombinedScore(ln p = -800, OR 3) = %v, want 2400 (finite where p underflows)", got)
	}
}
