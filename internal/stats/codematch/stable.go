package codematch

import "fmt"

// StableJaccard is the Jaccard index that a program's matched code must
// reach in every other chain for the program to count as stable: at 1/2
// the two gene sets share at least two thirds of the smaller one, so the
// codes are the same program seen twice, not two programs that overlap
// (the threshold a consensus across runs, such as cNMF's, asks of a
// component it keeps).
const StableJaccard = 0.5

// ProgramSets returns the gene set of each of the L codes of a fit as
// scpipe enrich reads a program at its default threshold: the genes whose
// posterior mean of u is at least 1/2, less the genes of the housekeeping
// code (posterior mean at least 1/2 there; housekeeping may be nil), and
// no genes for a code that no cell uses (posterior mean of z below 1/2 in
// every cell). A housekeeping gene's entries are covered in every cell, so
// no code's bit for it changes the likelihood and its posterior mean is a
// coin toss about the prior's; a code no cell uses is no program either.
// codes is genes × L and cells is cells × L, both row-major.
func ProgramSets(codes, cells, housekeeping []float64, L int) []Set {
	if L < 1 || len(codes)%L != 0 || len(cells)%L != 0 {
		panic(fmt.Sprintf("codematch: ProgramSets: %d gene and %d cell values do not split into rows of L = %d", len(codes), len(cells), L))
	}
	genes := len(codes) / L
	if housekeeping != nil && len(housekeeping) != genes {
		panic(fmt.Sprintf("codematch: ProgramSets: %d housekeeping values for %d genes", len(housekeeping), genes))
	}
	used := make([]bool, L)
	for i, v := range cells {
		if v >= 0.5 {
			used[i%L] = true
		}
	}
	sets := make([]Set, L)
	for k := range sets {
		sets[k] = NewSet(genes)
	}
	for g := range genes {
		if housekeeping != nil && housekeeping[g] >= 0.5 {
			continue
		}
		for k, v := range codes[g*L : (g+1)*L] {
			if v >= 0.5 && used[k] {
				sets[k].Add(g)
			}
		}
	}
	return sets
}

// Stability says which programs the chains of one L share.
type Stability struct {
	// Programs counts the codes of the first chain that hold genes.
	Programs int
	// Codes[c] lists the 0-based codes of chain c that hold a stable
	// program: a code of the first chain with genes whose matched code
	// (Match) in every other chain has a Jaccard index of at least
	// StableJaccard, and those matched codes. The first chain's list is
	// ascending and the others follow it, so that the i-th entries of all
	// lists are the same program.
	Codes [][]int
}

// Stable returns the number of stable programs.
func (s Stability) Stable() int {
	if len(s.Codes) == 0 {
		return 0
	}
	return len(s.Codes[0])
}

// StablePrograms finds the programs (gene sets, one slice per chain, such
// as ProgramSets gives) that every chain of one L found: the first chain's
// codes are the reference to which each other chain's are matched
// one-to-one. With one chain every code with genes is stable.
func StablePrograms(chains [][]Set) Stability {
	if len(chains) == 0 {
		return Stability{}
	}
	ref := chains[0]
	var s Stability
	stable := make([]bool, len(ref))
	for k, set := range ref {
		stable[k] = set.Len() > 0
		if stable[k] {
			s.Programs++
		}
	}
	// partner[c][k]: the code of chain c matched to code k of the first.
	partner := make([][]int, len(chains))
	for c, sets := range chains {
		partner[c] = make([]int, len(ref))
		for k := range partner[c] {
			partner[c][k] = -1
			if c == 0 {
				partner[c][k] = k
			}
		}
		if c == 0 {
			continue
		}
		m := Match(ref, sets)
		for j, k := range m.To {
			if k >= 0 {
				partner[c][k] = j
			}
		}
		for k := range ref {
			j := partner[c][k]
			stable[k] = stable[k] && j >= 0 && Jaccard(ref[k], sets[j]) >= StableJaccard
		}
	}
	s.Codes = make([][]int, len(chains))
	for c := range chains {
		s.Codes[c] = []int{}
		for k, ok := range stable {
			if ok {
				s.Codes[c] = append(s.Codes[c], partner[c][k])
			}
		}
	}
	return s
}
