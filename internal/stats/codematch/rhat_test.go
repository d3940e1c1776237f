package codematch

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// gelmanRubin is the classic split-R̂ on the raw draws (Gelman et al.,
// Bayesian Data Analysis, 3rd ed., §11.4), which the tests set beside
// RankRHat. On raw draws it is at the mercy of the draws' scale: chains
// that sit at one state whose log-likelihoods differ in the twelfth digit
// give W ≈ 0 and R̂ in the thousands.
func gelmanRubin(chains [][]float64) float64 {
	halves := splitHalves(chains)
	if halves == nil {
		return math.NaN()
	}
	return splitRHat(halves)
}

// splitRHatBySums computes split-R̂ from the analysis-of-variance sums
// (total and within sums of squares), a different route from gelmanRubin's
// per-half variances: with M half-chains of n draws,
// W = SSW / (M(n-1)) and B/n = (SST - SSW) / (n(M-1)).
func splitRHatBySums(chains [][]float64) float64 {
	n := len(chains[0])
	for _, c := range chains {
		n = min(n, len(c))
	}
	h := n / 2
	var halves [][]float64
	for _, c := range chains {
		halves = append(halves, c[:h], c[n-h:n])
	}
	var all []float64
	ssw := 0.0
	for _, x := range halves {
		s := 0.0
		for _, v := range x {
			s += v
		}
		for _, v := range x {
			ssw += (v - s/float64(h)) * (v - s/float64(h))
		}
		all = append(all, x...)
	}
	grand := 0.0
	for _, v := range all {
		grand += v
	}
	grand /= float64(len(all))
	sst := 0.0
	for _, v := range all {
		sst += (v - grand) * (v - grand)
	}
	M, nf := float64(len(halves)), float64(h)
	w := ssw / (M * (nf - 1))
	bn := (sst - ssw) / (nf * (M - 1))
	return math.Sqrt(((nf-1)/nf*w + bn) / w)
}

func TestGelmanRubinByHand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		chains [][]float64
		want   float64
	}{
		// Halves [1 2] [3 4] [5 6] [7 8], n = 2: W = 1/2; the means 1.5 3.5
		// 5.5 7.5 have variance B/n = 20/3; var+ = W/2 + 20/3 = 83/12; R̂² = 83/6.
		{"two trending chains", [][]float64{{1, 2, 3, 4}, {5, 6, 7, 8}}, math.Sqrt(83.0 / 6)},
		// Halves [0 2] [0 2]: equal means, W = 2, var+ = (1/2)·2 = 1.
		{"one chain, no trend", [][]float64{{0, 2, 0, 2}}, math.Sqrt(0.5)},
		// Odd length drops the middle draw (99): same as {1,2,3,4}.
		{"odd length", [][]float64{{1, 2, 99, 3, 4}}, math.Sqrt((0.25 + 2) / 0.5)},
		// Longer chains are cut to the shortest.
		{"unequal lengths", [][]float64{{1, 2, 3, 4, 1000, -1000}, {5, 6, 7, 8}}, math.Sqrt(83.0 / 6)},
		{"constant", [][]float64{{3, 3, 3, 3}, {3, 3, 3, 3}}, 1},
		{"constant halves that differ", [][]float64{{1, 1, 2, 2}}, math.Inf(1)},
	} {
		if got := gelmanRubin(tc.chains); math.Abs(got-tc.want) > 1e-12 && got != tc.want {
			t.Errorf("%s: R̂ = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestGelmanRubinUndefined(t *testing.T) {
	t.Parallel()
	for _, chains := range [][][]float64{nil, {{1, 2, 3}}, {{1, 2, 3, 4}, {1}}, {{}}} {
		if got := gelmanRubin(chains); !math.IsNaN(got) {
			t.Errorf("GelmanRubin(%v) = %v, want NaN", chains, got)
		}
	}
}

func TestGelmanRubinAgainstSums(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, shape := range []struct{ m, n int }{{1, 4}, {2, 10}, {4, 101}, {3, 1000}} {
		chains := make([][]float64, shape.m)
		for c := range chains {
			off := rng.NormFloat64()
			for range shape.n {
				chains[c] = append(chains[c], off+rng.NormFloat64()*2)
			}
		}
		got, want := gelmanRubin(chains), splitRHatBySums(chains)
		if math.Abs(got-want) > 1e-10*want {
			t.Errorf("%d chains × %d: R̂ = %v, sums give %v", shape.m, shape.n, got, want)
		}
	}
}

// TestGelmanRubinStatistical checks the diagnostic's purpose on draws with
// a fixed seed: well-mixed chains give R̂ ≈ 1, and chains stuck at
// different means or drifting give large values.
func TestGelmanRubinStatistical(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 3))
	const m, n = 4, 2000
	draw := func(mean func(c, i int) float64) [][]float64 {
		chains := make([][]float64, m)
		for c := range chains {
			chains[c] = make([]float64, n)
			for i := range chains[c] {
				chains[c][i] = mean(c, i) + rng.NormFloat64()
			}
		}
		return chains
	}
	mixed := draw(func(c, i int) float64 { return -1e6 }) // a log-likelihood scale offset
	if r := gelmanRubin(mixed); math.Abs(r-1) > 0.01 {
		t.Errorf("iid chains: R̂ = %v, want within 0.01 of 1", r)
	}
	same := [][]float64{mixed[0], mixed[0], mixed[0]}
	if r := gelmanRubin(same); math.Abs(r-1) > 0.01 {
		t.Errorf("identical chains: R̂ = %v, want within 0.01 of 1", r)
	}
	apart := draw(func(c, i int) float64 { return 3 * float64(c) })
	if r := gelmanRubin(apart); r < 2 {
		t.Errorf("chains 3 sd apart: R̂ = %v, want > 2", r)
	}
	// A drift of 4 sd over each chain: half means 1 and 3, W ≈ 1 + 4/12,
	// B/n ≈ 8/7, so R̂ ≈ sqrt(1 + (8/7)/(4/3)) ≈ 1.36; only splitting sees it.
	drift := draw(func(c, i int) float64 { return 4 * float64(i) / n })
	if r := gelmanRubin(drift); math.Abs(r-1.36) > 0.05 {
		t.Errorf("drifting chains: R̂ = %v, want 1.36 ± 0.05", r)
	}
}

