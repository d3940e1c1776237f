package codematch

import (
	"math"
	"slices"
)

// splitHalves cuts each chain, shortened to the shortest, into its first
// and second half (dropping the middle draw of an odd length): 2m slices
// of equal length, views of the chains. It is nil when there are no chains
// or the halves would hold fewer than two draws.
func splitHalves(chains [][]float64) [][]float64 {
	if len(chains) == 0 {
		return nil
	}
	n := len(chains[0])
	for _, c := range chains {
		n = min(n, len(c))
	}
	half := n / 2
	if half < 2 {
		return nil
	}
	halves := make([][]float64, 0, 2*len(chains))
	for _, c := range chains {
		halves = append(halves, c[:half:half], c[n-half:n:n])
	}
	return halves
}

// splitRHat is the classic potential scale reduction factor (Gelman et
// al., Bayesian Data Analysis, 3rd ed., §11.4) of 2m half-chains of n
// draws each (at least two), the halves of m chains (splitHalves):
//
//	W   = mean of the half-chains' sample variances (divisor n-1)
//	B/n = sample variance of the half-chains' means (divisor 2m-1)
//	R̂  = sqrt(((n-1)/n · W + B/n) / W)
//
// Splitting makes R̂ detect a trend within a chain as well as chains that
// disagree, and gives a value even for a single chain. It is 1 when every
// draw is equal, +Inf when each half is constant but their values differ.
func splitRHat(halves [][]float64) float64 {
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
	nf := float64(len(halves[0]))
	// The conversions forbid fused multiply-adds, so that every build
	// rounds alike (summary.tsv is compared bit for bit across runs).
	return math.Sqrt((float64((nf-1)/nf*w) + bOverN) / w)
}

// precision is the relative resolution at which RankRHat and
// WithinRHat compare draws: two draws closer than precision times the
// largest magnitude among the draws are the same value. A fit's
// log-likelihood is a sum over millions of entries, whose last digits
// depend on the order of the codes, and its rates come from searches that
// stop at a width of 1e-9; chains at the same state give draws that differ
// there (1e-11 to 1e-8 relative on the demo's planted data), and without a
// resolution that difference would rank as a disagreement. A millionth is
// far above those errors and far below the spread of a chain that moves
// (hundreds of nats in a log-likelihood of a million).
const precision = 1e-6

// RankRHat returns the rank-normalised split-R̂ of a scalar quantity traced
// by several chains (Vehtari, Gelman, Simpson, Carpenter and Bürkner,
// Bayesian Analysis 16(2), 2021): the larger of
//
//   - bulk-R̂: split-R̂ (splitRHat) of the normal scores of the draws'
//     ranks, z = Φ⁻¹((r − 3/8) / (S + 1/4)) over all S draws of the 2m
//     halves pooled, and
//   - tail-R̂: the same of the folded draws |θ − median θ|, which sees
//     chains that differ in spread rather than location.
//
// Ranks make R̂ blind to the scale and the outliers of the draws, and
// well defined for any distribution. Draws equal at precision (see
// there) tie and share their mean rank, so that chains constant at one
// value give 1, and chains constant at different values +Inf (each half
// has no spread, but the halves differ): a quantity the chains hold fixed
// has converged only when they hold it at the same value. The result is
// NaN when there are no chains, fewer than four draws per chain (halves
// of fewer than two), or a draw is NaN or infinite.
func RankRHat(chains [][]float64) float64 {
	halves := splitHalves(chains)
	if halves == nil || !allFinite(halves) {
		return math.NaN()
	}
	tol := precision * maxAbs(halves)
	pooled := slices.Concat(halves...)
	bulk := normalScores(pooled, tol)
	tail := normalScores(folded(pooled, tol), tol)
	return max(splitRHat(reslice(bulk, halves)), splitRHat(reslice(tail, halves)))
}

