package codematch

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func setOf(n int, elems ...int) Set {
	s := NewSet(n)
	for _, e := range elems {
		s.Add(e)
	}
	return s
}

func TestSetBasics(t *testing.T) {
	t.Parallel()
	s := setOf(130, 0, 63, 64, 129)
	if s.Len() != 4 || !s.Has(63) || !s.Has(129) || s.Has(1) || s.Has(500) {
		t.Errorf("set %x: Len %d, Has(63) %v Has(129) %v Has(1) %v Has(500) %v", s, s.Len(), s.Has(63), s.Has(129), s.Has(1), s.Has(500))
	}
}

func TestJaccard(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		a, b Set
		want float64
	}{
		{"equal", setOf(10, 1, 2, 3), setOf(10, 1, 2, 3), 1},
		{"disjoint", setOf(10, 1, 2), setOf(10, 3, 4), 0},
		{"half", setOf(10, 1, 2, 3), setOf(10, 2, 3, 4), 0.5},
		{"subset", setOf(200, 1, 150), setOf(200, 1, 2, 3, 150), 0.5},
		{"both empty", NewSet(10), NewSet(10), 1},
		{"one empty", NewSet(10), setOf(10, 4), 0},
		{"different word counts", setOf(10, 1), setOf(100, 1, 99), 0.5},
	} {
		if got := Jaccard(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: Jaccard = %v, want %v", tc.name, got, tc.want)
		}
		if got := Jaccard(tc.b, tc.a); got != tc.want {
			t.Errorf("%s: Jaccard reversed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMAPSets(t *testing.T) {
	t.Parallel()
	// 3 genes × 2 codes; 0.5 itself is not in the MAP set.
	mean := []float64{
		0.9, 0.1,
		0.5, 0.51,
		1, 1,
	}
	sets := MAPSets(mean, 2)
	if want := []Set{setOf(3, 0, 2), setOf(3, 1, 2)}; !slices.EqualFunc(sets, want, slices.Equal) {
		t.Errorf("MAPSets = %v, want %v", sets, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("MAPSets with a ragged matrix did not panic")
		}
	}()
	MAPSets(mean, 4)
}

func TestSizeOrder(t *testing.T) {
	t.Parallel()
	sets := []Set{setOf(10, 1), setOf(10, 1, 2, 3), NewSet(10), setOf(10, 4, 5, 6), setOf(10, 7, 8)}
	if got, want := SizeOrder(sets), []int{1, 3, 4, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("SizeOrder = %v, want %v", got, want)
	}
}

// randomCodes draws L random gene sets over genes genes, each gene in each
// set with probability p.
func randomCodes(rng *rand.Rand, L, genes int, p float64) []Set {
	sets := make([]Set, L)
	for k := range sets {
		sets[k] = NewSet(genes)
		for g := range genes {
			if rng.Float64() < p {
				sets[k].Add(g)
			}
		}
	}
	return sets
}

// TestMatchRecoversPermutation plants a relabelled, slightly perturbed copy
// of a fit and checks that Match undoes the relabelling.
func TestMatchRecoversPermutation(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	for _, tc := range []struct {
		name  string
		L     int
		noise float64 // probability of flipping each gene of each set
	}{
		{"exact L=1", 1, 0},
		{"exact L=10", 10, 0},
		{"noisy L=8", 8, 0.02},
	} {
		const genes = 500
		a := randomCodes(rng, tc.L, genes, 0.1)
		perm := rng.Perm(tc.L) // code k of b is code perm[k] of a
		b := make([]Set, tc.L)
		for k := range b {
			b[k] = slices.Clone(a[perm[k]])
			for g := range genes {
				if rng.Float64() < tc.noise {
					b[k][g/64] ^= 1 << (g % 64)
				}
			}
		}
		m := Match(a, b)
		if !slices.Equal(m.To, perm) {
			t.Errorf("%s: To = %v, want %v", tc.name, m.To, perm)
		}
		for k, x := range m.Agreement {
			if want := Jaccard(a[perm[k]], b[k]); x != want {
				t.Errorf("%s: Agreement[%d] = %v, want %v", tc.name, k, x, want)
			}
		}
		if tc.noise == 0 && m.Mean() != 1 {
			t.Errorf("%s: Mean = %v, want 1", tc.name, m.Mean())
		}
		if tc.noise > 0 && !(m.Mean() > 0.5 && m.Mean() < 1) {
			t.Errorf("%s: Mean = %v, want in (0.5, 1)", tc.name, m.Mean())
		}
	}
}

// TestMatchPrefersJaccard checks that a large code does not steal the match
// of a small one, as it would under raw intersection.
func TestMatchPrefersJaccard(t *testing.T) {
	t.Parallel()
	const n = 100
	big := setOf(n, seq(0, 60)...)
	small := setOf(n, seq(0, 10)...)
	a := []Set{small, big}
	b := []Set{setOf(n, seq(0, 50)...), setOf(n, seq(0, 10)...)} // b[0] ≈ big, b[1] = small
	m := Match(a, b)
	if want := []int{1, 0}; !slices.Equal(m.To, want) {
		t.Errorf("To = %v, want %v", m.To, want)
	}
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

func TestMatchRectangular(t *testing.T) {
	t.Parallel()
	const n = 64
	a := []Set{setOf(n, 1, 2), setOf(n, 10, 11)}
	b := []Set{setOf(n, 10, 11), setOf(n, 30), setOf(n, 1, 2, 3)}
	m := Match(a, b)
	if want := []int{1, -1, 0}; !slices.Equal(m.To, want) {
		t.Errorf("To = %v, want %v", m.To, want)
	}
	if want := []float64{1, 0, 2.0 / 3}; !slices.Equal(m.Agreement, want) {
		t.Errorf("Agreement = %v, want %v", m.Agreement, want)
	}
	if got, want := m.Mean(), (1+2.0/3)/3; math.Abs(got-want) > 1e-15 {
		t.Errorf("Mean = %v, want %v", got, want)
	}
	// Fewer codes in b: every code of b is matched.
	m = Match(b, a)
	if want := []int{2, 0}; !slices.Equal(m.To, want) {
		t.Errorf("reversed To = %v, want %v", m.To, want)
	}
	if !math.IsNaN(Match(a, nil).Mean()) {
		t.Error("Mean of an empty matching is not NaN")
	}
}

func TestChainAgreement(t *testing.T) {
	t.Parallel()
	const n = 64
	c1 := []Set{setOf(n, 1, 2), setOf(n, 3, 4)}
	c2 := []Set{setOf(n, 3, 4), setOf(n, 1, 2)}    // relabelled copy
	c3 := []Set{setOf(n, 1, 2), setOf(n, 3, 5, 6)} // one code differs
	got := ChainAgreement([][]Set{c1, c2, c3})
	if want := []float64{1, 1, (1 + 0.25) / 2}; !slices.Equal(got, want) {
		t.Errorf("ChainAgreement = %v, want %v", got, want)
	}
}

func TestParents(t *testing.T) {
	t.Parallel()
	const n = 64
	coarse := []Set{setOf(n, 1, 2, 3, 4), setOf(n, 10, 11), setOf(n, 20, 21, 22)}
	fine := []Set{
		setOf(n, 1, 2),         // half of coarse 0
		setOf(n, 3, 4),         // the other half
		setOf(n, 10, 11),       // unchanged
		setOf(n, 20, 30, 31),   // mostly new genes: one third in coarse 2
		setOf(n, 40),           // new
		NewSet(n),              // empty
		setOf(n, 11, 20),       // tie on containment: 1/2 each; Jaccard 1/3 beats 1/4
		setOf(n, 1, 2, 10, 11), // tie on containment; Jaccard 1/2 beats 1/3
		setOf(n, 4, 11),        // tie on containment; Jaccard 1/3 beats 1/5
	}
	parent, contained := Parents(coarse, fine)
	if want := []int{0, 0, 1, 2, -1, -1, 1, 1, 1}; !slices.Equal(parent, want) {
		t.Errorf("parent = %v, want %v", parent, want)
	}
	if want := []float64{1, 1, 1, 1.0 / 3, 0, 0, 0.5, 0.5, 0.5}; !slices.Equal(contained, want) {
		t.Errorf("contained = %v, want %v", contained, want)
	}
	// A full tie goes to the lower index.
	parent, _ = Parents([]Set{setOf(n, 1, 2), setOf(n, 3, 4)}, []Set{setOf(n, 2, 3)})
	if parent[0] != 0 {
		t.Errorf("full tie: parent %d, want 0", parent[0])
	}
}

func TestUsedMAPSets(t *testing.T) {
	// Three genes, two codes; code 2 switches on genes 1 and 2 but no cell uses it.
	codes := []float64{
		0.9, 0.6,
		0.1, 0.7,
		0.8, 0.5,
	}
	cells := []float64{
		0.95, 0.2,
		0.10, 0.5, // exactly 1/2 is not use
	}
	sets := UsedMAPSets(codes, cells, 2)
	if sets[0].Len() != 2 || !sets[0].Has(0) || !sets[0].Has(2) {
		t.Errorf("code 1: got %d genes, want genes 0 and 2", sets[0].Len())
	}
	if sets[1].Len() != 0 {
		t.Errorf("unused code 2 has %d genes, want none", sets[1].Len())
	}
	if plain := MAPSets(codes, 2); plain[1].Len() != 2 {
		t.Errorf("MAPSets itself must not look at usage")
	}
}