// normalScoresRef is the rank-normalisation of Vehtari et al. by another
// route: ranks by counting (ties, exactly equal values, averaged) and Φ⁻¹
// by bisection on math.Erfc.
func normalScoresRef(v []float64) []float64 {
	s := float64(len(v))
	z := make([]float64, len(v))
	for i, x := range v {
		below, equal := 0, 0
		for _, y := range v {
			switch {
			case y < x:
				below++
			case y == x:
				equal++
			}
		}
		r := float64(below) + float64(equal+1)/2
		p := (r - 0.375) / (s + 0.25)
		lo, hi := -10.0, 10.0
		for range 200 {
			mid := (lo + hi) / 2
			if 0.5*math.Erfc(-mid/math.Sqrt2) < p {
				lo = mid
			} else {
				hi = mid
			}
		}
		z[i] = (lo + hi) / 2
	}
	return z
}

// rankRHatRef is RankRHat from normalScoresRef and splitRHatBySums, for
// chains of even length whose distinct values lie further apart than
// Precision.
func rankRHatRef(chains [][]float64) float64 {
	var pooled []float64
	for _, c := range chains {
		pooled = append(pooled, c...)
	}
	cut := func(z []float64) [][]float64 {
		var out [][]float64
		for _, c := range chains {
			out, z = append(out, z[:len(c)]), z[len(c):]
		}
		return out
	}
	sorted := slices.Clone(pooled)
	slices.Sort(sorted)
	n := len(sorted)
	med := (sorted[n/2-1] + sorted[n/2]) / 2
	folded := make([]float64, n)
	for i, x := range pooled {
		folded[i] = math.Abs(x - med)
	}
	return max(splitRHatBySums(cut(normalScoresRef(pooled))), splitRHatBySums(cut(normalScoresRef(folded))))
}

func TestRankRHatAgainstReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, shape := range []struct{ m, n int }{{1, 4}, {2, 10}, {4, 100}, {3, 400}} {
		chains := make([][]float64, shape.m)
		for c := range chains {
			off := rng.NormFloat64()
			for range shape.n {
				// On a grid of 1/1024: exact ties, and distinct values
				// further apart than Precision resolves.
				chains[c] = append(chains[c], math.Round(1024*(off+rng.ExpFloat64()*float64(c+1)))/1024)
			}
		}
		got, want := RankRHat(chains), rankRHatRef(chains)
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("%d chains × %d: rank R̂ = %v, reference %v", shape.m, shape.n, got, want)
		}
	}
}

