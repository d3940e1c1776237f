package codematch

import (
	"math"
	"slices"
)

// A consensus of chains, as cNMF builds one from its replicates: where the
// chains of one L settle in different modes, the programs that most of
// them found are the result, each with the fraction of chains that found
// it, and a program one chain found alone is dropped.

// Thresholds of a consensus that reproduces (Reproduces).
const (
	// ReproducibleDecision is the probability with which another set of as
	// many chains must repeat each of the consensus's decisions to keep or
	// drop a program.
	ReproducibleDecision = 0.9
	// ReproducibleJaccard is the expected Jaccard index between a kept
	// program's gene set and the one another set of chains would give it.
	ReproducibleJaccard = 0.9
)

// Cluster is one program of a consensus: the codes of the chains that
// found it, at most one per chain.
type Cluster struct {
	// Codes[c] is the 0-based code of chain c in the program, or -1 when
	// chain c did not find it.
	Codes []int
	// Genes is the program's consensus gene set: the genes in at least half
	// of its codes' sets.
	Genes Set
	// Found counts the chains that found it; Frequency is Found over the
	// chains.
	Found     int
	Frequency float64
	// Kept says whether most chains (more than half) found it.
	Kept bool
	// Agreement is the mean Jaccard index of its codes' sets with Genes.
	Agreement float64
	// Repeat is the probability that another set of as many chains repeats
	// the decision to keep (or drop) it, were each to find it with
	// probability Frequency: P(Binomial(chains, Frequency) > chains/2) for a
	// kept program, its complement for a dropped one.
	Repeat float64
	// ExpectedJaccard is the expected Jaccard index between Genes and the
	// set another Found codes would give, were each to hold gene g with the
	// fraction of this program's codes that hold it (geneJaccard).
	ExpectedJaccard float64
}

// Consensus clusters the programs of the chains of one L (one slice of
// gene sets per chain, such as ProgramSets gives; an empty set is no
// program). The chains are taken in order: each one's non-empty codes are
// matched one-to-one (Match) to the consensus sets of the programs found
// so far, a code joining its match where their Jaccard index is at least
// StableJaccard (the same program seen twice) and starting a program of
// its own otherwise. The programs come back kept first, then by
// decreasing frequency, then by decreasing size, then in the order found:
// an order that depends on the chains' codes, not on how each chain
// numbered them.
func Consensus(chains [][]Set) []Cluster {
	C := len(chains)
	var cl []Cluster
	var reps []Set
	for c, sets := range chains {
		var codes []int
		var own []Set
		for k, s := range sets {
			if s.Len() > 0 {
				codes, own = append(codes, k), append(own, s)
			}
		}
		m := Match(reps, own)
		for i, k := range codes {
			to := m.To[i]
			if to < 0 || m.Agreement[i] < StableJaccard {
				to = len(cl)
				cl = append(cl, Cluster{Codes: slices.Repeat([]int{-1}, C)})
				reps = append(reps, nil)
			}
			cl[to].Codes[c] = k
		}
		for i := range cl {
			reps[i] = majority(chains, cl[i].Codes)
		}
	}
	for i := range cl {
		cl[i].finish(chains, reps[i])
	}
	order := make([]int, len(cl))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := &cl[a], &cl[b]
		switch {
		case x.Kept != y.Kept:
			if x.Kept {
				return -1
			}
			return 1
		case x.Found != y.Found:
			return y.Found - x.Found
		}
		return y.Genes.Len() - x.Genes.Len()
	})
	out := make([]Cluster, len(cl))
	for i, k := range order {
		out[i] = cl[k]
	}
	return out
}

// majority returns the genes in at least half of the sets codes names
// (codes[c]: a code of chains[c], or -1).
func majority(chains [][]Set, codes []int) Set {
	var members []Set
	for c, k := range codes {
		if k >= 0 {
			members = append(members, chains[c][k])
		}
	}
	if len(members) == 0 {
		return nil
	}
	out := make(Set, len(members[0]))
	for w := range out {
		for b := range 64 {
			votes := 0
			for _, s := range members {
				if w < len(s) && s[w]>>b&1 != 0 {
					votes++
				}
			}
			if votes > 0 && 2*votes >= len(members) {
				out[w] |= 1 << b
			}
		}
	}
	return out
}

