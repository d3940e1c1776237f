package gibbs

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// goKernel names the portable kernel (condSums), which every build and CPU
// runs.
const goKernel = "go"

// Kernels lists the sweep kernels this build can run on this CPU, fastest
// first: the assembly variants the CPU supports (on amd64 without the
// purego tag: "avx512-vpopcntdq", "avx512bw", "avx2"), then goKernel. Every
// kernel gives bit-identical results; only the speed differs.
func Kernels() []string {
	return append(vectorKernelNames(), goKernel)
}

// Kernel names the kernel s sweeps with, one of Kernels (see
// Config.Kernel).
func (s *Sampler) Kernel() string {
	if s.vector {
		return s.kernel.name
	}
	return goKernel
}

// vectorKernelNames lists the names of vectorKernels.
func vectorKernelNames() []string {
	names := make([]string, len(vectorKernels))
	for i, k := range vectorKernels {
		names[i] = k.name
	}
	return names
}

// kernelNamed returns the kernel that Config.Kernel = name (validated)
// selects: whether it is a vector kernel, and which.
func kernelNamed(name string) (vector bool, k vectorKernel) {
	if name == "" && len(vectorKernels) > 0 {
		return true, vectorKernels[0]
	}
	for _, k := range vectorKernels {
		if k.name == name {
			return true, k
		}
	}
	return false, vectorKernel{}
}

// checkKernel reports an error unless name is "" or one of Kernels.
func checkKernel(name string) error {
	if name == "" || slices.Contains(Kernels(), name) {
		return nil
	}
	return fmt.Errorf("%w: kernel %q: this build and CPU run %s", ErrConfig, name, strings.Join(Kernels(), ", "))
}

// A kernel reports two counts packed in one uint64, a in the low 32 bits and
// b in the high 32: for a code's sum, the observed ones it would newly cover
// and all the observed entries it would newly cover; for a row, the
// mispredicted observed entries and the covered observed entries. A row has
// fewer than 2³² columns (NewSampler checks), so adding the packed counts of
// a row's segments never carries from one half into the other.
func packCounts(a, b int64) uint64 { return uint64(a) | uint64(b)<<32 }

// splitCounts undoes packCounts.
func splitCounts(v uint64) (a, b int64) { return int64(v & (1<<32 - 1)), int64(v >> 32) }

// condSums is the bit-packed form of Algorithm 1 of the paper for one row
// (a cell in the Z step, a gene in the U step), over one column segment.
//
// active holds the row's current codes (bit l = z_nl). codes holds the other
// factor for the segment's columns, interleaved by word: codes[w*L+l] is word w
// of code l's bitset over the columns (U_l in the Z step, Z_l in the U step).
// x and obs are the row's data and observed-mask words (len(x) = len(obs),
// len(codes) = len(x)*L); bits past the last column must be zero in x and codes.
//
// For every code l in the set want (bit l; want ⊆ [0, L)) it adds to acc[l]
// the counts (packed by packCounts) of the observed columns that code l
// alone decides, those with u_ld = 1 and ∏_{l' ≠ l} (1 − z_l' u_l'd) = 1:
// the ones among them, popcount(x & S & obs), and all of them,
// popcount(S & obs), with S = U_l &^ cov2 if code l is active and
// S = U_l &^ (cov1|cov2) if not, where cov1 (cov2) marks columns covered by
// exactly one (at least two) active codes. The paper's accumulator
// Σ_d x̃_d · u_ld · ∏_{l' ≠ l} (1 − z_l' u_l'd) (x̃ ∈ {−1, 0, +1}) is
// 2·ones − all. It returns, packed, the observed columns that the active
// codes mispredict, popcount((x ^ (cov1|cov2)) & obs), and those they
// cover, popcount((cov1|cov2) & obs).
//
// The reference it must equal is refCondSum in kernel_test.go. It is also
// the Go twin of the vector kernel (vecRow and coverSums in
// kernel_amd64.go), which stepSpec.scan uses instead when Sampler.vector is
// set (Config.Kernel).
func condSums(acc *[MaxL]uint64, active, want uint64, L int, codes, x, obs []uint64) (rowCounts uint64) {
	return condSumsMode(acc, active, want, L, codes, x, obs, true)
}

