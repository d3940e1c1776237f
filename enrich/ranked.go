package enrich

import (
	"cmp"
	"slices"
	"strings"
)

// Ranked is one gene of a program's ranking: its consensus score and
// posterior mean (each averaged over the matched chains).
type Ranked struct {
	Gene         int
	Score, Mean  float64
	Housekeeping bool // in the fit's housekeeping code (consensus)
}

// RankGenes orders every gene for one program: by score (the fit's
// specificity of the gene to the program's cells, codes.parquet's score_k),
// then posterior mean, then symbol, so that no tie falls back to the
// order of the input file. Runs written before scores existed (score nil)
// rank by posterior mean, then symbol. hk, when not nil, marks the genes
// of the housekeeping code, which are ranked too. enrich, report and
// export all list a program's genes in this order.
func RankGenes(score, mean []float64, hk []bool, symbols []string) []Ranked {
	r := make([]Ranked, len(mean))
	for g := range r {
		r[g] = Ranked{Gene: g, Mean: mean[g], Housekeeping: hk != nil && hk[g]}
		if score != nil {
			r[g].Score = score[g]
		}
	}
	slices.SortFunc(r, func(a, b Ranked) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(b.Mean, a.Mean),
			strings.Compare(symbols[a.Gene], symbols[b.Gene]), cmp.Compare(a.Gene, b.Gene))
	})
	return r
}

// fdrSet returns the largest set of genes whose expected false discovery
// proportion under the posterior, the mean of 1 − P(gene in program) over
// the set, is at most alpha (Newton, Noueiry, Sarkar and Ahlquist,
// Biostatistics 2004), and that proportion. The set takes genes in
// decreasing posterior mean and never splits a run of equal means.
// Genes of the housekeeping code are left out, as from the MAP sets:
// their membership is not identified (every program's bit for them leaves
// the likelihood unchanged, so it stays at the prior). The set is in
// ranks' order (score first).
func fdrSet(ranks []Ranked, alpha float64) ([]int, float64) {
	cand := make([]Ranked, 0, len(ranks))
	for _, r := range ranks {
		if !r.Housekeeping {
			cand = append(cand, r)
		}
	}
	slices.SortStableFunc(cand, func(a, b Ranked) int { return cmp.Compare(b.Mean, a.Mean) })
	size, rate, sum := 0, 0.0, 0.0
	for i, r := range cand {
		sum += 1 - r.Mean
		if i+1 < len(cand) && cand[i+1].Mean == r.Mean {
			continue // a run of equal means is taken whole or not at all
		}
		if sum > alpha*float64(i+1) {
			break // the mean of 1 − p only grows as p falls
		}
		size, rate = i+1, sum/float64(i+1)
	}
	in := make(map[int]bool, size)
	for _, r := range cand[:size] {
		in[r.Gene] = true
	}
	set := make([]int, 0, size)
	for _, r := range ranks {
		if in[r.Gene] {
			set = append(set, r.Gene)
		}
	}
	return set, rate
}

// rankedGenes returns the genes of r, in its order.
func rankedGenes(r []Ranked) []int {
	out := make([]int, len(r))
	for i, x := range r {
		out[i] = x.Gene
	}
	return out
}
