//go:build goexperiment.simd && amd64

package gibbs

import (
	"math/bits"
	"simd/archsimd"
)

// useVectorKernel selects condSumsVec for the sweeps. It is decided once, at
// start-up, from the CPU's features; tests switch it off to run the Go path.
var useVectorKernel = archsimd.X86.AVX512VPOPCNTDQ() // implies AVX512F/BW/DQ/VL

// vecChunk is the number of words condSumsVec treats per chunk: the chunk's
// two coverage masks (1 KiB) and its words of x stay in L1 while every code
// is summed over them.
const vecChunk = 64

// vecScratch holds condSumsVec's masks of one chunk. A worker keeps one for
// all its rows: a fresh one per call would be zeroed per call, which costs a
// quarter of a short row's time.
type vecScratch struct{ on, off [vecChunk]uint64 }

// condSumsVec is condSums on AVX-512, 8 words per vector. It takes the codes
// code-major rather than interleaved: code l's words over the row's columns
// are planes[l*stride : l*stride+len(x)]; its other arguments and its result
// are those of condSums, which it must equal (see kernel_vec_amd64_test.go),
// except that obs may be nil when every column is observed.
//
// It replaces, per chunk of words, the loop of condSumsL
//
//	for w, xw := range x {
//		c1, c2 := coverage of word w by the active codes
//		miss += popcount((xw ^ (c1|c2)) & obs[w])
//		for l in want {
//			s := codes[w*L+l] &^ (c2 | c1&keep[l]) & obs[w]
//			sum[l] += 2*popcount(xw&s) - popcount(s)
//		}
//	}
//
// by two passes: the first builds the chunk's masks obs &^ c2 (for active
// codes) and obs &^ (c1|c2) (for inactive ones) and counts the mismatches,
// the second sums each code over the chunk with its accumulators in
// registers. Lane sums are kept modulo 2⁶⁴, so 2·popcount(x&s) − popcount(s)
// needs no signed arithmetic.
func condSumsVec(acc *[MaxL]int64, buf *vecScratch, active, want uint64, L int, planes []uint64, stride int, x, obs []uint64) (mismatch int64) {
	n := len(x)
	allObserved := obs == nil
	if !allObserved {
		obs = obs[:n:n]
	}
	ones := archsimd.BroadcastUint64x8(^uint64(0))
	var missV archsimd.Uint64x8
	tOn, tOff := &buf.on, &buf.off
	for base := 0; base < n; base += vecChunk {
		m := min(vecChunk, n-base)
		xc := x[base : base+m]
		var oc []uint64
		if !allObserved {
			oc = obs[base : base+m]
		}
		for b := 0; b < m; b += 8 {
			xv, ov := load8(xc, b), ones
			if !allObserved {
				ov = load8(oc, b)
			}
			var c1, c2 archsimd.Uint64x8
			for a := active; a != 0; a &= a - 1 {
				off := bits.TrailingZeros64(a)*stride + base
				u := load8(planes[off:off+m], b)
				c2 = c2.Or(c1.And(u))
				c1 = c1.Or(u).AndNot(c2)
			}
			cov := c1.Or(c2)
			missV = missV.Add(xv.Xor(cov).And(ov).OnesCount())
			ov.AndNot(c2).Store((*[8]uint64)(tOn[b : b+8]))
			ov.AndNot(cov).Store((*[8]uint64)(tOff[b : b+8]))
		}
		for rest := want; rest != 0; rest &= rest - 1 {
			l := bits.TrailingZeros64(rest)
			t := tOff
			if active>>uint(l)&1 != 0 {
				t = tOn
			}
			off := l*stride + base
			p := planes[off : off+m]
			var sx, ss archsimd.Uint64x8
			for b := 0; b < m; b += 8 {
				s := load8(p, b).And(archsimd.LoadUint64x8((*[8]uint64)(t[b : b+8])))
				sx = sx.Add(s.And(load8(xc, b)).OnesCount())
				ss = ss.Add(s.OnesCount())
			}
			acc[l] += int64(laneSum(sx.ShiftAllLeft(1).Sub(ss)))
		}
	}
	return int64(laneSum(missV))
}

// load8 loads words i … i+7 of s, with zeros past its end.
func load8(s []uint64, i int) archsimd.Uint64x8 {
	if len(s)-i >= 8 {
		return archsimd.LoadUint64x8((*[8]uint64)(s[i : i+8]))
	}
	return loadTail(s[i:])
}

// loadTail loads the fewer than 8 words of s, with zeros after them. It
// copies rather than using archsimd.LoadUint64x8SlicePart, whose pointer
// conversion fails the race detector's checkptr test on short slices, and
// stays out of line: it runs once per row at most.
//
//go:noinline
func loadTail(s []uint64) archsimd.Uint64x8 {
	var t [8]uint64
	copy(t[:], s)
	return archsimd.LoadUint64x8(&t)
}

// laneSum returns the sum of the lanes of v modulo 2⁶⁴.
func laneSum(v archsimd.Uint64x8) uint64 {
	h := v.GetHi().Add(v.GetLo())
	q := h.GetHi().Add(h.GetLo())
	return q.GetElem(0) + q.GetElem(1)
}
