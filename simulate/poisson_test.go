package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// poissonPMF returns P(K = k) for K ~ Poisson(lam).
func poissonPMF(lam float64, k int) float64 {
	lg, _ := math.Lgamma(float64(k) + 1)
	return math.Exp(-lam + float64(k)*math.Log(lam) - lg)
}

// chiSquare compares the histogram of draws with the probabilities pmf(k),
// pooling the tails so that every cell expects at least 20 draws, and
// returns the statistic and its degrees of freedom.
func chiSquare(hist map[int]int, draws int, pmf func(int) float64, lo int) (float64, int) {
	var stat float64
	cells := 0
	var obs, exp float64
	k := lo
	for covered := 0.0; covered < 1-1e-12 && k < lo+100000; k++ {
		p := pmf(k)
		covered += p
		obs += float64(hist[k])
		exp += p * float64(draws)
		if exp >= 20 {
			stat += (obs - exp) * (obs - exp) / exp
			cells++
			obs, exp = 0, 0
		}
	}
	// The remaining tail, including draws beyond k.
	for kk, c := range hist {
		if kk >= k {
			obs += float64(c)
		}
	}
	if exp > 0 {
		stat += (obs - exp) * (obs - exp) / max(exp, 1)
		cells++
	}
	return stat, cells - 1
}

func TestPoissonDistribution(t *testing.T) {
	t.Parallel()
	const draws = 200_000
	for _, lam := range []float64{1e-4, 0.05, 0.7, 3, 9.99, 10, 37.5, 450} {
		for _, truncated := range []bool{false, true} {
			t.Run(fmt.Sprintf("lam=%v/truncated=%v", lam, truncated), func(t *testing.T) {
				t.Parallel()
				r := rand.New(rand.NewPCG(uint64(lam*1000), 3))
				hist := map[int]int{}
				for range draws {
					var k uint32
					if truncated {
						k = zeroTruncatedPoisson(lam, r)
					} else {
						k = poisson(lam, r)
					}
					hist[int(k)]++
				}
				pmf := func(k int) float64 { return poissonPMF(lam, k) }
				lo := 0
				if truncated {
					if hist[0] > 0 {
						t.Fatalf("%d zeros from the zero-truncated draw", hist[0])
					}
					norm := -math.Expm1(-lam)
					pmf = func(k int) float64 { return poissonPMF(lam, k) / norm }
					lo = 1
				}
				// The mean, to 5 standard errors: sharper than χ² against a
				// shift.
				mean, second := lam, lam+lam*lam
				if truncated {
					mean, second = mean/-math.Expm1(-lam), second/-math.Expm1(-lam)
				}
				var sum float64
				for k, c := range hist {
					sum += float64(k) * float64(c)
				}
				if se := math.Sqrt((second - mean*mean) / draws); math.Abs(sum/draws-mean) > 5*se {
					t.Errorf("mean %.5f, want %.5f ± %.5f", sum/draws, mean, 5*se)
				}
				stat, df := chiSquare(hist, draws, pmf, lo)
				if df == 0 {
					// One cell holds (nearly) everything: the distribution is
					// a point mass at lo, as for tiny lam truncated.
					if hist[lo] < draws-20 {
						t.Errorf("%d of %d draws at %d", hist[lo], draws, lo)
					}
					return
				}
				// Mean df, sd √(2 df): 6 sd is a false alarm of about 1e-6.
				if limit := float64(df) + 6*math.Sqrt(2*float64(df)); stat > limit {
					t.Errorf("χ² = %.1f over %d degrees of freedom (limit %.1f)", stat, df, limit)
				}
			})
		}
	}
}
