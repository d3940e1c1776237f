package codematch

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestProgramSets(t *testing.T) {
	t.Parallel()
	// 4 genes × 3 codes. Code 3 has no cell at ½ or more: no program.
	// Gene 3 is housekeeping: in no program. A mean of exactly ½ counts.
	codes := []float64{
		0.9, 0.1, 0.9,
		0.5, 0.49, 0.9,
		0.1, 0.8, 0.9,
		0.9, 0.9, 0.9,
	}
	cells := []float64{
		0.5, 0.1, 0.49,
		0.2, 0.7, 0.3,
	}
	hk := []float64{0, 0.2, 0.4, 0.5}
	got := ProgramSets(codes, cells, hk, 3)
	want := [][]int{{0, 1}, {2}, nil}
	for k, s := range got {
		var members []int
		for g := range 4 {
			if s.Has(g) {
				members = append(members, g)
			}
		}
		if !slices.Equal(members, want[k]) {
			t.Errorf("code %d: genes %v, want %v", k+1, members, want[k])
		}
	}
	if got := ProgramSets(codes, cells, nil, 3); !got[0].Has(3) || !got[1].Has(3) {
		t.Error("without a housekeeping code, gene 3 belongs to codes 1 and 2")
	}
}

// rangeSet holds genes lo … hi-1.
func rangeSet(n, lo, hi int) Set {
	s := NewSet(n)
	for g := lo; g < hi; g++ {
		s.Add(g)
	}
	return s
}

func TestStablePrograms(t *testing.T) {
	t.Parallel()
	const n = 200
	a := []Set{rangeSet(n, 0, 40), rangeSet(n, 40, 80), rangeSet(n, 80, 120), NewSet(n)}
	for _, tc := range []struct {
		name     string
		chains   [][]Set
		programs int
		codes    [][]int
	}{
		{"one chain", [][]Set{a}, 3, [][]int{{0, 1, 2}}},
		{"same programs, other order", [][]Set{a, {NewSet(n), a[2], a[0], a[1]}}, 3, [][]int{{0, 1, 2}, {2, 3, 1}}},
		// Chain 2 shares 30 of code 1's 40 genes and adds 10 (Jaccard
		// 30/50 = 0.6: stable) and 20 of code 2's, adding 30 (20/70:
		// not); its fourth code is a program chain 1 does not have.
		{"one program moved", [][]Set{a, {rangeSet(n, 10, 50), rangeSet(n, 60, 110), a[2], rangeSet(n, 150, 190)}}, 3, [][]int{{0, 2}, {0, 2}}},
		// A third chain must agree too: it lost code 3.
		{"three chains", [][]Set{a, a, {a[0], a[1], NewSet(n), NewSet(n)}}, 3, [][]int{{0, 1}, {0, 1}, {0, 1}}},
		{"no programs", [][]Set{{NewSet(n)}, {setOf(n, 3)}}, 0, [][]int{{}, {}}},
	} {
		s := StablePrograms(tc.chains)
		if s.Programs != tc.programs || len(s.Codes) != len(tc.codes) {
			t.Errorf("%s: %d programs, %d chains; want %d, %d", tc.name, s.Programs, len(s.Codes), tc.programs, len(tc.codes))
			continue
		}
		for c := range tc.codes {
			if !slices.Equal(s.Codes[c], tc.codes[c]) {
				t.Errorf("%s: chain %d's stable codes %v, want %v", tc.name, c+1, s.Codes[c], tc.codes[c])
			}
		}
		if s.Stable() != len(tc.codes[0]) {
			t.Errorf("%s: Stable() = %d, want %d", tc.name, s.Stable(), len(tc.codes[0]))
		}
	}
}

// TestStableProgramsThreshold moves a program's genes one at a time and
// checks that it stays stable exactly while its Jaccard index with the
// first chain's is at least StableJaccard.
func TestStableProgramsThreshold(t *testing.T) {
	t.Parallel()
	const n = 300
	r := rand.New(rand.NewPCG(9, 10))
	ref := []Set{rangeSet(n, 0, 60), rangeSet(n, 100, 150)}
	for moved := 0; moved <= 60; moved++ {
		b := rangeSet(n, moved, 60+moved) // shares 60 − moved genes
		other := rangeSet(n, 100, 150)
		if r.IntN(2) == 0 {
			other.Add(299) // noise that does not change the answer
		}
		s := StablePrograms([][]Set{ref, {other, b}})
		j := Jaccard(ref[0], b)
		if got := slices.Contains(s.Codes[0], 0); got != (j >= StableJaccard) {
			t.Errorf("%d genes moved (Jaccard %.3f): stable %v", moved, j, got)
		}
	}
}
