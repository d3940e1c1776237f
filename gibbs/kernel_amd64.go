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
	if !(x.HasAVX2 && x.HasAVX512F && x.HasBMI2) {
		return nil
	}
	if x.HasAVX512VPOPCNTDQ {
		ks = append(ks, vectorKernel{"avx512-vpopcntdq", coverSums})
	}
	if x.HasAVX512BW {
		ks = append(ks, vectorKernel{"avx512bw", coverSumsBW})
	}
	return ks
}()

// vectorKernel is one assembly variant of coverSums.
type vectorKernel struct {
	name string
	sums coverSumsFunc
}

// coverSumsFunc is the signature of coverSums and its variants.
type coverSumsFunc func(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64) uint64

// useVectorKernel selects condSumsVec for the sweeps; it is decided once, at
// start-up, and tests switch it off to run the Go path. coverSumsVec is the
// variant condSumsVec calls.
var (
	useVectorKernel = len(vectorKernels) > 0
	coverSumsVec    = func() vectorKernel {
		if len(vectorKernels) == 0 {
			return vectorKernel{}
		}
		return vectorKernels[0]
	}()
)

// vecChunk is the number of words coverSums treats per chunk: the chunk's two
// coverage masks (1 KiB) and its words of x stay in L1 while every code is
// summed over them. kernel_amd64.s assumes 64.
const vecChunk = 64

// vecScratch is a worker's scratch space for condSumsVec. A worker keeps one
// for all its rows: zeroing a fresh one per call would cost a quarter of a
// short row's time.
type vecScratch struct {
	// masks[0] holds a chunk's obs &^ c2 (the columns an active code can
	// change), masks[1] its obs &^ (c1|c2) (those of an inactive code).
	// coverSums writes them; they must be the first field.
	masks [2][vecChunk]uint64
	// The codes coverSums reads, as byte offsets into planes, and its sums.
	act, wnt, sel [MaxL]int
	res           [MaxL]uint64
}

// condSumsVec is condSums on AVX-512, 8 words per vector. It takes the codes
// code-major rather than interleaved: code l's words over the row's columns
// are planes[l*stride : l*stride+len(x)]; its other arguments and its result
// are those of condSums, which it must equal (see kernel_amd64_test.go),
// except that obs may be nil when every column is observed.
//
// It replaces, per chunk of vecChunk words, the loop of condSumsL
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
// by two passes (coverSums in kernel_amd64.s): the first builds the chunk's
// masks obs &^ c2 (for active codes) and obs &^ (c1|c2) (for inactive ones)
// and counts the mismatches, the second sums each wanted code over the chunk
// with its accumulators in registers. Sums are kept modulo 2⁶⁴, so
// 2·popcount(x&s) − popcount(s) needs no signed arithmetic.
func condSumsVec(acc *[MaxL]int64, buf *vecScratch, active, want uint64, L int, planes []uint64, stride int, x, obs []uint64) (mismatch int64) {
	return condSumsWith(coverSumsVec.sums, acc, buf, active, want, L, planes, stride, x, obs)
}

// condSumsWith is condSumsVec with the assembly variant sums.
func condSumsWith(sums coverSumsFunc, acc *[MaxL]int64, buf *vecScratch, active, want uint64, L int, planes []uint64, stride int, x, obs []uint64) int64 {
	n := len(x)
	if n == 0 {
		return 0
	}
	var obsp *uint64
	if obs != nil {
		obsp = &obs[:n][0]
	}
	if used := active | want; used != 0 {
		// Every word the assembly reads lies in planes.
		_ = planes[(63-bits.LeadingZeros64(used))*stride+n-1]
	}
	na, nw := 0, 0
	for a := active; a != 0; a &= a - 1 {
		buf.act[na] = bits.TrailingZeros64(a) * stride * 8
		na++
	}
	for m := want; m != 0; m &= m - 1 {
		l := bits.TrailingZeros64(m)
		buf.wnt[nw], buf.sel[nw], buf.res[nw] = l*stride*8, 0, 0
		if active>>uint(l)&1 == 0 {
			buf.sel[nw] = vecChunk * 8
		}
		nw++
	}
	miss := sums(&planes[0], &x[0], obsp, n, buf, &buf.act, na, &buf.wnt, &buf.sel, nw, &buf.res)
	k := 0
	for m := want; m != 0; m &= m - 1 {
		acc[bits.TrailingZeros64(m)] += int64(buf.res[k])
		k++
	}
	return int64(miss)
}

// coverSums is condSumsVec's loop, in kernel_amd64.s (and
// coversums_amd64.h), counting ones with VPOPCNTQ. For the n words of x
// (and obs; nil means all observed) it sums, for k < nw, the code whose words
// start wnt[k] bytes into planes, under the mask that starts sel[k] bytes into
// buf (0: the code is active, vecChunk*8: inactive), into res[k] (which it
// adds to), with the coverage built from the na active codes at act[:na]. It
// returns the mismatches. n must be positive.
//
//go:noescape
func coverSums(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64) (miss uint64)

// coverSumsBW is coverSums for CPUs with AVX-512BW but not VPOPCNTDQ: it
// counts ones with a nibble table instead.
//
//go:noescape
func coverSumsBW(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64) (miss uint64)
