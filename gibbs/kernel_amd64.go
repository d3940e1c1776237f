//go:build amd64 && !purego

package gibbs

import (
	"math/bits"

	"golang.org/x/sys/cpu"
)

// vectorKernels lists the assembly variants of coverSums this CPU can run,
// fastest first (x/sys/cpu also checks that the OS saves the AVX-512
// registers).
var vectorKernels = func() (ks []vectorKernel) {
	x := cpu.X86
	if x.HasAVX2 && x.HasAVX512F && x.HasBMI2 {
		if x.HasAVX512VPOPCNTDQ {
			ks = append(ks, vectorKernel{"avx512-vpopcntdq", coverSums, nil, coverSumsLift})
		}
		if x.HasAVX512BW {
			ks = append(ks, vectorKernel{"avx512bw", coverSumsBW, coverSumsBWX, coverSumsLiftBW})
		}
	}
	if x.HasAVX2 {
		ks = append(ks, vectorKernel{"avx2", coverSumsAVX2, coverSumsAVX2X, coverSumsLiftAVX2})
	}
	return ks
}()

// vectorKernel is one assembly variant of coverSums.
type vectorKernel struct {
	name string
	sums coverSumsFunc
	// sumsX, when not nil, sums popcount(x & s) alone, for rows whose
	// Σ popcount(s) comes from a stepTotals cache (vecRow.totals).
	sumsX coverSumsFunc
	// lift is sums that also counts the summed level of each code's ones
	// over lift planes (condSumsLift).
	lift coverSumsLiftFunc
}

// coverSumsLiftFunc is the signature of the lift variants: coverSums's
// arguments, then MaxCellLevelBits planes lstride words apart from lift,
// and the levels' sums.
type coverSumsLiftFunc func(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64, lift *uint64, lstride int, lev *[MaxL]uint64) uint64

// hasSumsX reports whether k can leave Σ popcount(s) to a stepTotals.
func (k vectorKernel) hasSumsX() bool { return k.sumsX != nil }

// coverSumsFunc is the signature of coverSums and its variants.
type coverSumsFunc func(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64) uint64

// vecChunk is the number of words coverSums treats per chunk: the chunk's two
// coverage masks (1 KiB) and its words of x stay in L1 while every code is
// summed over them. kernel_amd64.s assumes 64.
const vecChunk = 64

// vecScratch is a worker's scratch space for the vector kernel. A worker
// keeps one for all its rows: zeroing a fresh one per call would cost a
// quarter of a short row's time.
type vecScratch struct {
	// masks[0] holds a chunk's obs &^ c2 (the columns an active code can
	// change), masks[1] its obs &^ (c1|c2) (those of an inactive code).
	// coverSums writes them; they must be the first field.
	masks [2][vecChunk]uint64
	// lift[j] holds a chunk's x & lift plane j (the lift variants); the
	// assembly addresses it right after masks.
	lift [MaxCellLevelBits][vecChunk]uint64
}

// vecRow is one row's work for coverSums during a scan: the codes it reads,
// which depend on the row's active and wanted codes but not on the column
// segment, so they are listed once per scan rather than once per segment,
// and the sums, which coverSums adds to over the segments.
type vecRow struct {
	act, wnt, sel [MaxL]int // byte offsets of the codes' words, and of the masks
	na, nw        int
	top, stride   int // highest code read, and words per code
	want          uint64
	res           [MaxL]uint64
	lev           [MaxL]uint64 // the lift variants' level sums
	// totals, when not nil, holds Σ popcount(s) of every code over the
	// whole row (from stepTotals): scan then uses the kernel's sumsX and
	// add subtracts them.
	totals *[MaxL]int64
}

// prepare lists the codes of a row whose codes are active, for the sums of
// the codes in want, over planes of stride words per code, and clears the
// sums.
func (v *vecRow) prepare(active, want uint64, stride int) {
	v.na, v.nw, v.top, v.stride, v.want, v.totals = 0, 0, -1, stride, want, nil
	if used := active | want; used != 0 {
		v.top = 63 - bits.LeadingZeros64(used)
	}
	for a := active; a != 0; a &= a - 1 {
		v.act[v.na] = bits.TrailingZeros64(a) * stride * 8
		v.na++
	}
	for m := want; m != 0; m &= m - 1 {
		l := bits.TrailingZeros64(m)
		v.wnt[v.nw], v.sel[v.nw], v.res[v.nw], v.lev[v.nw] = l*stride*8, 0, 0, 0
		if active>>uint(l)&1 == 0 {
			v.sel[v.nw] = vecChunk * 8
		}
		v.nw++
	}
}

// scan adds the row's sums over one column segment, whose code words start
// at planes[0] (code l's at planes[l*stride]), with the variant kern, and
// returns the segment's mismatches and covered columns, packed; obs may be
// nil when every column is observed.
func (v *vecRow) scan(kern vectorKernel, buf *vecScratch, planes []uint64, x, obs []uint64) uint64 {
	n := len(x)
	if n == 0 {
		return 0
	}
	var obsp *uint64
	if obs != nil {
		obsp = &obs[:n][0]
	}
	if v.top >= 0 {
		// Every word the assembly reads lies in planes.
		_ = planes[v.top*v.stride+n-1]
	}
	sums := kern.sums
	if v.totals != nil {
		sums = kern.sumsX
	}
	return sums(&planes[0], &x[0], obsp, n, buf, &v.act, v.na, &v.wnt, &v.sel, v.nw, &v.res)
}