// finish sets the cluster's consensus set and its statistics.
func (cl *Cluster) finish(chains [][]Set, genes Set) {
	C := len(chains)
	cl.Genes = genes
	var members []Set
	for c, k := range cl.Codes {
		if k >= 0 {
			members = append(members, chains[c][k])
		}
	}
	cl.Found = len(members)
	cl.Frequency = float64(cl.Found) / float64(C)
	cl.Kept = 2*cl.Found > C
	sum := 0.0
	for _, s := range members {
		sum += Jaccard(s, genes)
	}
	cl.Agreement = sum / float64(len(members))
	keep := binomialAbove(C, cl.Frequency)
	cl.Repeat = keep
	if !cl.Kept {
		cl.Repeat = 1 - keep
	}
	cl.ExpectedJaccard = geneJaccard(members, genes)
}

// binomialAbove returns P(X > n/2) for X ~ Binomial(n, p).
func binomialAbove(n int, p float64) float64 {
	s := 0.0
	for k := n/2 + 1; k <= n; k++ {
		s += binomialPMF(n, k, p)
	}
	return s
}

// binomialAtLeastHalf returns P(2X ≥ n) for X ~ Binomial(n, p).
func binomialAtLeastHalf(n int, p float64) float64 {
	s := 0.0
	for k := (n + 1) / 2; k <= n; k++ {
		s += binomialPMF(n, k, p)
	}
	return s
}

func binomialPMF(n, k int, p float64) float64 {
	switch {
	case p <= 0:
		if k == 0 {
			return 1
		}
		return 0
	case p >= 1:
		if k == n {
			return 1
		}
		return 0
	}
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
}

// geneJaccard is the expected Jaccard index of two consensus sets drawn
// independently from len(members) codes each, a code holding gene g with
// p_g, the fraction of members holding it: a gene is in a consensus set
// with q_g = P(2·Binomial(m, p_g) ≥ m), and the expectation is taken as
// Σ q_g² / Σ (2q_g − q_g²), the expected intersection over the expected
// union. Only the genes of some member count; it is 1 when every member
// holds the same genes.
func geneJaccard(members []Set, genes Set) float64 {
	m := len(members)
	if m == 0 {
		return math.NaN()
	}
	// q for each vote count, computed once.
	q := make([]float64, m+1)
	for v := range q {
		q[v] = binomialAtLeastHalf(m, float64(v)/float64(m))
	}
	inter, union := 0.0, 0.0
	for w := range genes {
		var some uint64
		for _, s := range members {
			if w < len(s) {
				some |= s[w]
			}
		}
		for ; some != 0; some &= some - 1 {
			bit := some & -some
			votes := 0
			for _, s := range members {
				if w < len(s) && s[w]&bit != 0 {
					votes++
				}
			}
			qg := q[votes]
			inter += qg * qg
			union += 2*qg - qg*qg
		}
	}
	if union == 0 {
		return 1
	}
	return inter / union
}

// Reproduces tells whether a consensus (Consensus's clusters) would come
// back the same from another set of as many chains: it keeps a program,
// each decision to keep or drop a program is repeated with probability at
// least ReproducibleDecision, and each kept program's gene set is
// expected to come back with a Jaccard index of at least
// ReproducibleJaccard. The probabilities take each program's and gene's
// frequency among these chains as the truth (plug-in estimates), so with
// few chains they are optimistic; they say where a consensus is plainly
// not settled: a program found by about half of the chains, a gene held
// by about half of a program's codes.
func Reproduces(clusters []Cluster) bool {
	kept := 0
	for _, c := range clusters {
		if !(c.Repeat >= ReproducibleDecision) {
			return false
		}
		if c.Kept {
			kept++
			if !(c.ExpectedJaccard >= ReproducibleJaccard) {
				return false
			}
		}
	}
	return kept > 0
}
