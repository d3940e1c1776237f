package codematch

import (
	"math"
	"slices"
	"testing"
)

// span returns the integers lo … hi−1.
func span(lo, hi int) []int {
	var out []int
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

func TestConsensus(t *testing.T) {
	t.Parallel()
	const D = 200
	a, b, c := span(0, 20), span(20, 40), span(40, 60)
	lone := span(100, 130)
	// A and B in every chain, in any code order; C in four of five
	// chains, one of them missing a gene; a program in chain 3 alone;
	// chain 5 has an unused (empty) code.
	chains := [][]Set{
		{setOf(D, a...), setOf(D, b...), setOf(D, c...)},
		{setOf(D, b...), setOf(D, c...), setOf(D, a...)},
		{setOf(D, lone...), setOf(D, a...), setOf(D, b...)},
		{setOf(D, c[1:]...), setOf(D, b...), setOf(D, a...)},
		{setOf(D, a...), NewSet(D), setOf(D, b...), setOf(D, c...)},
	}
	got := Consensus(chains)
	if len(got) != 4 {
		t.Fatalf("%d programs, want 4 (A, B, C, the lone one)", len(got))
	}
	for i, tc := range []struct {
		genes  []int
		found  int
		kept   bool
		codes  []int
		repeat float64
	}{
		// A and B tie on frequency and size: A, found first, comes first.
		{a, 5, true, []int{0, 2, 1, 2, 0}, 1},
		{b, 5, true, []int{1, 0, 2, 1, 2}, 1},
		{c, 4, true, []int{2, 1, -1, 0, 3}, 0.9421}, // P(Bin(5, 0.8) ≥ 3)
		{lone, 1, false, []int{-1, -1, 0, -1, -1}, 0.9421},
	} {
		p := got[i]
		if !p.Genes.Has(tc.genes[0]) || p.Genes.Len() != len(tc.genes) {
			t.Errorf("program %d: %d genes, want %d from %d", i, p.Genes.Len(), len(tc.genes), tc.genes[0])
		}
		if p.Found != tc.found || p.Kept != tc.kept || !slices.Equal(p.Codes, tc.codes) {
			t.Errorf("program %d: found %d kept %v codes %v, want %d %v %v", i, p.Found, p.Kept, p.Codes, tc.found, tc.kept, tc.codes)
		}
		if math.Abs(p.Repeat-tc.repeat) > 1e-4 || p.Frequency != float64(tc.found)/5 {
			t.Errorf("program %d: repeat %.4f frequency %v, want %.4f %v", i, p.Repeat, p.Frequency, tc.repeat, float64(tc.found)/5)
		}
	}
	// C's gene 40 is in 3 of its 4 codes: in the set, q = P(Bin(4, ¾) ≥ 2).
	q := 1 - math.Pow(0.25, 4) - 4*0.75*math.Pow(0.25, 3)
	want := (19 + q*q) / (19 + 2*q - q*q)
	if c := got[2]; !c.Genes.Has(40) || math.Abs(c.ExpectedJaccard-want) > 1e-12 || math.Abs(c.Agreement-(3+19.0/20)/4) > 1e-12 {
		t.Errorf("C: expected Jaccard %v agreement %v, want %v and %v", c.ExpectedJaccard, c.Agreement, want, (3+19.0/20)/4)
	}
	if !Reproduces(got) {
		t.Error("A, B and C in most chains and the lone program in one: the consensus reproduces")
	}
	for _, tc := range []struct {
		name   string
		chains [][]Set
		want   bool
	}{
		// A program in 3 of 5 chains: another 5 keep it with P ≈ 0.68.
		{"a program in three of five chains", [][]Set{
			{setOf(D, a...), setOf(D, b...)}, {setOf(D, a...), setOf(D, b...)}, {setOf(D, a...), setOf(D, b...)},
			{setOf(D, a...), setOf(D, c...)}, {setOf(D, a...), setOf(D, lone...)},
		}, false},
		// Every chain its own programs: nothing is kept.
		{"every chain its own", [][]Set{{setOf(D, a...)}, {setOf(D, b...)}, {setOf(D, c...)}}, false},
		// Two chains of the same programs.
		{"two chains that agree", [][]Set{{setOf(D, a...), setOf(D, b...)}, {setOf(D, b...), setOf(D, a...)}}, true},
		// Half the genes of a program held by half its codes.
		{"a program's genes in half its codes", [][]Set{
			{setOf(D, a...)}, {setOf(D, a[:10]...)}, {setOf(D, a...)}, {setOf(D, a[:10]...)},
		}, false},
	} {
		if got := Reproduces(Consensus(tc.chains)); got != tc.want {
			t.Errorf("%s: reproduces %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBinomialAbove(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int
		p    float64
		want float64
	}{
		{5, 0.8, 0.94208}, {5, 0.6, 0.68256}, {5, 0.2, 0.05792}, {2, 0.5, 0.25}, {4, 1, 1}, {4, 0, 0}, {1, 1, 1},
	} {
		if got := binomialAbove(tc.n, tc.p); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("P(Bin(%d, %v) > %d/2) = %v, want %v", tc.n, tc.p, tc.n, got, tc.want)
		}
	}
}
