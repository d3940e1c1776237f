package bernoulli

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestEachRate(t *testing.T) {
	for _, p := range []float64{-1, 0, 0.001, 0.05, 0.5, 0.999, 1, 2} {
		const n = 200_000
		r := rand.New(rand.NewPCG(7, 8))
		last, hits := -1, 0
		Each(n, p, r, func(i int) {
			if i <= last || i >= n {
				t.Fatalf("p=%v: index %d after %d (n=%d)", p, i, last, n)
			}
			last = i
			hits++
		})
		q := min(max(p, 0), 1)
		mean, sd := n*q, math.Sqrt(n*q*(1-q))
		if math.Abs(float64(hits)-mean) > 5*sd+1e-9 {
			t.Errorf("p=%v: %d hits, want %.0f ± %.0f", p, hits, mean, 5*sd)
		}
	}
}

func TestEachUniformPositions(t *testing.T) {
	// Every index is equally likely: compare the hits in the two halves.
	const n, p, reps = 1000, 0.1, 2000
	r := rand.New(rand.NewPCG(1, 2))
	var lo, hi float64
	for range reps {
		Each(n, p, r, func(i int) {
			if i < n/2 {
				lo++
			} else {
				hi++
			}
		})
	}
	if sd := math.Sqrt(lo + hi); math.Abs(lo-hi) > 5*sd {
		t.Errorf("first half %v hits, second half %v", lo, hi)
	}
}

// TestEachWhileStops: EachWhile hands out what Each does, in order, until
// hit returns false, and nothing after.
func TestEachWhileStops(t *testing.T) {
	for _, p := range []float64{0.05, 0.5, 1} {
		var all []int
		Each(10_000, p, rand.New(rand.NewPCG(3, 4)), func(i int) { all = append(all, i) })
		for _, stop := range []int{0, 1, len(all) / 2, len(all)} {
			var got []int
			EachWhile(10_000, p, rand.New(rand.NewPCG(3, 4)), func(i int) bool {
				got = append(got, i)
				return len(got) < stop
			})
			want := all[:min(max(stop, 1), len(all))]
			if len(got) != len(want) || len(got) > 0 && got[len(got)-1] != want[len(want)-1] {
				t.Errorf("p=%v, stop after %d: %d hits ending %v, want %d", p, stop, len(got), got[len(got)-1:], len(want))
			}
		}
	}
}