// condSumsMode is condSums when full; otherwise it leaves out the
// popcount(S & obs) half of each sum, for rows whose totals come from a
// stepTotals.
func condSumsMode(acc *[MaxL]uint64, active, want uint64, L int, codes, x, obs []uint64, full bool) (rowCounts uint64) {
	obs = obs[:len(x)]
	codes = codes[:len(x)*L]
	switch {
	case want == 0:
		return coverCounts(active, L, codes, x, obs)
	case L == 2 || L == 3 && (active|want)>>2 == 0:
		// L = 3 without its last code: the single-cell model's L = 2 in
		// a U step with the housekeeping code folded (foldHousekeeping).
		// keepN is all ones for an inactive code: S excludes cov1 as well as cov2.
		return condSums2(acc, active, want, L, codes, x, obs, active&1-1, active>>1&1-1, full)
	case L == 3:
		return condSums3(acc, active, want, codes, x, obs, full)
	}
	return condSumsL(acc, active, want, L, codes, x, obs, full)
}

// coverCounts is condSums for a row that wants no code's sum: the
// mispredicted and covered observed columns alone.
func coverCounts(active uint64, L int, codes, x, obs []uint64) uint64 {
	var miss, covered int
	for w, xw := range x {
		var c uint64
		for a := active; a != 0; a &= a - 1 {
			c |= codes[w*L+bits.TrailingZeros64(a)]
		}
		miss += bits.OnesCount64((xw ^ c) & obs[w])
		covered += bits.OnesCount64(c & obs[w])
	}
	return packCounts(int64(miss), int64(covered))
}

// condSumsL is condSums for any L. One pass over the words builds the
// coverage of the word in registers and then serves every wanted code; a
// two-pass variant (coverage to a buffer, then a register-resident sum per
// code) measured no faster.
func condSumsL(acc *[MaxL]uint64, active, want uint64, L int, codes, x, obs []uint64, full bool) uint64 {
	// The wanted codes as a list, each with keep all ones if it is inactive
	// (S excludes cov1 as well as cov2).
	var list [MaxL]uint8
	var keep [MaxL]uint64
	n := 0
	for m := want; m != 0; m &= m - 1 {
		l := bits.TrailingZeros64(m)
		list[n], keep[n] = uint8(l), uint64(active>>uint(l)&1)-1
		n++
	}
	var ones, all [MaxL]int
	var miss, covered int
	for w, xw := range x {
		cw := codes[w*L : w*L+L]
		var c1, c2 uint64
		for a := active; a != 0; a &= a - 1 {
			u := cw[bits.TrailingZeros64(a)]
			c2 |= c1 & u
			c1 = (c1 | u) &^ c2
		}
		ow := obs[w]
		miss += bits.OnesCount64((xw ^ (c1 | c2)) & ow)
		covered += bits.OnesCount64((c1 | c2) & ow)
		for k, l := range list[:n] {
			s := cw[l] &^ (c2 | c1&keep[k]) & ow
			ones[k] += bits.OnesCount64(xw & s)
			if full {
				all[k] += bits.OnesCount64(s)
			}
		}
	}
	for k, l := range list[:n] {
		acc[l] += packCounts(int64(ones[k]), int64(all[k]))
	}
	return packCounts(int64(miss), int64(covered))
}

// condSums2 is condSums for codes 0 and 1 alone, of L interleaved, with
// the loop over codes unrolled; keepN is all ones if code N is inactive.
func condSums2(acc *[MaxL]uint64, active, want uint64, L int, codes, x, obs []uint64, keep0, keep1 uint64, full bool) uint64 {
	a0 := -(active & 1)      // all ones if code 0 is active
	a1 := -(active >> 1 & 1) // all ones if code 1 is active
	var ones0, ones1, all0, all1 int
	var miss, covered int
	for w, xw := range x {
		cw := codes[L*w : L*w+2]
		u0, u1 := cw[0]&a0, cw[1]&a1
		c2 := u0 & u1
		c1 := (u0 | u1) &^ c2
		ow := obs[w]
		miss += bits.OnesCount64((xw ^ (c1 | c2)) & ow)
		covered += bits.OnesCount64((c1 | c2) & ow)
		t0 := cw[0] &^ (c2 | c1&keep0) & ow
		t1 := cw[1] &^ (c2 | c1&keep1) & ow
		ones0 += bits.OnesCount64(xw & t0)
		ones1 += bits.OnesCount64(xw & t1)
		if full {
			all0 += bits.OnesCount64(t0)
			all1 += bits.OnesCount64(t1)
		}
	}
	if want&1 != 0 {
		acc[0] += packCounts(int64(ones0), int64(all0))
	}
	if want&2 != 0 {
		acc[1] += packCounts(int64(ones1), int64(all1))
	}
	return packCounts(int64(miss), int64(covered))
}

