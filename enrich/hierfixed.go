package enrich

import (
	"cmp"
	"context"
	"fmt"
	"math/bits"

	"scpipe/internal/stats/codematch"
)

// HierarchyMethod says how the programs of neighbouring L are linked.
type HierarchyMethod string

// The methods of the hierarchy.
const (
	// HierarchyOverlap links two programs where at least half of the genes
	// of one lie in the other (BuildHierarchy).
	HierarchyOverlap HierarchyMethod = "overlap"
	// HierarchyFixedCodes infers the links as the paper does for its Fig.
	// calc_hier (BuildHierarchyFixedCodes): an OrMachine whose data are
	// the programs of the smaller L and whose codes, all fixed, are the
	// programs of the larger, so that its Z says which programs of the
	// larger L make up each one of the smaller.
	HierarchyFixedCodes HierarchyMethod = "fixed-codes"
)

// ParseHierarchyMethod returns the method named s.
func ParseHierarchyMethod(s string) (HierarchyMethod, error) {
	switch m := HierarchyMethod(s); m {
	case HierarchyOverlap, HierarchyFixedCodes:
		return m, nil
	}
	return "", fmt.Errorf("hierarchy %q: want %s or %s", s, HierarchyOverlap, HierarchyFixedCodes)
}

// linkMin is the posterior mean of a link at or above which two programs
// are linked under HierarchyFixedCodes: the links of the MAP of Z.
const linkMin = 0.5

// A Linker infers which of the fine gene sets make up each coarse one: it
// returns link[i][j], the posterior mean of "fine set j is a part of
// coarse set i" (len(coarse) rows of len(fine)). Sets are gene indices in
// 0 … D−1. The sampler lives outside this package (enrich never imports
// it): hierarchy.Linker is the OrMachine of HierarchyFixedCodes.
type Linker func(ctx context.Context, coarse, fine [][]int, D int) ([][]float64, error)

// BuildHierarchyFixedCodes links the programs of levels, which must be
// sorted by L, by the posterior means linker gives for each pair of
// neighbouring L (HierarchyFixedCodes). Two programs are linked where the
// posterior mean is at least ½. A program's parent is its linked program
// of the previous L with the largest posterior mean (ties: the larger
// containment, then the earlier in the hierarchy's order). Its event is
// merge when two or more programs of the previous L are each made up of it
// alone, split when its parent is made up of two or more programs, new
// without a link, and continues otherwise.
func BuildHierarchyFixedCodes(ctx context.Context, levels []*Level, D int, linker Linker) (*Hierarchy, error) {
	h, err := buildHierarchy(levels, D, func(coarse, fine []*Node) ([]Edge, error) {
		if len(coarse) == 0 || len(fine) == 0 {
			return linkFixed(coarse, fine, nil), nil
		}
		p, err := linker(ctx, nodeGenes(coarse), nodeGenes(fine), D)
		if err != nil {
			return nil, fmt.Errorf("enrich: hierarchy from L = %d to %d: %w", coarse[0].L, fine[0].L, err)
		}
		if err := checkLinks(p, len(coarse), len(fine)); err != nil {
			return nil, fmt.Errorf("enrich: hierarchy from L = %d to %d: %w", coarse[0].L, fine[0].L, err)
		}
		return linkFixed(coarse, fine, p), nil
	})
	if err != nil {
		return nil, err
	}
	h.Method = HierarchyFixedCodes
	return h, nil
}

// checkLinks checks that p is a rows × cols matrix of probabilities.
func checkLinks(p [][]float64, rows, cols int) error {
	if len(p) != rows {
		return fmt.Errorf("the linker returned %d rows for %d programs", len(p), rows)
	}
	for i, r := range p {
		if len(r) != cols {
			return fmt.Errorf("the linker returned %d links for program %d, want %d", len(r), i, cols)
		}
		for _, v := range r {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("the linker returned the posterior mean %v, outside [0, 1]", v)
			}
		}
	}
	return nil
}

// nodeGenes returns the genes of each node, ascending.
func nodeGenes(nodes []*Node) [][]int {
	out := make([][]int, len(nodes))
	for i, n := range nodes {
		out[i] = setMembers(n.set)
	}
	return out
}

// setMembers returns the elements of s, ascending.
func setMembers(s codematch.Set) []int {
	var out []int
	for w, word := range s {
		for word != 0 {
			out = append(out, w*64+bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
	return out
}

// linkFixed records the edges whose posterior mean p[i][j] (coarse i, fine
// j) is at least linkMin and sets parents, children and events as
// BuildHierarchyFixedCodes says.
func linkFixed(coarse, fine []*Node, p [][]float64) []Edge {
	var edges []Edge
	best := make([]int, len(fine)) // the parent of each fine program, -1 for none
	children := make([][]int, len(coarse))
	for j, f := range fine {
		best[j] = -1
		var bestLink, bestIn float64
		for i, c := range coarse {
			if p[i][j] < linkMin {
				continue
			}
			shared := interCount(c.set, f.set)
			toIn := float64(shared) / float64(f.Genes)
			e := Edge{From: c.Name(), To: f.Name(), Shared: shared, ToInFrom: toIn,
				FromInTo: float64(shared) / float64(c.Genes),
				Jaccard:  float64(shared) / float64(c.Genes+f.Genes-shared), Link: p[i][j]}
			edges = append(edges, e)
			f.Parents = append(f.Parents, e.From)
			c.Children = append(c.Children, e.To)
			children[i] = append(children[i], j)
			if best[j] < 0 || cmp.Or(cmp.Compare(e.Link, bestLink), cmp.Compare(toIn, bestIn)) > 0 {
				best[j], bestLink, bestIn = i, e.Link, toIn
				f.Parent, f.Containment, f.Jaccard, f.Link = e.From, toIn, e.Jaccard, e.Link
			}
		}
	}
	for j, f := range fine {
		alone := 0 // programs of the previous L made up of f alone
		for i := range coarse {
			if len(children[i]) == 1 && children[i][0] == j {
				alone++
			}
		}
		switch {
		case best[j] < 0:
			f.Event = EventNew
		case alone >= 2:
			f.Event = EventMerge
		case len(children[best[j]]) >= 2:
			f.Event = EventSplit
		default:
			f.Event = EventContinues
		}
	}
	return edges
}
