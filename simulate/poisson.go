package simulate

import (
	"math"
	"math/rand/v2"
)

// ptrsFrom is the mean from which poisson switches from inversion, whose
// cost grows with the mean, to transformed rejection, whose cost does not.
const ptrsFrom = 10

// poisson draws from the Poisson distribution with mean lam ≥ 0.
func poisson(lam float64, r *rand.Rand) uint32 {
	if lam < ptrsFrom {
		return poissonInversion(lam, r)
	}
	return poissonPTRS(lam, r)
}

// zeroTruncatedPoisson draws from the Poisson distribution with mean lam > 0
// conditioned on being at least 1: the count of an entry known to be
// detected.
func zeroTruncatedPoisson(lam float64, r *rand.Rand) uint32 {
	if lam >= ptrsFrom {
		// P(0) < 5e-5: rejection costs nothing.
		for {
			if k := poissonPTRS(lam, r); k > 0 {
				return k
			}
		}
	}
	// Inversion over P(k | k ≥ 1) = e^−λ λ^k / k! / (1 − e^−λ), whose first
	// term λ e^−λ / (1 − e^−λ) stays accurate as λ → 0.
	u := r.Float64()
	p := lam * math.Exp(-lam) / -math.Expm1(-lam)
	cdf := p
	k := uint32(1)
	for u > cdf && k < 1000 {
		k++
		p *= lam / float64(k)
		cdf += p
	}
	return k
}

// poissonInversion walks the cumulative distribution from 0; the expected
// number of steps is 1 + lam. The bound on k only guards against the
// rounding of cdf short of 1.
func poissonInversion(lam float64, r *rand.Rand) uint32 {
	u := r.Float64()
	p := math.Exp(-lam)
	cdf := p
	k := uint32(0)
	for u > cdf && k < 1000 {
		k++
		p *= lam / float64(k)
		cdf += p
	}
	return k
}

// poissonPTRS is Hörmann's transformed rejection with squeeze ("The
// transformed rejection method for generating Poisson random variables",
// Insurance: Mathematics and Economics 12, 1993), valid for lam ≥ 10; it
// accepts about 90% of proposals whatever lam.
func poissonPTRS(lam float64, r *rand.Rand) uint32 {
	slam, loglam := math.Sqrt(lam), math.Log(lam)
	b := 0.931 + 2.53*slam
	a := -0.059 + 0.02483*b
	invAlpha := 1.1239 + 1.1328/(b-3.4)
	vr := 0.9277 - 3.6224/(b-2)
	for {
		u := r.Float64() - 0.5
		v := r.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + lam + 0.43)
		if us >= 0.07 && v <= vr {
			return uint32(k)
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		lg, _ := math.Lgamma(k + 1)
		if math.Log(v)+math.Log(invAlpha)-math.Log(a/(us*us)+b) <= -lam+k*loglam-lg {
			return uint32(k)
		}
	}
}
