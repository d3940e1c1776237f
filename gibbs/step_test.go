package gibbs

import (
	"math"
	"testing"
)

// TestDecideBoundedAgrees checks decideBounded against flip, which knows
// the ones' summed level: whenever the bounds decide a proposal, the
// decision is flip's, for proposals from both values, the Z step's
// conditional (cell levels, the genes' planes) and the U step's (a gene's
// level, the cells' planes), near the acceptance threshold, where the
// bounds leave most undecided, as well as far from it.
func TestDecideBoundedAgrees(t *testing.T) {
	r := &testRNG{s: 11}
	const L = 4
	var known, unknown int
	for trial := range 20000 {
		sp := stepSpec{L: L, key: uint64(trial), lik: rates{lift0: 0.3, step: 0.05 + r.float()}, bounded: true, maxLevel: 7}
		sp.zero = -r.float() * 2
		sp.lift = make([][]uint64, 3)
		if trial%2 == 0 {
			sp.cells, sp.rowLevel, sp.geneStep = true, []uint8{uint8(trial % 8)}, 0.02+r.float()/2
			for k := range sp.levelOne {
				sp.levelOne[k] = 0.1 + 0.3*float64(k)
			}
		} else {
			sp.rowGene = []uint8{uint8(trial % 8)}
			for k := range sp.geneOne {
				sp.geneOne[k] = 0.05 + 0.2*float64(k)
			}
		}
		sp.logit = make([]float64, L)
		for l := range sp.logit {
			sp.logit[l] = (r.float() - 0.5) * 4
		}
		var row rowState
		row.a = r.next() & (1<<L - 1)
		for l := range L {
			ones := int64(r.next() % 40)
			all := ones + int64(r.next()%(1+uint64(math.Abs(sp.zero)*80)))
			row.acc[l] = packCounts(ones, all)
			row.lev[l] = r.next() % (7*uint64(ones) + 1)
		}
		for l := range L {
			exact, bounded := row, row
			want := sp.flip(&exact, l, 0)
			got, ok := sp.decideBounded(&bounded, l, 0)
			if !ok {
				unknown++
				if bounded.a != row.a || bounded.flips != row.flips {
					t.Fatalf("trial %d, code %d: an undecided proposal changed the row", trial, l)
				}
				continue
			}
			known++
			if got != want || bounded.a != exact.a || bounded.flips != exact.flips {
				t.Fatalf("trial %d, code %d: bounded decision %v, exact %v", trial, l, got, want)
			}
		}
	}
	t.Logf("%d proposals decided by the bounds, %d not", known, unknown)
	if unknown == 0 || known == 0 {
		t.Fatalf("%d proposals decided by the bounds, %d not: both cases must occur", known, unknown)
	}
}
