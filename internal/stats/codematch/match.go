package codematch

import "math"

// Matching pairs the codes of a fit b with those of a reference fit a.
type Matching struct {
	// To[k] is the code of a matched to code k of b, or -1 when b has more
	// codes than a and code k was left over.
	To []int
	// Agreement[k] is Jaccard(a[To[k]], b[k]); 0 for a left-over code.
	Agreement []float64
}

// Mean returns the mean agreement over the codes of b, left-over codes
// counting 0; 1 when every code of b has the same MAP set as its match. It
// is NaN when b has no codes.
func (m Matching) Mean() float64 {
	if len(m.Agreement) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range m.Agreement {
		s += x
	}
	return s / float64(len(m.Agreement))
}

// Match matches the codes of fit b to those of fit a one-to-one, so that the
// sum of the Jaccard indices of the matched MAP sets is largest (Hungarian
// assignment on 1 - Jaccard). a and b may have different numbers of codes.
func Match(a, b []Set) Matching {
	J := Overlap(b, a) // rows: codes of b
	cost := make([][]float64, len(J))
	for k, row := range J {
		cost[k] = make([]float64, len(row))
		for i, x := range row {
			cost[k][i] = 1 - x
		}
	}
	m := Matching{To: hungarian(cost), Agreement: make([]float64, len(b))}
	for k, i := range m.To {
		if i >= 0 {
			m.Agreement[k] = J[k][i]
		}
	}
	return m
}

// ChainAgreement returns, for each chain of one L, the mean matched
// agreement (Matching.Mean) of its codes with those of chains[0]; the first
// entry is 1 unless chain 1 has no codes.
func ChainAgreement(chains [][]Set) []float64 {
	agree := make([]float64, len(chains))
	for c, sets := range chains {
		agree[c] = Match(chains[0], sets).Mean()
	}
	return agree
}

// Parents links the codes of a finer fit (more codes) to those of a coarser
// one, the edges of the hierarchy of codes across L. parent[k] is the code
// of coarse that holds the largest fraction of the genes of fine[k]
// (containment |c∩f| / |f|, which is 1 when a code splits into parts), ties
// going to the larger Jaccard and then to the lower index; contained[k] is
// that fraction. A fine code with no genes, or sharing none with any
// coarse code, has parent -1 and containment 0. Unlike Match, several fine
// codes may share a parent.
func Parents(coarse, fine []Set) (parent []int, contained []float64) {
	parent = make([]int, len(fine))
	contained = make([]float64, len(fine))
	for k, f := range fine {
		parent[k] = -1
		size := f.Len()
		bestJ := -1.0
		for i, c := range coarse {
			inter, union := counts(c, f)
			if inter == 0 {
				continue
			}
			frac := float64(inter) / float64(size)
			j := float64(inter) / float64(union)
			if frac > contained[k] || (frac == contained[k] && j > bestJ) {
				parent[k], contained[k], bestJ = i, frac, j
			}
		}
	}
	return parent, contained
}
