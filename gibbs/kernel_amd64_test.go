//go:build amd64 && !purego

package gibbs

import (
	"fmt"
	"testing"
)

// TestCondSumsVecMatchesGo compares the vector kernel with the Go kernel
// (itself checked against Algorithm 1) at every vector and chunk boundary
// length, for every L up to MaxL, summing the codes from every code on and
// random subsets of them, on masked and fully observed rows and codes of
// several densities. The row's code planes sit inside wider planes of guard
// words, and x and obs are followed by guard words, so a read past the row's
// columns changes the sums.
func TestCondSumsVecMatchesGo(t *testing.T) {
	if len(vectorKernels) == 0 {
		t.Skip("the CPU lacks AVX-512: no vector kernel to test")
	}
	t.Parallel()
	sizes := []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 71, 72, 127, 128, 129, 200}
	for _, k := range vectorKernels {
		for _, L := range []int{1, 2, 3, 5, 8, 10, MaxL} {
			for _, masked := range []bool{false, true} {
				testCondSumsVec(t, k, L, masked, sizes)
			}
		}
	}
}

// testCondSumsVec is TestCondSumsVecMatchesGo for one kernel variant, L and
// kind of row.
func testCondSumsVec(t *testing.T, kern vectorKernel, L int, masked bool, sizes []int) {
	t.Run(fmt.Sprintf("%s/L%d/masked=%v", kern.name, L, masked), func(t *testing.T) {
		t.Parallel()
		r := &testRNG{s: uint64(L*2 + 1)}
		for _, words := range sizes {
			const pad = 9 // guard words on each side of the row's columns
			stride := words + 2*pad
			for trial := range 12 {
				codes := make([]uint64, words*L)
				planes := make([]uint64, L*stride)
				for i := range planes {
					planes[i] = ^uint64(0)
				}
				for w := range words {
					for l := range L {
						var c uint64 // density 0, ⅛, ½ or 1
						switch trial % 4 {
						case 1:
							c = r.next() & r.next() & r.next()
						case 2:
							c = r.next()
						case 3:
							c = ^uint64(0)
						}
						codes[w*L+l] = c
						planes[l*stride+pad+w] = c
					}
				}
				x := append(make([]uint64, 0, words+2), make([]uint64, words)...)
				obs := append(make([]uint64, 0, words+2), make([]uint64, words)...)
				for w := range words {
					x[w], obs[w] = r.next(), ^uint64(0)
					if masked {
						obs[w] = r.next() | r.next()
					}
				}
				x, obs = guarded(x), guarded(obs)
				active := r.next() & (1<<uint(L) - 1)
				var buf vecScratch
				for k := range 2 * L {
					from, codeSet := k/2, codesFrom(k/2, L)
					if k%2 == 1 {
						codeSet &= r.next() // some codes dead
					}
					var want, got [MaxL]uint64
					for i := range want {
						want[i], got[i] = uint64(i)+5, uint64(i)+5
					}
					wantMiss := condSums(&want, active, codeSet, L, codes, x, obs)
					vobs := obs
					if !masked {
						vobs = nil
					}
					gotMiss := condSumsWith(kern.sums, &got, &buf, active, codeSet, planes[pad:], stride, x, vobs)
					if got != want || gotMiss != wantMiss {
						t.Fatalf("words %d trial %d active %b from %d codes %b: vector %v/%d, Go %v/%d",
							words, trial, active, from, codeSet, got[:L], gotMiss, want[:L], wantMiss)
					}
					if kern.sumsX != nil && words > 0 {
						// sumsX leaves out popcount(s), which is what the
						// full sums give for a row of zeros.
						var gotX [MaxL]uint64
						for i := range gotX {
							gotX[i] = uint64(i) + 5
						}
						missX := condSumsWith(kern.sumsX, &gotX, &buf, active, codeSet, planes[pad:], stride, x, vobs)
						condSumsWith(kern.sums, &gotX, &buf, active, codeSet, planes[pad:], stride, make([]uint64, words), vobs)
						if gotX != want || missX != wantMiss {
							t.Fatalf("words %d trial %d active %b codes %b: sumsX plus the sums of zeros %v/%d, Go %v/%d",
								words, trial, active, codeSet, gotX[:L], missX, want[:L], wantMiss)
						}
					}
				}
			}
		}
	})
}

// condSumsWith sums one column segment of a row with the assembly variant
// sums, as a scan does with vecRow: the vector kernel with condSums's
// arguments, for comparing the two.
func condSumsWith(sums coverSumsFunc, acc *[MaxL]uint64, buf *vecScratch, active, want uint64, planes []uint64, stride int, x, obs []uint64) uint64 {
	var v vecRow
	v.prepare(active, want, stride)
	miss := v.scan(vectorKernel{sums: sums}, buf, planes, x, obs)
	var lev [MaxL]uint64
	v.add(acc, &lev)
	return miss
}