// WithinRHat returns the rank-normalised split-R̂ of each chain against
// itself: RankRHat with the draws ranked (and folded about the median)
// within each chain rather than pooled, so that where each chain sits does
// not count, only whether its first half and its second half agree. It
// asks whether every chain has reached a level (a chain still drifting
// from its start gives a large value) and leaves whether the chains reached
// the same one to a comparison that suits the question (for codes, the
// agreement of the matched gene sets). It is NaN as RankRHat is.
func WithinRHat(chains [][]float64) float64 {
	halves := splitHalves(chains)
	if halves == nil || !allFinite(halves) {
		return math.NaN()
	}
	tol := precision * maxAbs(halves)
	bulk := make([][]float64, 0, len(halves))
	tail := make([][]float64, 0, len(halves))
	for c := 0; c < len(halves); c += 2 {
		draws := slices.Concat(halves[c], halves[c+1])
		two := halves[c : c+2]
		bulk = append(bulk, reslice(normalScores(draws, tol), two)...)
		tail = append(tail, reslice(normalScores(folded(draws, tol), tol), two)...)
	}
	return max(splitRHat(bulk), splitRHat(tail))
}

// reslice cuts v into consecutive slices as long as those of like.
func reslice(v []float64, like [][]float64) [][]float64 {
	out := make([][]float64, len(like))
	for i, l := range like {
		out[i], v = v[:len(l):len(l)], v[len(l):]
	}
	return out
}

func allFinite(halves [][]float64) bool {
	for _, h := range halves {
		for _, v := range h {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}

func maxAbs(halves [][]float64) float64 {
	m := 0.0
	for _, h := range halves {
		for _, v := range h {
			m = max(m, math.Abs(v))
		}
	}
	return m
}

// tieGroups orders the indices of v by value and cuts them into groups of
// values equal within tol: each group starts at the smallest value not yet
// grouped and takes every value at most tol above it, so that a group
// spans at most tol however many draws fall in it. It returns the order
// and, for each position in it, the index of the first position of its
// group.
func tieGroups(v []float64, tol float64) (order, start []int) {
	order = make([]int, len(v))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	start = make([]int, len(v))
	for i := 0; i < len(order); {
		j := i
		for j < len(order) && v[order[j]]-v[order[i]] <= tol {
			start[j] = i
			j++
		}
		i = j
	}
	return order, start
}

// folded returns |v − median v| with the values first snapped to their
// tie group's smallest value (tieGroups), so that draws equal at tol fold
// to the same distance.
func folded(v []float64, tol float64) []float64 {
	order, start := tieGroups(v, tol)
	snapped := make([]float64, len(v))
	for pos, i := range order {
		snapped[i] = v[order[start[pos]]]
	}
	s := len(order)
	var med float64
	if s%2 == 1 {
		med = snapped[order[s/2]]
	} else {
		med = snapped[order[s/2-1]]/2 + snapped[order[s/2]]/2
	}
	out := make([]float64, len(v))
	for i, x := range snapped {
		out[i] = math.Abs(x - med)
	}
	return out
}

// normalScores returns the rank-based normal scores of v (Blom's
// offsets, as Vehtari et al.): z = Φ⁻¹((r − 3/8) / (S + 1/4)) for the
// rank r of each value among the S values, tied values (equal within
// tol) taking the mean rank of their group.
func normalScores(v []float64, tol float64) []float64 {
	order, start := tieGroups(v, tol)
	s := float64(len(v))
	z := make([]float64, len(v))
	for pos := 0; pos < len(order); {
		end := pos
		for end < len(order) && start[end] == start[pos] {
			end++
		}
		// Ranks pos+1 … end share their mean.
		r := float64(pos+1+end) / 2
		p := (r - 0.375) / (s + 0.25)
		score := math.Sqrt2 * math.Erfinv(float64(2*p)-1)
		for _, i := range order[pos:end] {
			z[i] = score
		}
		pos = end
	}
	return z
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
