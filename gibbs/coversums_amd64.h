// The body of coverSums, coverSumsBW and coverSumsBWX, included by kernel_amd64.s with
// COVERSUMS naming the function, POPCNT(src, dst) setting each 64-bit lane
// of dst to the ones of that lane of src, POPCNT_SETUP preparing the
// registers POPCNT needs (Z25–Z29 are free for it), and COUNT(src, acc) and
// FOLD(acc) for pass 2's sums over a chunk: COUNT adds the ones of src to
// acc in any form (clobbering src), FOLD turns acc into per-lane counts. A
// chunk's sums reach at most 8 steps of 64 ones per lane, 8 per byte.
// COUNT_S(s) is COUNT(s, Z11), or nothing in the variants that leave
// Σ popcount(s) to the caller (vectorKernel.sumsX).
//
// func COVERSUMS(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64) (miss uint64)
//
// FRAME is the TEXT directive's frame and argument sizes and MISS the
// result's slot. The variants with lift planes (coverSumsLift*, see
// condSumsLift) take three more arguments, lift *uint64, lstride int,
// lev *[MaxL]uint64, and define LIFT_PASS1, LIFT_ZERO, LIFT_COUNT,
// LIFT_SUM and LIFT_NEXT to count the summed level of each code's ones
// (Z12–Z15); the others define them empty.
//
// Registers across chunks: SI the chunk's first plane word, DI its x, R8 its
// obs (0: all observed), R9 the words left, R10 buf, CX the chunk's words,
// Z30 all ones, Z31 the mismatches and covered columns per lane. Loads are masked to the chunk's
// words, so nothing past x, obs or a plane's n words is read.
TEXT COVERSUMS(SB), NOSPLIT, FRAME
	MOVQ       $0xff, ff-8(SP)
	LIFT_SETUP
	MOVQ       planes+0(FP), SI
	MOVQ       x+8(FP), DI
	MOVQ       obs+16(FP), R8
	MOVQ       n+24(FP), R9
	MOVQ       buf+32(FP), R10
	VPXORQ     Z31, Z31, Z31
	VPTERNLOGQ $0xff, Z30, Z30, Z30
	POPCNT_SETUP

chunk:
	MOVQ R9, CX
	CMPQ CX, $64
	JLE  pass1
	MOVQ $64, CX

	// Pass 1, per block of 8 words: the coverage c1 (exactly one active
	// code) and c2 (at least two), the mismatches and covered columns
	// (packed as packCounts does, in Z31), and the masks
	// obs &^ c2 → buf.masks[0] and obs &^ (c1|c2) → buf.masks[1].
pass1:
	MOVQ   act+40(FP), R11
	MOVQ   na+48(FP), R12
	XORQ   DX, DX

block1:
	LANEMASK(CX, DX, AX)
	CMPQ   AX, $0xff
	JNE    tail1
	// Plain loads for whole blocks: masked loads of x and obs, which come
	// from memory rather than cache, halve the sweep's speed.
	VMOVDQU64 (DI)(DX*8), Z0 // x
	VMOVDQA64 Z30, Z1        // obs
	TESTQ  R8, R8
	JZ     cover
	VMOVDQU64 (R8)(DX*8), Z1
	JMP    cover

tail1:
	VMOVDQU64.Z (DI)(DX*8), K1, Z0
	VMOVDQA64.Z Z30, K1, Z1
	TESTQ  R8, R8
	JZ     cover
	VMOVDQU64.Z (R8)(DX*8), K1, Z1

cover:
	VPXORQ Z2, Z2, Z2 // c1
	VPXORQ Z3, Z3, Z3 // c2
	XORQ   R13, R13

coverCode:
	CMPQ   R13, R12
	JGE    masks
	MOVQ   (R11)(R13*8), R14
	ADDQ   SI, R14
	VMOVDQU64.Z (R14)(DX*8), K1, Z4 // u, the code's words
	VPANDQ  Z4, Z2, Z5              // c2 |= c1 & u
	VPORQ   Z5, Z3, Z3
	VPORQ   Z4, Z2, Z2              // c1 = (c1 | u) &^ c2
	VPANDNQ Z2, Z3, Z2
	INCQ   R13
	JMP    coverCode

masks:
	VPORQ    Z2, Z3, Z6 // c1 | c2
	VPXORQ   Z6, Z0, Z7
	VPANDQ   Z1, Z7, Z7
	POPCNT(Z7, Z7)
	VPADDQ   Z7, Z31, Z31
	VPANDQ   Z1, Z6, Z7 // the covered observed columns, counted in the high halves
	POPCNT(Z7, Z7)
	VPSLLQ   $32, Z7, Z7
	VPADDQ   Z7, Z31, Z31
	VPANDNQ  Z1, Z3, Z8 // obs &^ c2
	VPANDNQ  Z1, Z6, Z9 // obs &^ (c1|c2)
	VMOVDQU64 Z8, (R10)(DX*8)
	VMOVDQU64 Z9, 512(R10)(DX*8)
	LIFT_PASS1
	ADDQ     $8, DX
	CMPQ     DX, CX
	JLT      block1

	// Pass 2, per wanted code k: res[k] += popcount(x & s) + popcount(s)<<32
	// summed over the chunk (packCounts), s = code & mask, with the two
	// sums in Z10 and Z11.
	XORQ R14, R14

code2:
	CMPQ R14, nw+72(FP)
	JGE  next
	MOVQ wnt+56(FP), AX
	MOVQ (AX)(R14*8), AX
	ADDQ SI, AX         // the code's words
	MOVQ sel+64(FP), R15
	MOVQ (R15)(R14*8), R15
	ADDQ R10, R15       // its mask
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	LIFT_ZERO
	XORQ DX, DX

block2:
	LANEMASK(CX, DX, R11)
	VMOVDQU64.Z (AX)(DX*8), K1, Z4
	VPANDQ   (R15)(DX*8), Z4, Z4 // s
	VMOVDQU64.Z (DI)(DX*8), K1, Z0
	VPANDQ   Z0, Z4, Z5
	COUNT(Z5, Z10)
	LIFT_COUNT
	COUNT_S(Z4)
	ADDQ     $8, DX
	CMPQ     DX, CX
	JLT      block2

	LIFT_SUM
	FOLD(Z10)
	FOLD(Z11)
	VPSLLQ $32, Z11, Z11
	VPADDQ Z11, Z10, Z10
	LANESUM(Z10, Y10, X10, Y12, X12, R11)
	MOVQ   res+80(FP), R12
	ADDQ   R11, (R12)(R14*8)
	INCQ   R14
	JMP    code2

next:
	LIFT_NEXT
	SUBQ CX, R9
	JZ   done
	ADDQ $512, SI
	ADDQ $512, DI
	TESTQ R8, R8
	JZ   chunk
	ADDQ $512, R8
	JMP  chunk

done:
	VMOVDQA64 Z31, Z10
	LANESUM(Z10, Y10, X10, Y12, X12, AX)
	VZEROUPPER
	MOVQ AX, MISS
	RET
