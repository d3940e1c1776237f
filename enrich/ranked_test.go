package enrich

import (
	"math"
	"slices"
	"testing"
)

func TestRankGenes(t *testing.T) {
	symbols := []string{"D", "C", "B", "A"}
	for _, c := range []struct {
		name  string
		score []float64
		mean  []float64
		want  []int
	}{
		{"by score", []float64{0.1, 0.9, 0.5, -0.2}, []float64{1, 0, 0, 1}, []int{1, 2, 0, 3}},
		{"equal scores by posterior mean", []float64{0.5, 0.5, 0.5, 0.9}, []float64{0.2, 0.7, 0.4, 0}, []int{3, 1, 2, 0}},
		{"then by symbol, not file order", []float64{0.5, 0.5, 0.5, 0.5}, []float64{1, 1, 1, 1}, []int{3, 2, 1, 0}},
		{"no scores: posterior mean, then symbol", nil, []float64{1, 0.5, 1, 0.2}, []int{2, 0, 1, 3}},
	} {
		got := rankedGenes(RankGenes(c.score, c.mean, nil, symbols))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFDRSet(t *testing.T) {
	for _, c := range []struct {
		name     string
		mean     []float64
		hk       []bool
		alpha    float64
		want     []int // in rank order (score = −index here)
		wantRate float64
	}{
		{"stops where the mean of 1 − p passes alpha", []float64{1, 1, 0.9, 0.8, 0.5}, nil, 0.05, []int{0, 1, 2}, 0.1 / 3},
		{"a larger alpha takes more", []float64{1, 1, 0.9, 0.8, 0.5}, nil, 0.1, []int{0, 1, 2, 3}, 0.3 / 4},
		{"nothing certain enough", []float64{0.6, 0.5}, nil, 0.05, []int{}, 0},
		{"a run of equal means whole or not at all", []float64{1, 0.92, 0.92}, nil, 0.05, []int{0}, 0},
		{"housekeeping genes left out", []float64{1, 1, 0.5, 0.5}, []bool{false, false, true, true}, 0.3, []int{0, 1}, 0},
		{"order of the ranking, not of the means", []float64{0.96, 1, 0.99}, nil, 0.05, []int{0, 1, 2}, 0.05 / 3},
	} {
		score := make([]float64, len(c.mean))
		symbols := make([]string, len(c.mean))
		for g := range score {
			score[g], symbols[g] = -float64(g), string(rune('a'+g))
		}
		set, rate := fdrSet(RankGenes(score, c.mean, c.hk, symbols), c.alpha)
		if !slices.Equal(set, c.want) || math.Abs(rate-c.wantRate) > 1e-12 {
			t.Errorf("%s: %v at %v, want %v at %v", c.name, set, rate, c.want, c.wantRate)
		}
	}
}
