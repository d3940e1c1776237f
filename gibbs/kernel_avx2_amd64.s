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
