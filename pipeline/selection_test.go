package pipeline

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestConverged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		agree []float64
		rhat  float64
		want  string
	}{
		{[]float64{1}, math.NaN(), ""},
		{[]float64{1, 0.95}, 1.02, "yes"},
		{[]float64{1, 0.95, 0.89}, 1.02, "no"},
		{[]float64{1, 0.99}, 1.1, "no"},
		{[]float64{1, 0.99}, math.NaN(), ""},
	} {
		if got := Converged(tc.agree, tc.rhat); got != tc.want {
			t.Errorf("Converged(%v, %v) = %q, want %q", tc.agree, tc.rhat, got, tc.want)
		}
	}
}

// TestRecommendL checks the one-standard-error rule on per-cell held-out
// scores: a smaller L within one standard error of the best is chosen, one
// clearly worse is not, whatever the map's order.
func TestRecommendL(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	const cells = 2000
	base := make([]float32, cells)
	for i := range base {
		base[i] = float32(-20 + 3*r.NormFloat64())
	}
	// shift returns base moved per cell by noise of sd whose mean over the
	// cells is exactly d, so that each case's answer is fixed.
	shift := func(d, sd float64) []float32 {
		noise := make([]float64, cells)
		m := 0.0
		for i := range noise {
			noise[i] = sd * r.NormFloat64()
			m += noise[i] / cells
		}
		v := make([]float32, cells)
		for i := range v {
			v[i] = base[i] + float32(d+noise[i]-m)
		}
		return v
	}
	for _, tc := range []struct {
		name string
		per  map[int][]float32
		want int
	}{
		{"nothing held out", map[int][]float32{}, 0},
		{"more codes help until 4", map[int][]float32{2: shift(-2, 1), 3: shift(-1, 1), 4: shift(0, 1), 5: shift(0.001, 1), 6: shift(-0.002, 1)}, 4},
		{"flat: the smallest", map[int][]float32{2: shift(0, 0.5), 3: shift(0.001, 0.5), 4: shift(0.002, 0.5)}, 2},
		{"best is the largest", map[int][]float32{2: shift(-3, 1), 3: shift(-2, 1), 4: shift(-1, 1), 5: shift(0, 1)}, 5},
	} {
		for range 5 { // maps iterate in a different order each time
			if got := RecommendL(tc.per); got != tc.want {
				t.Errorf("%s: RecommendL = %d, want %d", tc.name, got, tc.want)
				break
			}
		}
	}
	// Past the elbow: 6 captures 98% of the gain from 2; 8 is better by
	// many standard errors but by under 5% of the gain, so 6.
	per := map[int][]float32{2: shift(-4, 0.2), 4: shift(-1, 0.2), 6: shift(-0.08, 0.2), 8: shift(0, 0.2)}
	if got := RecommendL(per); got != 6 {
		t.Errorf("elbow: RecommendL = %d, want 6", got)
	}
}