// condSums3 is condSums for L = 3, the single-cell model's L = 2 with its
// housekeeping code, with the loop over codes unrolled as condSums2's:
// 1.6–2× faster than condSumsL at that size.
func condSums3(acc *[MaxL]uint64, active, want uint64, codes, x, obs []uint64, full bool) uint64 {
	a0, a1, a2 := -(active & 1), -(active >> 1 & 1), -(active >> 2 & 1) // all ones if code N is active
	k0, k1, k2 := active&1-1, active>>1&1-1, active>>2&1-1              // all ones if code N is inactive
	var ones0, ones1, ones2, all0, all1, all2 int
	var miss, covered int
	for w, xw := range x {
		cw := codes[3*w : 3*w+3]
		u0, u1, u2 := cw[0]&a0, cw[1]&a1, cw[2]&a2
		c2 := u0&u1 | u2&(u0|u1) // covered by at least two active codes
		c1 := (u0 | u1 | u2) &^ c2
		ow := obs[w]
		miss += bits.OnesCount64((xw ^ (c1 | c2)) & ow)
		covered += bits.OnesCount64((c1 | c2) & ow)
		t0 := cw[0] &^ (c2 | c1&k0) & ow
		t1 := cw[1] &^ (c2 | c1&k1) & ow
		t2 := cw[2] &^ (c2 | c1&k2) & ow
		ones0 += bits.OnesCount64(xw & t0)
		ones1 += bits.OnesCount64(xw & t1)
		ones2 += bits.OnesCount64(xw & t2)
		if full {
			all0 += bits.OnesCount64(t0)
			all1 += bits.OnesCount64(t1)
			all2 += bits.OnesCount64(t2)
		}
	}
	for l, c := range [3][2]int{{ones0, all0}, {ones1, all1}, {ones2, all2}} {
		if want>>uint(l)&1 != 0 {
			acc[l] += packCounts(int64(c[0]), int64(c[1]))
		}
	}
	return packCounts(int64(miss), int64(covered))
}

// condSumsLift is condSums for a step whose columns carry lift levels: the
// level of column c is Σ_j 2^j·bit c of lift[j] (len(lift) ≤ MaxCellLevelBits,
// each plane len(x) words). Besides the counts of condSums it adds to
// weight[l], for every wanted code l, the summed level of the observed ones
// that code l alone decides: Σ_j 2^j·popcount(x & S & lift[j]).
func condSumsLift(acc, weight *[MaxL]uint64, active, want uint64, L int, codes, x, obs []uint64, lift [][]uint64) uint64 {
	obs = obs[:len(x)]
	codes = codes[:len(x)*L]
	var list [MaxL]uint8
	var keep [MaxL]uint64
	n := 0
	for m := want; m != 0; m &= m - 1 {
		l := bits.TrailingZeros64(m)
		list[n], keep[n] = uint8(l), uint64(active>>uint(l)&1)-1
		n++
	}
	var ones, all, lev [MaxL]int
	var miss, covered int
	for w, xw := range x {
		cw := codes[w*L : w*L+L]
		var c1, c2 uint64
		for a := active; a != 0; a &= a - 1 {
			u := cw[bits.TrailingZeros64(a)]
			c2 |= c1 & u
			c1 = (c1 | u) &^ c2
		}
		ow := obs[w]
		miss += bits.OnesCount64((xw ^ (c1 | c2)) & ow)
		covered += bits.OnesCount64((c1 | c2) & ow)
		// This word of each plane, read once for every code; planes past
		// len(lift) stay empty.
		var pw [MaxCellLevelBits]uint64
		for j, p := range lift {
			pw[j] = p[w]
		}
		l0, l1, l2 := pw[0], pw[1], pw[2]
		for k, l := range list[:n] {
			s := cw[l] &^ (c2 | c1&keep[k]) & ow
			a := xw & s
			ones[k] += bits.OnesCount64(a)
			all[k] += bits.OnesCount64(s)
			lev[k] += bits.OnesCount64(a&l0) + bits.OnesCount64(a&l1)<<1 + bits.OnesCount64(a&l2)<<2
		}
	}
	for k, l := range list[:n] {
		acc[l] += packCounts(int64(ones[k]), int64(all[k]))
		weight[l] += uint64(lev[k])
	}
	return packCounts(int64(miss), int64(covered))
}
