//go:build amd64 && !purego

#include "textflag.h"

// The AVX2 variant of coverSums, for CPUs without AVX-512 (AMD Zen 2 and 3,
// Intel before Skylake-SP): the same two passes over chunks of vecChunk
// words as coversums_amd64.h, four words per step in Y registers. Ones are
// counted with a nibble table (VPSHUFB) and VPSADBW, as coverSumsBW does.
// There are no mask registers: a chunk's last step of fewer than four words
// loads with VPMASKMOVQ, whose masked-off lanes read as zero and never
// fault, under a lane mask from tailMask.
//
// Registers: SI the chunk's first plane word, DI its x, R8 its obs (0: all
// observed), R9 the words left, R10 buf, CX the chunk's words, BX tailMask.
// Y8 the mismatches per lane, Y9 all ones, Y12 zero, Y13 scratch, Y14 the
// nibble table in both 128-bit lanes, Y15 the nibble mask; pass 1 holds its
// lane mask in Y10, pass 2 in Y7; the chunk's words in whole steps are in
// R15 in pass 1, R13 in pass 2.

// tailMask<>+32·r has the first r of four 64-bit lanes set.
DATA tailMask<>+0x00(SB)/8, $0
DATA tailMask<>+0x08(SB)/8, $0
DATA tailMask<>+0x10(SB)/8, $0
DATA tailMask<>+0x18(SB)/8, $0
DATA tailMask<>+0x20(SB)/8, $-1
DATA tailMask<>+0x28(SB)/8, $0
DATA tailMask<>+0x30(SB)/8, $0
DATA tailMask<>+0x38(SB)/8, $0
DATA tailMask<>+0x40(SB)/8, $-1
DATA tailMask<>+0x48(SB)/8, $-1
DATA tailMask<>+0x50(SB)/8, $0
DATA tailMask<>+0x58(SB)/8, $0
DATA tailMask<>+0x60(SB)/8, $-1
DATA tailMask<>+0x68(SB)/8, $-1
DATA tailMask<>+0x70(SB)/8, $-1
DATA tailMask<>+0x78(SB)/8, $0
GLOBL tailMask<>(SB), RODATA|NOPTR, $128

// nibbleOnes<> holds the ones of each nibble value 0 … 15.
DATA nibbleOnes<>+0x00(SB)/8, $0x0302020102010100
DATA nibbleOnes<>+0x08(SB)/8, $0x0403030203020201
GLOBL nibbleOnes<>(SB), RODATA|NOPTR, $16

// BYTEPC sets each byte of dst to the ones of that byte of src; dst may be
// src. Y13 is scratch.
#define BYTEPC(src, dst) \
	VPAND   src, Y15, Y13 \
	VPSRLQ  $4, src, dst  \
	VPAND   dst, Y15, dst \
	VPSHUFB Y13, Y14, Y13 \
	VPSHUFB dst, Y14, dst \
	VPADDB  Y13, dst, dst

// POPCNT sets each 64-bit lane of dst to the ones of that lane of src; dst
// may be src.
#define POPCNT(src, dst) \
	BYTEPC(src, dst) \
	VPSADBW Y12, dst, dst

// LANESUM4 sets R to the sum of the 4 lanes of Y (X its low half), with XT
// as scratch.
#define LANESUM4(Y, X, XT, R) \
	VEXTRACTI128 $1, Y, XT \
	VPADDQ       XT, X, X  \
	VPSHUFD      $0x4e, X, XT \
	VPADDQ       XT, X, X  \
	VMOVQ        X, R

// func coverSumsAVX2(planes, x, obs *uint64, n int, buf *vecScratch, act *[MaxL]int, na int, wnt, sel *[MaxL]int, nw int, res *[MaxL]uint64) (miss uint64)
TEXT ·coverSumsAVX2(SB), NOSPLIT, $0-96
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
	// code) and c2 (at least two), the mismatches, and the masks
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
	VPANDN  Y1, Y3, Y5 // obs &^ c2
	VPANDN  Y1, Y6, Y7 // obs &^ (c1|c2)
	VMOVDQU Y5, (R10)(DX*8)
	VMOVDQU Y7, 512(R10)(DX*8)
	ADDQ    $4, DX
	CMPQ    DX, R15
	JLT     block1

tailCheck1:
	CMPQ DX, CX
	JLT  tail1

	// Pass 2, per wanted code k: res[k] += Σ 2·popcount(x & s) − popcount(s)
	// over the chunk, s = code & mask. The two counts are summed per byte in
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
	XORQ  DX, DX
	TESTQ R13, R13
	JZ    tail2

block2:
	VMOVDQU (AX)(DX*8), Y4
	VPAND   (R15)(DX*8), Y4, Y4 // s
	VPAND   (DI)(DX*8), Y4, Y5  // x & s
	BYTEPC(Y5, Y5)
	VPADDB  Y5, Y10, Y10
	BYTEPC(Y4, Y4)
	VPADDB  Y4, Y11, Y11
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
	BYTEPC(Y4, Y4)
	VPADDB     Y4, Y11, Y11

sums2:
	VPSADBW Y12, Y10, Y10
	VPSADBW Y12, Y11, Y11
	VPSLLQ $1, Y10, Y10
	VPSUBQ Y11, Y10, Y10
	LANESUM4(Y10, X10, X13, R11)
	MOVQ   res+80(FP), R12
	ADDQ   R11, (R12)(R14*8)
	INCQ   R14
	JMP    code2

next:
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
	MOVQ AX, miss+88(FP)
	RET
