package codematch

import (
	"math"
	"math/rand/v2"
	"testing"
)

// splitRHatBySums computes split-R̂ from the analysis-of-variance sums
// (total and within sums of squares), a different route from GelmanRubin's
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
		if got := GelmanRubin(tc.chains); math.Abs(got-tc.want) > 1e-12 && got != tc.want {
			t.Errorf("%s: R̂ = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestGelmanRubinUndefined(t *testing.T) {
	t.Parallel()
	for _, chains := range [][][]float64{nil, {{1, 2, 3}}, {{1, 2, 3, 4}, {1}}, {{}}} {
		if got := GelmanRubin(chains); !math.IsNaN(got) {
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
		got, want := GelmanRubin(chains), splitRHatBySums(chains)
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
	if r := GelmanRubin(mixed); math.Abs(r-1) > 0.01 {
		t.Errorf("iid chains: R̂ = %v, want within 0.01 of 1", r)
	}
	same := [][]float64{mixed[0], mixed[0], mixed[0]}
	if r := GelmanRubin(same); math.Abs(r-1) > 0.01 {
		t.Errorf("identical chains: R̂ = %v, want within 0.01 of 1", r)
	}
	apart := draw(func(c, i int) float64 { return 3 * float64(c) })
	if r := GelmanRubin(apart); r < 2 {
		t.Errorf("chains 3 sd apart: R̂ = %v, want > 2", r)
	}
	// A drift of 4 sd over each chain: half means 1 and 3, W ≈ 1 + 4/12,
	// B/n ≈ 8/7, so R̂ ≈ sqrt(1 + (8/7)/(4/3)) ≈ 1.36; only splitting sees it.
	drift := draw(func(c, i int) float64 { return 4 * float64(i) / n })
	if r := GelmanRubin(drift); math.Abs(r-1.36) > 0.05 {
		t.Errorf("drifting chains: R̂ = %v, want 1.36 ± 0.05", r)
	}
}