// scanLift is scan with lift planes: lift[j*lstride:] holds plane j's words
// over the segment's columns (MaxCellLevelBits planes; each readable for a
// whole block of 8 words past n). The levels' sums go to v.lev.
func (v *vecRow) scanLift(kern vectorKernel, buf *vecScratch, planes []uint64, x, obs []uint64, lift []uint64, lstride int) uint64 {
	n := len(x)
	if n == 0 {
		return 0
	}
	var obsp *uint64
	if obs != nil {
		obsp = &obs[:n][0]
	}
	if v.top >= 0 {
		_ = planes[v.top*v.stride+n-1]
	}
	_ = lift[(MaxCellLevelBits-1)*lstride+n-1]
	return kern.lift(&planes[0], &x[0], obsp, n, buf, &v.act, v.na, &v.wnt, &v.sel, v.nw, &v.res, &lift[0], lstride, &v.lev)
}

// setTotals makes the row's scans leave Σ popcount(s) to t, the totals of
// the row's active codes (see stepTotals); prepare clears it.
func (v *vecRow) setTotals(t *[MaxL]int64) { v.totals = t }

// add adds the row's sums to acc (code l's to acc[l]) and the lift
// variants' level sums to lev.
func (v *vecRow) add(acc, lev *[MaxL]uint64) {
	k := 0
	for m := v.want; m != 0; m &= m - 1 {
		l := bits.TrailingZeros64(m)
		acc[l] += v.res[k]
		lev[l] += v.lev[k]
		if v.totals != nil {
			acc[l] += packCounts(0, v.totals[l])
		}
		k++
	}
}

// coverSums is the vector kernel's loop, in kernel_amd64.s and
// coversums_amd64.h, counting ones with VPOPCNTQ; vecRow prepares its
// arguments. It takes the codes code-major rather than interleaved: code
// l's words over the row's columns start wnt[k] bytes (l·stride words) into
// planes. For the n words of x (and obs; nil means all observed) it adds to
// res[k] the sum of the k-th wanted code, under the mask that starts sel[k]
// bytes into buf (0: the code is active, vecChunk*8: inactive), with the
// coverage built from the na active codes at act[:na], and returns the
// mismatches and covered columns, packed. n must be positive. It must equal
// condSums (see kernel_amd64_test.go).
//
// It replaces, per chunk of vecChunk words, the loop of condSumsL
//
//	for w, xw := range x {
//		c1, c2 := coverage of word w by the active codes
//		miss += popcount((xw ^ (c1|c2)) & obs[w])
//		covered += popcount((c1|c2) & obs[w])
//		for l in want {
//			s := codes[w*L+l] &^ (c2 | c1&keep[l]) & obs[w]
//			sum[l] += popcount(xw&s) + popcount(s)<<32
//		}
//	}
//
// by two passes: the first builds the chunk's masks obs &^ c2 (for active
// codes) and obs &^ (c1|c2) (for inactive ones) and counts the mismatches
// and covered columns, the second sums each wanted code over the chunk with
// its accumulators in registers. Both results are packed as packCounts
// packs them, so each lane adds both counts at once.
//
//go:noescape
func coverSums(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64) (miss uint64)

// coverSumsBW is coverSums for CPUs with AVX-512BW but not VPOPCNTDQ: it
// counts ones with a nibble table instead.
//
//go:noescape
func coverSumsBW(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64) (miss uint64)

// coverSumsAVX2 is coverSums for CPUs with AVX2 but not AVX-512
// (kernel_avx2_amd64.s): four words per step, a nibble table for the ones.
//
//go:noescape
func coverSumsAVX2(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64) (miss uint64)

// coverSumsAVX2X is coverSumsAVX2 without the popcount(s) half of the sums
// (see vectorKernel.sumsX).
//
//go:noescape
func coverSumsAVX2X(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64) (miss uint64)

// coverSumsBWX is coverSumsBW without the popcount(s) half of the sums
// (see vectorKernel.sumsX).
//
//go:noescape
func coverSumsBWX(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64) (miss uint64)

// coverSumsLift is coverSums with lift planes (see condSumsLift).
//
//go:noescape
func coverSumsLift(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64, lift *uint64, lstride int, lev *[MaxL]uint64) (miss uint64)

// coverSumsLiftBW is coverSumsBW with lift planes.
//
//go:noescape
func coverSumsLiftBW(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64, lift *uint64, lstride int, lev *[MaxL]uint64) (miss uint64)

// coverSumsLiftAVX2 is coverSumsAVX2 with lift planes.
//
//go:noescape
func coverSumsLiftAVX2(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64, lift *uint64, lstride int, lev *[MaxL]uint64) (miss uint64)
