package codematch

import "math"

// GelmanRubin returns the split-R̂ of a scalar quantity traced by several
// chains (Gelman et al., Bayesian Data Analysis, 3rd ed., §11.4): each chain
// is cut into a first and a second half (the middle draw of an odd-length
// chain is dropped), and the classic potential scale reduction factor is
// computed over the 2m half-chains of n draws each:
//
//	W   = mean of the half-chains' sample variances (divisor n-1)
//	B/n = sample variance of the half-chains' means (divisor 2m-1)
//	R̂  = sqrt(((n-1)/n · W + B/n) / W)
//
// Splitting makes R̂ detect a trend within a chain as well as chains that
// disagree, and gives a value even for a single chain. R̂ near 1 means the
// chains mix; values above about 1.01–1.1 mean they have not converged.
//
// Chains longer than the shortest are cut to its length (their first
// draws are used). The result is NaN when there are no chains or fewer than
// four draws per chain (halves of fewer than two draws); 1 when every draw
// is equal; +Inf when each half-chain is constant but their values differ.
func GelmanRubin(chains [][]float64) float64 {
	if len(chains) == 0 {
		return math.NaN()
	}
	n := len(chains[0])
	for _, c := range chains {
		n = min(n, len(c))
	}
	half := n / 2
	if half < 2 {
		return math.NaN()
	}
	var halves [][]float64
	for _, c := range chains {
		c = c[:n]
		halves = append(halves, c[:half], c[n-half:])
	}
	means := make([]float64, len(halves))
	w := 0.0
	for j, h := range halves {
		means[j] = mean(h)
		w += variance(h, means[j])
	}
	w /= float64(len(halves))
	bOverN := variance(means, mean(means))
	if w == 0 {
		if bOverN == 0 {
			return 1
		}
		return math.Inf(1)
	}
	nf := float64(half)
	// The conversions forbid fused multiply-adds, so that every build
	// rounds alike (summary.tsv is compared bit for bit across runs).
	return math.Sqrt((float64((nf-1)/nf*w) + bOverN) / w)
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// variance is the sample variance of x about mu, with divisor len(x)-1.
func variance(x []float64, mu float64) float64 {
	s := 0.0
	for _, v := range x {
		s += float64((v - mu) * (v - mu))
	}
	return s / float64(len(x)-1)
}
