// The body of coverSumsAVX2 and coverSumsAVX2X, included by
// kernel_avx2_amd64.s with COVERSUMS naming the function and COUNT_S(s)
// adding the byte counts of s to Y11 (coverSumsAVX2) or nothing
// (coverSumsAVX2X, which leaves Σ popcount(s) to the caller).
//
// func COVERSUMS(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64) (miss uint64)
//
// FRAME, MISS and the LIFT_ hooks are as in coversums_amd64.h; the lift
// variant keeps its level sums in Y1–Y3, with Y6 as scratch, in pass 2.
TEXT COVERSUMS(SB), NOSPLIT, FRAME
	LIFT_SETUP
	MOVQ           planes+0(FP), SI
	MOVQ           x+8(FP), DI
	MOVQ           obs+16(FP), R8
	MOVQ           n+24(FP), R9
	MOVQ           buf+32(FP), R10
	LEAQ           tailMask<>(SB), BX
	VPXOR          Y8, Y8, Y8
	VPCMPEQQ       Y9, Y9, Y9
	VPXOR          Y12, Y12, Y12
	VBROADCASTI128 nibbleOnes<>(SB), Y14
	MOVL           $0x0f0f0f0f, AX
	VMOVD          AX, X15
	VPBROADCASTD   X15, Y15

chunk:
	MOVQ R9, CX
	CMPQ CX, $64
	JLE  pass1
	MOVQ $64, CX

	// Pass 1, per step of 4 words: the coverage c1 (exactly one active
	// code) and c2 (at least two), the mismatches and covered columns
	// (packed as packCounts does, in Y8), and the masks
	// obs &^ c2 → buf.masks[0] and obs &^ (c1|c2) → buf.masks[1].
pass1:
	MOVQ  act+40(FP), R11
	MOVQ  na+48(FP), R12
	MOVQ  CX, R15
	ANDQ  $-4, R15 // the chunk's words in whole steps
	XORQ  DX, DX
	TESTQ R15, R15
	JZ    tailCheck1

block1:
	VMOVDQU (DI)(DX*8), Y0 // x
	VMOVDQA Y9, Y1         // obs
	TESTQ R8, R8
	JZ    cover
	VMOVDQU (R8)(DX*8), Y1

cover:
	VPXOR Y2, Y2, Y2 // c1
	VPXOR Y3, Y3, Y3 // c2
	XORQ  R13, R13

coverCode:
	CMPQ    R13, R12
	JGE     masks
	MOVQ    (R11)(R13*8), R14
	ADDQ    SI, R14
	VMOVDQU (R14)(DX*8), Y4 // u, the code's words
	VPAND   Y4, Y2, Y5      // c2 |= c1 & u
	VPOR    Y5, Y3, Y3
	VPOR    Y4, Y2, Y2      // c1 = (c1 | u) &^ c2
	VPANDN  Y2, Y3, Y2
	INCQ    R13
	JMP     coverCode

	// The chunk's last step, of 1 to 3 words: the same under a lane mask.
tail1:
	MOVQ       CX, AX
	SUBQ       DX, AX
	SHLQ       $5, AX
	VMOVDQU    (BX)(AX*1), Y10
	VPMASKMOVQ (DI)(DX*8), Y10, Y0
	VMOVDQA    Y10, Y1
	TESTQ      R8, R8
	JZ         coverT
	VPMASKMOVQ (R8)(DX*8), Y10, Y1

coverT:
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	XORQ  R13, R13

coverTCode:
	CMPQ       R13, R12
	JGE        masks
	MOVQ       (R11)(R13*8), R14
	ADDQ       SI, R14
	VPMASKMOVQ (R14)(DX*8), Y10, Y4
	VPAND      Y4, Y2, Y5
	VPOR       Y5, Y3, Y3
	VPOR       Y4, Y2, Y2
	VPANDN     Y2, Y3, Y2
	INCQ       R13
	JMP        coverTCode

masks:
	VPOR    Y2, Y3, Y6 // c1 | c2
	VPXOR   Y6, Y0, Y7
	VPAND   Y1, Y7, Y7
	POPCNT(Y7, Y7)
	VPADDQ  Y7, Y8, Y8
	VPAND   Y1, Y6, Y7 // the covered observed columns, counted in the high halves
	POPCNT(Y7, Y7)
	VPSLLQ  $32, Y7, Y7
	VPADDQ  Y7, Y8, Y8
	VPANDN  Y1, Y3, Y5 // obs &^ c2
	VPANDN  Y1, Y6, Y7 // obs &^ (c1|c2)
	VMOVDQU Y5, (R10)(DX*8)
	VMOVDQU Y7, 512(R10)(DX*8)
	LIFT_PASS1
	ADDQ    $4, DX
	CMPQ    DX, R15
	JLT     block1

tailCheck1:
	CMPQ DX, CX
	JLT  tail1

	// Pass 2, per wanted code k: res[k] += popcount(x & s) + popcount(s)<<32
	// summed over the chunk (packCounts), s = code & mask. The two counts are summed per byte in
	// Y10 and Y11 (at most 16 steps of 8, so no byte overflows) and into
	// lanes once per chunk.
	MOVQ CX, R13
	ANDQ $-4, R13 // the chunk's words in whole steps
	XORQ R14, R14

code2:
	CMPQ  R14, nw+72(FP)
	JGE   next
	MOVQ  wnt+56(FP), AX
	MOVQ  (AX)(R14*8), AX
	ADDQ  SI, AX         // the code's words
	MOVQ  sel+64(FP), R15
	MOVQ  (R15)(R14*8), R15
	ADDQ  R10, R15       // its mask
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	LIFT_ZERO
	XORQ  DX, DX
	TESTQ R13, R13
	JZ    tail2

block2:
	VMOVDQU (AX)(DX*8), Y4
	VPAND   (R15)(DX*8), Y4, Y4 // s
	VPAND   (DI)(DX*8), Y4, Y5  // x & s
	BYTEPC(Y5, Y5)
	VPADDB  Y5, Y10, Y10
	LIFT_COUNT
	COUNT_S(Y4)
	ADDQ    $4, DX
	CMPQ    DX, R13
	JLT     block2

	// The chunk's last 1 to 3 words, if any, under a lane mask.
tail2:
	MOVQ       CX, R11
	SUBQ       DX, R11
	JZ         sums2
	SHLQ       $5, R11
	VMOVDQU    (BX)(R11*1), Y7
	VPMASKMOVQ (AX)(DX*8), Y7, Y4
	VPAND      (R15)(DX*8), Y4, Y4
	VPMASKMOVQ (DI)(DX*8), Y7, Y0
	VPAND      Y0, Y4, Y5
	BYTEPC(Y5, Y5)
	VPADDB     Y5, Y10, Y10
	LIFT_COUNT
	COUNT_S(Y4)

sums2:
	LIFT_SUM
	VPSADBW Y12, Y10, Y10
	VPSADBW Y12, Y11, Y11
	VPSLLQ $32, Y11, Y11
	VPADDQ Y11, Y10, Y10
	LANESUM4(Y10, X10, X13, R11)
	MOVQ   res+80(FP), R12
	ADDQ   R11, (R12)(R14*8)
	INCQ   R14
	JMP    code2

next:
	LIFT_NEXT
	SUBQ  CX, R9
	JZ    done
	ADDQ  $512, SI
	ADDQ  $512, DI
	TESTQ R8, R8
	JZ    chunk
	ADDQ  $512, R8
	JMP   chunk

done:
	LANESUM4(Y8, X8, X13, AX)
	VZEROUPPER
	MOVQ AX, MISS
	RET
