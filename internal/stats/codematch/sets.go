package codematch

import (
	"fmt"
	"math/bits"
	"slices"
)

// Set is a set of small non-negative integers (gene indices), bit i of
// word i/64 standing for element i. Sets compared with each other should
// have the same number of words; missing words count as zero.
type Set []uint64

// NewSet returns an empty set with room for elements 0 … n-1.
func NewSet(n int) Set { return make(Set, (n+63)/64) }

// Add puts i in s.
func (s Set) Add(i int) { s[i/64] |= 1 << (i % 64) }

// Has reports whether i is in s.
func (s Set) Has(i int) bool { return i/64 < len(s) && s[i/64]&(1<<(i%64)) != 0 }

// Len returns the number of elements of s.
func (s Set) Len() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// MAPSets returns the MAP gene set of each of the L codes of a posterior
// mean matrix stored genes × L row-major (as in codes.parquet): gene g is in
// set k when mean[g*L+k] > 1/2. It panics when len(mean) is not a multiple
// of L.
func MAPSets(mean []float64, L int) []Set {
	if L < 1 || len(mean)%L != 0 {
		panic(fmt.Sprintf("codematch: MAPSets: %d values do not split into rows of L = %d", len(mean), L))
	}
	genes := len(mean) / L
	sets := make([]Set, L)
	for k := range sets {
		sets[k] = NewSet(genes)
	}
	for g := range genes {
		for k, v := range mean[g*L : (g+1)*L] {
			if v > 0.5 {
				sets[k].Add(g)
			}
		}
	}
	return sets
}

// counts returns |a∩b| and |a∪b|.
func counts(a, b Set) (inter, union int) {
	if len(a) < len(b) {
		a, b = b, a
	}
	for i, w := range a {
		var x uint64
		if i < len(b) {
			x = b[i]
		}
		inter += bits.OnesCount64(w & x)
		union += bits.OnesCount64(w | x)
	}
	return inter, union
}

// Jaccard returns |a∩b| / |a∪b|, in [0, 1]. Two empty sets are equal and
// have Jaccard 1.
func Jaccard(a, b Set) float64 {
	inter, union := counts(a, b)
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// Overlap returns the Jaccard matrix of two fits' codes: J[i][j] =
// Jaccard(a[i], b[j]).
func Overlap(a, b []Set) [][]float64 {
	J := make([][]float64, len(a))
	for i := range a {
		J[i] = make([]float64, len(b))
		for j := range b {
			J[i][j] = Jaccard(a[i], b[j])
		}
	}
	return J
}

// SizeOrder returns the indices of sets by decreasing number of elements,
// ties in index order: the order in which scpipe numbers codes within a
// fit, so that code_1 is the largest program in every run.
func SizeOrder(sets []Set) []int {
	order := make([]int, len(sets))
	size := make([]int, len(sets))
	for i, s := range sets {
		order[i], size[i] = i, s.Len()
	}
	slices.SortStableFunc(order, func(x, y int) int { return size[y] - size[x] })
	return order
}

// UsedMAPSets is MAPSets restricted to the codes that some cell uses: a code
// k whose usage posterior mean cells[n*L+k] is at most 1/2 for every cell n
// gets an empty set. A code no cell uses is not constrained by the data, so
// the posterior means of its genes stay at the prior (1/2 under the uniform
// prior) and its MAP set would be a coin toss over all genes, not a program.
// codes is genes × L and cells is cells × L, both row-major.
func UsedMAPSets(codes, cells []float64, L int) []Set {
	sets := MAPSets(codes, L)
	if len(cells)%L != 0 {
		panic(fmt.Sprintf("codematch: UsedMAPSets: %d usage values do not split into rows of L = %d", len(cells), L))
	}
	used := make([]bool, L)
	for i, v := range cells {
		if v > 0.5 {
			used[i%L] = true
		}
	}
	for k, u := range used {
		if !u {
			clear(sets[k])
		}
	}
	return sets
}
