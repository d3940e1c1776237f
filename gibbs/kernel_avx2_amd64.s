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
// Y8 the mismatches and covered columns per lane, Y9 all ones, Y12 zero, Y13 scratch, Y14 the
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

// Variants without lift planes: the hooks of coversums_avx2_amd64.h are
// empty.
#define FRAME $0-96
#define MISS miss+88(FP)
#define LIFT_SETUP
#define LIFT_PASS1
#define LIFT_ZERO
#define LIFT_COUNT
#define LIFT_SUM
#define LIFT_NEXT

// coverSumsAVX2 sums popcount(x & s) and popcount(s) per wanted code.
#define COVERSUMS ·coverSumsAVX2
#define COUNT_S(s) \
	BYTEPC(s, s) \
	VPADDB s, Y11, Y11
#include "coversums_avx2_amd64.h"
#undef COVERSUMS
#undef COUNT_S

// coverSumsAVX2X sums popcount(x & s) alone: for fully observed rows
// Σ popcount(s) depends only on the row's active codes, and the sampler
// takes it from a per-step cache (see stepSpec.totals).
#define COVERSUMS ·coverSumsAVX2X
#define COUNT_S(s)
#include "coversums_avx2_amd64.h"
#undef COVERSUMS
#undef COUNT_S

// coverSumsLiftAVX2 is coverSumsAVX2 with lift planes (see the lift
// variants in kernel_amd64.s): pass 1 stores a chunk's x & plane j in
// buf.lift[j], pass 2 sums the byte counts of s & buf.lift[j] in Y1–Y3.
#undef FRAME
#undef MISS
#undef LIFT_SETUP
#undef LIFT_PASS1
#undef LIFT_ZERO
#undef LIFT_COUNT
#undef LIFT_SUM
#undef LIFT_NEXT
#define FRAME $16-120
#define MISS miss+112(FP)
#define LIFT_SETUP \
	MOVQ lift+88(FP), R13    \
	MOVQ R13, lp-8(SP)       \
	MOVQ lstride+96(FP), R13 \
	SHLQ $3, R13             \
	MOVQ R13, ls-16(SP)
#define LIFT_PASS1 \
	MOVQ    lp-8(SP), R14        \
	VMOVDQU (R14)(DX*8), Y2      \
	VPAND   Y0, Y2, Y2           \
	VMOVDQU Y2, 1024(R10)(DX*8)  \
	ADDQ    ls-16(SP), R14       \
	VMOVDQU (R14)(DX*8), Y2      \
	VPAND   Y0, Y2, Y2           \
	VMOVDQU Y2, 1536(R10)(DX*8)  \
	ADDQ    ls-16(SP), R14       \
	VMOVDQU (R14)(DX*8), Y2      \
	VPAND   Y0, Y2, Y2           \
	VMOVDQU Y2, 2048(R10)(DX*8)
#define LIFT_ZERO \
	VPXOR Y1, Y1, Y1 \
	VPXOR Y2, Y2, Y2 \
	VPXOR Y3, Y3, Y3
#define LIFT_COUNT \
	VPAND  1024(R10)(DX*8), Y4, Y6 \
	BYTEPC(Y6, Y6)                 \
	VPADDB Y6, Y1, Y1              \
	VPAND  1536(R10)(DX*8), Y4, Y6 \
	BYTEPC(Y6, Y6)                 \
	VPADDB Y6, Y2, Y2              \
	VPAND  2048(R10)(DX*8), Y4, Y6 \
	BYTEPC(Y6, Y6)                 \
	VPADDB Y6, Y3, Y3
#define LIFT_SUM \
	VPSADBW Y12, Y1, Y1           \
	VPSADBW Y12, Y2, Y2           \
	VPSADBW Y12, Y3, Y3           \
	VPSLLQ  $1, Y2, Y2            \
	VPSLLQ  $2, Y3, Y3            \
	VPADDQ  Y2, Y1, Y1            \
	VPADDQ  Y3, Y1, Y1            \
	LANESUM4(Y1, X1, X13, R11)    \
	MOVQ    lev+104(FP), R12      \
	ADDQ    R11, (R12)(R14*8)
#define LIFT_NEXT ADDQ $512, lp-8(SP)
#define COVERSUMS ·coverSumsLiftAVX2
#define COUNT_S(s) \
	BYTEPC(s, s) \
	VPADDB s, Y11, Y11
#include "coversums_avx2_amd64.h"
