package gibbs

import (
	"math"
	"slices"
	"testing"
)

// TestDecideBoundedAgrees checks decideBounded against flip, which knows
// the ones' summed level: whenever the bounds decide a proposal, the
// decision is flip's, for proposals from both values, the Z step's
// conditional (cell levels, the genes' planes) and the U step's (a gene's
// level, the cells' planes), with the codes' columns spread over every
// level or a few at some, near the acceptance threshold, where the bounds
// leave most undecided, as well as far from it.
func TestDecideBoundedAgrees(t *testing.T) {
	r := &testRNG{s: 11}
	const L = 4
	var known, unknown int
	for trial := range 20000 {
		sp := stepSpec{L: L, key: uint64(trial), lik: rates{lift0: 0.3, step: 0.05 + r.float()}, bounded: true}
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
			// Half the codes have many columns at every level, half a
			// few at some; the ones are some of the code's columns.
			var cols []uint64
			for k := range 8 {
				n := 40
				if trial%4 >= 2 {
					n = int(r.next() % 12 & -(r.next() & 1))
				}
				sp.levelCount[l][k] = int64(n)
				for range n {
					cols = append(cols, uint64(k))
				}
			}
			ones := int64(r.next() % uint64(min(40, len(cols))+1))
			all := ones + int64(r.next()%(1+uint64(math.Abs(sp.zero)*80)))
			row.acc[l] = packCounts(ones, all)
			for i := range int(ones) {
				j := i + r.intn(len(cols)-i)
				cols[i], cols[j] = cols[j], cols[i]
				row.lev[l] += cols[i]
			}
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

// TestCodeLevelCounts checks codeLevelCounts against each column's level
// read bit by bit, for codes over random planes of one to three bits, and
// that levelBounds bounds the summed level of random sets of a code's
// columns, and is reached.
func TestCodeLevelCounts(t *testing.T) {
	r := &testRNG{s: 21}
	for trial := range 200 {
		L, words, nb := 1+trial%5, 1+trial%4, 1+trial%3
		codes := make([]uint64, L*words)
		for i := range codes {
			// Sparse codes, some empty, so that some span few levels.
			codes[i] = r.next() & r.next() & r.next() & r.next() & -(r.next() & 1)
		}
		lift := make([][]uint64, nb)
		for j := range lift {
			lift[j] = make([]uint64, words)
			for w := range lift[j] {
				lift[j][w] = r.next()
			}
		}
		live := r.next() & (1<<uint(L) - 1)
		sp := stepSpec{L: L}
		codeLevelCounts(&sp.levelCount, codes, L, live, lift)
		for l := range L {
			var want [1 << MaxCellLevelBits]int64
			var levels []uint64
			for c := range 64 * words {
				if live>>uint(l)&1 == 0 || codes[c/64*L+l]>>uint(c%64)&1 == 0 {
					continue
				}
				var k uint64
				for j := range lift {
					k |= (lift[j][c/64] >> uint(c%64) & 1) << uint(j)
				}
				want[k]++
				levels = append(levels, k)
			}
			if sp.levelCount[l] != want {
				t.Fatalf("trial %d, code %d: counts %v, want %v", trial, l, sp.levelCount[l], want)
			}
			if len(levels) == 0 {
				continue
			}
			ones := 1 + r.intn(len(levels))
			lo, hi := sp.levelBounds(l, 0, int64(ones))
			slices.Sort(levels)
			var least, most uint64
			for i := range ones {
				least += levels[i]
				most += levels[len(levels)-1-i]
			}
			if lo != least || hi != most {
				t.Fatalf("trial %d, code %d, %d ones: bounds [%d, %d], want [%d, %d]", trial, l, ones, lo, hi, least, most)
			}
		}
	}
}
