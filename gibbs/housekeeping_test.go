package gibbs

import (
	"context"
	"fmt"
	"testing"
)

// TestHousekeepingFold checks that a U step's scans with the housekeeping
// code folded (foldHousekeeping) give every row the sums and counts of the
// plain scan, which reads the code's column words like any other's: for
// every kernel, masked data and not, one segment and several, and rows with
// random active and wanted codes, the housekeeping code on and off.
func TestHousekeepingFold(t *testing.T) {
	t.Parallel()
	p := newPlanted(11, 300, 200, 3, 0.1, 0.05)
	for _, masked := range []bool{false, true} {
		for _, seg := range []int{0, 64} {
			var mask BitMatrix
			if masked {
				mask = randomMatrix(&testRNG{s: 3}, 300, 200, 0.8, 0)
			}
			data, err := NewData(p.noisy, mask, seg)
			if err != nil {
				t.Fatal(err)
			}
			// L = 1: the housekeeping code beside one; 2: the unrolled
			// loop of three codes; MaxL − 1: the housekeeping code at
			// bit 63.
			for _, L := range []int{1, 2, 4, MaxL - 1} {
				for _, kernel := range Kernels() {
					name := fmt.Sprintf("masked=%v/seg%d/L%d/%s", masked, seg, L, kernel)
					t.Run(name, func(t *testing.T) {
						cfg := DefaultConfig()
						cfg.L, cfg.Noise, cfg.CellLevels, cfg.GeneLevels = L, Dropout, 1, 1
						cfg.Housekeeping, cfg.Kernel, cfg.Workers, cfg.Init = true, kernel, 1, InitData
						s, err := NewSampler(context.Background(), data, cfg)
						if err != nil {
							t.Fatal(err)
						}
						checkHousekeepingFold(t, s)
					})
				}
			}
		}
	}
}

// checkHousekeepingFold compares the folded and plain scans of every row
// of s's U step.
func checkHousekeepingFold(t *testing.T, s *Sampler) {
	t.Helper()
	c := s.chains[0]
	sp := s.uStep(c, 1)
	s.setLikelihood(&sp, c)
	s.prepareStep(&sp)
	hk := sp.hk
	if hk != 1<<uint(s.l-1) {
		t.Fatalf("the U step folds codes %b, want the housekeeping code %b", hk, 1<<uint(s.l-1))
	}
	r := &testRNG{s: 5}
	buf := s.scratchFor(0)
	for trial := range 20 {
		for i0 := 0; i0 < sp.rows; i0 += rowGroup {
			rows := buf.rows[:min(rowGroup, sp.rows-i0)]
			var a, want [rowGroup]uint64
			for k := range rows {
				a[k], want[k] = r.next()&(1<<uint(s.l)-1), r.next()&sp.live
			}
			scanned := func(fold uint64) (acc [rowGroup][MaxL]uint64, counts [rowGroup]uint64) {
				sp.hk = fold
				for k := range rows {
					rows[k] = rowState{a: a[k], want: want[k]}
				}
				sp.scan(buf, i0, rows, 1<<uint(len(rows))-1)
				for k := range rows {
					acc[k], counts[k] = rows[k].acc, rows[k].counts
				}
				return acc, counts
			}
			gotAcc, gotCounts := scanned(hk)
			wantAcc, wantCounts := scanned(0)
			for k := range rows {
				if gotAcc[k] != wantAcc[k] || gotCounts[k] != wantCounts[k] {
					t.Fatalf("trial %d, row %d, codes %b, want %b: folded sums %v, counts %x; plain %v, %x",
						trial, i0+k, a[k], want[k], gotAcc[k][:s.l], gotCounts[k], wantAcc[k][:s.l], wantCounts[k])
				}
			}
		}
	}
}