func TestRankRHatByHand(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	lik := -503483.886664
	for _, tc := range []struct {
		name          string
		chains        [][]float64
		rank, within  float64
		rankSet, wSet bool
	}{
		// The demo's planted data at L = 6: both chains at one state, their
		// log-likelihoods apart in the twelfth digit and drifting in the
		// thirteenth. The classic split-R̂ of these draws is in the
		// thousands; at Precision they are one value.
		{"one state, rounding apart", [][]float64{
			{lik, lik + 4e-7, lik + 4e-7, lik + 5e-7, lik + 5e-7, lik + 5e-7},
			{lik + 3e-6, lik + 3e-6, lik + 3.1e-6, lik + 3.1e-6, lik + 3.1e-6, lik + 3.1e-6}}, 1, 1, true, true},
		{"constant, the same", [][]float64{{3, 3, 3, 3}, {3, 3, 3, 3}}, 1, 1, true, true},
		// Each chain holds its own value: not converged together, but each
		// has settled.
		{"constant, apart", [][]float64{{1, 1, 1, 1}, {2, 2, 2, 2}}, inf, 1, true, true},
		{"halves constant, apart", [][]float64{{1, 1, 2, 2}}, inf, inf, true, true},
		{"too short", [][]float64{{1, 2, 3}}, math.NaN(), math.NaN(), false, false},
		{"not finite", [][]float64{{1, 2, math.NaN(), 4}, {1, 2, 3, 4}}, math.NaN(), math.NaN(), false, false},
	} {
		got, gotW := RankRHat(tc.chains), WithinRHat(tc.chains)
		ok := func(got, want float64, set bool) bool {
			if !set {
				return math.IsNaN(got)
			}
			return got == want || math.Abs(got-want) < 1e-12
		}
		if !ok(got, tc.rank, tc.rankSet) || !ok(gotW, tc.within, tc.wSet) {
			t.Errorf("%s: rank R̂ %v, within %v; want %v, %v", tc.name, got, gotW, tc.rank, tc.within)
		}
		if tc.name == "one state, rounding apart" && gelmanRubin(tc.chains) < 2 {
			t.Errorf("%s: the classic split-R̂ is %v; the case no longer shows what it was made for", tc.name, gelmanRubin(tc.chains))
		}
	}
}

// TestRankRHatStatistical checks what each diagnostic sees on draws with
// a fixed seed: mixed chains give ≈ 1; chains apart or drifting give large
// values; chains that differ only in spread are seen by the folded draws;
// chains that each settled at their own level are seen by RankRHat and
// not by WithinRHat; and neither depends on the draws' scale.
func TestRankRHatStatistical(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	const m, n = 4, 2000
	draw := func(mean, sd func(c, i int) float64) [][]float64 {
		chains := make([][]float64, m)
		for c := range chains {
			chains[c] = make([]float64, n)
			for i := range chains[c] {
				chains[c][i] = mean(c, i) + sd(c, i)*rng.NormFloat64()
			}
		}
		return chains
	}
	one := func(c, i int) float64 { return 1 }
	for _, tc := range []struct {
		name               string
		chains             [][]float64
		rankLo, rankHi     float64
		withinLo, withinHi float64
	}{
		{"mixed", draw(func(c, i int) float64 { return -1e6 }, one), 0.99, 1.01, 0.99, 1.01},
		{"apart", draw(func(c, i int) float64 { return 3 * float64(c) }, one), 2, math.Inf(1), 0.99, 1.01},
		{"drifting", draw(func(c, i int) float64 { return 4 * float64(i) / n }, one), 1.2, 2, 1.2, 2},
		{"spread differs", draw(func(c, i int) float64 { return 0 }, func(c, i int) float64 { return float64(1 + 2*(c%2)) }), 1.1, 2, 0.99, 1.01},
		{"a slow drift in a long chain", draw(func(c, i int) float64 { return float64(i) / n }, one), 1.02, 1.2, 1.02, 1.2},
	} {
		r, w := RankRHat(tc.chains), WithinRHat(tc.chains)
		if r < tc.rankLo || r > tc.rankHi || w < tc.withinLo || w > tc.withinHi {
			t.Errorf("%s: rank R̂ %v (want %v…%v), within %v (want %v…%v)", tc.name, r, tc.rankLo, tc.rankHi, w, tc.withinLo, tc.withinHi)
		}
		scaled := make([][]float64, len(tc.chains))
		for c, ch := range tc.chains {
			for _, v := range ch {
				scaled[c] = append(scaled[c], v/1024)
			}
		}
		if r2, w2 := RankRHat(scaled), WithinRHat(scaled); r2 != r || w2 != w {
			t.Errorf("%s: scaled, rank R̂ %v → %v, within %v → %v", tc.name, r, r2, w, w2)
		}
	}
}