// guarded writes guard words (all ones) into the capacity past len(w).
func guarded(w []uint64) []uint64 {
	g := w[:cap(w)]
	for i := len(w); i < len(g); i++ {
		g[i] = ^uint64(0)
	}
	return w
}

// FuzzCondSumsVec compares the vector kernel with the Go kernel on fuzzed rows.
func FuzzCondSumsVec(f *testing.F) {
	if len(vectorKernels) == 0 {
		f.Skip("the CPU lacks AVX-512: no vector kernel to test")
	}
	f.Add(uint64(1), uint8(2), uint16(65), uint64(3), true)
	f.Add(uint64(7), uint8(10), uint16(9), uint64(0), false)
	f.Fuzz(func(t *testing.T, seed uint64, l8 uint8, w16 uint16, active uint64, masked bool) {
		L, words := int(l8%MaxL)+1, int(w16%300)
		active &= 1<<uint(L) - 1
		r := &testRNG{s: seed}
		codes, planes := make([]uint64, words*L), make([]uint64, words*L)
		x, obs := make([]uint64, words), make([]uint64, words)
		for w := range words {
			for l := range L {
				codes[w*L+l] = r.next() & r.next()
				planes[l*words+w] = codes[w*L+l]
			}
			x[w], obs[w] = r.next(), ^uint64(0)
			if masked {
				obs[w] = r.next() | r.next()
			}
		}
		vobs := obs
		if !masked {
			vobs = nil
		}
		codeSet := codesFrom(int(seed%uint64(L)), L) & (r.next() | r.next())
		var want [MaxL]uint64
		var buf vecScratch
		wantMiss := condSums(&want, active, codeSet, L, codes, x, obs)
		for _, kern := range vectorKernels {
			var got [MaxL]uint64
			gotMiss := condSumsWith(kern.sums, &got, &buf, active, codeSet, planes, words, x, vobs)
			if got != want || gotMiss != wantMiss {
				t.Fatalf("%s: vector %v/%d, Go %v/%d", kern.name, got[:L], gotMiss, want[:L], wantMiss)
			}
		}
	})
}

// TestCondSumsLiftVecMatchesGo compares every vector kernel's lift variant
// with condSumsLift on random rows: the counts, the levels' sums and the
// mismatches, for 1 to 3 planes (the vector kernels read all three; the
// planes past the levels' bits are zero), rows of every length around the
// chunk and block sizes, masked and not.
func TestCondSumsLiftVecMatchesGo(t *testing.T) {
	if len(vectorKernels) == 0 {
		t.Skip("the CPU lacks AVX2: no vector kernel to test")
	}
	t.Parallel()
	r := &testRNG{s: 41}
	for _, kern := range vectorKernels {
		for _, L := range []int{1, 3, 10, MaxL} {
			for _, words := range []int{1, 3, 4, 5, 8, 9, 63, 64, 65, 130, 200} {
				for trial := range 6 {
					nb := 1 + trial%MaxCellLevelBits
					masked := trial%2 == 1
					codes := make([]uint64, words*L)
					planes := make([]uint64, L*words)
					for w := range words {
						for l := range L {
							c := r.next() & r.next()
							codes[w*L+l], planes[l*words+w] = c, c
						}
					}
					x, obs := make([]uint64, words), make([]uint64, words)
					for w := range words {
						x[w], obs[w] = r.next()&r.next(), ^uint64(0)
						if masked {
							obs[w] = r.next() | r.next()
						}
					}
					block := make([]uint64, MaxCellLevelBits*words+8)
					for i := range block {
						block[i] = r.next()
					}
					clear(block[nb*words:]) // planes past the levels' bits are zero
					lift := make([][]uint64, nb)
					for j := range lift {
						lift[j] = block[j*words : (j+1)*words]
					}
					active := r.next() & (1<<uint(L) - 1)
					want := codesFrom(int(r.next()%uint64(L)), L) & (r.next() | r.next())
					var acc, lev [MaxL]uint64
					wantMiss := condSumsLift(&acc, &lev, active, want, L, codes, x, obs, lift)
					var v vecRow
					var buf vecScratch
					v.prepare(active, want, words)
					vobs := obs
					if !masked {
						vobs = nil
					}
					miss := v.scanLift(kern, &buf, planes, x, vobs, block, words)
					var gotAcc, gotLev [MaxL]uint64
					v.add(&gotAcc, &gotLev)
					if gotAcc != acc || gotLev != lev || miss != wantMiss {
						t.Fatalf("%s L%d words %d trial %d: vector %v/%v/%#x, Go %v/%v/%#x", kern.name, L, words, trial,
							gotAcc[:L], gotLev[:L], miss, acc[:L], lev[:L], wantMiss)
					}
				}
			}
		}
	}
}
