//go:build amd64 && !purego

#include "textflag.h"

// LANESUM sets R to the sum of the 8 lanes of Z (modulo 2⁶⁴), using Y and X
// registers numbered T as scratch.
#define LANESUM(Z, Y, X, YT, XT, R) \
	VEXTRACTI64X4 $1, Z, YT \
	VPADDQ        YT, Y, Y  \
	VEXTRACTI128  $1, Y, XT \
	VPADDQ        XT, X, X  \
	VPSHUFD       $0x4e, X, XT \
	VPADDQ        XT, X, X  \
	VMOVQ         X, R

// LANEMASK sets K1 to the lanes of the block of 8 words at word B of a chunk
// of M words that lie in the chunk, using R as scratch.
#define LANEMASK(M, B, R) \
	MOVQ  M, R              \
	SUBQ  B, R              \
	BZHIQ R, ff-8(SP), R    \
	KMOVW R, K1

// Variants without lift planes: the hooks of coversums_amd64.h are empty.
#define FRAME $8-96
#define MISS miss+88(FP)
#define LIFT_SETUP
#define LIFT_PASS1
#define LIFT_ZERO
#define LIFT_COUNT
#define LIFT_SUM
#define LIFT_NEXT

// coverSums counts with AVX-512 VPOPCNTDQ.
#define COVERSUMS ·coverSums
#define POPCNT_SETUP
#define POPCNT(src, dst) VPOPCNTQ src, dst
#define COUNT(src, acc) \
	VPOPCNTQ src, src \
	VPADDQ   src, acc, acc
#define FOLD(acc)
#define COUNT_S(s) COUNT(s, Z11)
#include "coversums_amd64.h"
#undef COVERSUMS
#undef COUNT_S
#undef POPCNT_SETUP
#undef POPCNT
#undef COUNT
#undef FOLD

// coverSumsBW counts with AVX-512BW alone, for CPUs without VPOPCNTDQ
// (Skylake and Cascade Lake Xeons): each byte's two nibbles are looked up in
// a 16-entry table (VPSHUFB) and the byte counts of a lane summed (VPSADBW
// against zero). Z28 holds the table in every 128-bit lane, Z29 the nibble
// mask, Z25 zero; Z26 and Z27 are scratch.
#define COVERSUMS ·coverSumsBW
#define POPCNT_SETUP \
	MOVQ          $0x0302020102010100, AX \
	VPBROADCASTQ  AX, Z28                 \
	MOVQ          $0x0403030203020201, AX \
	VPBROADCASTQ  AX, Z27                 \
	VPUNPCKLQDQ   Z27, Z28, Z28           \
	MOVL          $0x0f0f0f0f, AX         \
	VPBROADCASTD  AX, Z29                 \
	VPXORQ        Z25, Z25, Z25
#define BYTEPC(src, dst) \
	VPANDQ  src, Z29, Z26 \
	VPSRLQ  $4, src, Z27  \
	VPANDQ  Z27, Z29, Z27 \
	VPSHUFB Z26, Z28, Z26 \
	VPSHUFB Z27, Z28, Z27 \
	VPADDB  Z26, Z27, dst
#define POPCNT(src, dst) \
	BYTEPC(src, Z26) \
	VPSADBW Z25, Z26, dst
// Pass 2 sums bytes over a chunk and folds them into lanes once.
#define COUNT(src, acc) \
	BYTEPC(src, src) \
	VPADDB src, acc, acc
#define FOLD(acc) VPSADBW Z25, acc, acc
#define COUNT_S(s) COUNT(s, Z11)
#include "coversums_amd64.h"
#undef COVERSUMS
#undef COUNT_S

// coverSumsBWX is coverSumsBW without the popcount(s) half of the sums.
// (A VPOPCNTQ variant of it measured no faster: there popcount is one
// instruction.)
#define COVERSUMS ·coverSumsBWX
#define COUNT_S(s)
#include "coversums_amd64.h"

// The lift variants (coverSumsLift, coverSumsLiftBW) also sum, per wanted
// code, the level of its ones: pass 1 stores each chunk's x & plane j
// (j < 3, planes lstride words apart from lift) in buf.lift[j], and pass 2
// counts s & buf.lift[j] into Z12–Z14 and adds Σ_j 2^j·count to lev[k].
// The plane pointer advances by a chunk in the frame slot lp.
#undef FRAME
#undef MISS
#undef LIFT_SETUP
#undef LIFT_PASS1
#undef LIFT_ZERO
#undef LIFT_COUNT
#undef LIFT_SUM
#undef LIFT_NEXT
#define FRAME $24-120
#define MISS miss+112(FP)
#define LIFT_SETUP \
	MOVQ lift+88(FP), R13   \
	MOVQ R13, lp-16(SP)     \
	MOVQ lstride+96(FP), R13 \
	SHLQ $3, R13            \
	MOVQ R13, ls-24(SP)
#define LIFT_PASS1 \
	MOVQ        lp-16(SP), R13            \
	VMOVDQU64.Z (R13)(DX*8), K1, Z12      \
	VPANDQ      Z0, Z12, Z12              \
	VMOVDQU64   Z12, 1024(R10)(DX*8)      \
	ADDQ        ls-24(SP), R13            \
	VMOVDQU64.Z (R13)(DX*8), K1, Z12      \
	VPANDQ      Z0, Z12, Z12              \
	VMOVDQU64   Z12, 1536(R10)(DX*8)      \
	ADDQ        ls-24(SP), R13            \
	VMOVDQU64.Z (R13)(DX*8), K1, Z12      \
	VPANDQ      Z0, Z12, Z12              \
	VMOVDQU64   Z12, 2048(R10)(DX*8)
#define LIFT_ZERO \
	VPXORQ Z12, Z12, Z12 \
	VPXORQ Z13, Z13, Z13 \
	VPXORQ Z14, Z14, Z14
#define LIFT_COUNT \
	VPANDQ 1024(R10)(DX*8), Z4, Z15 \
	COUNT(Z15, Z12)                 \
	VPANDQ 1536(R10)(DX*8), Z4, Z15 \
	COUNT(Z15, Z13)                 \
	VPANDQ 2048(R10)(DX*8), Z4, Z15 \
	COUNT(Z15, Z14)
#define LIFT_SUM \
	FOLD(Z12)                              \
	FOLD(Z13)                              \
	FOLD(Z14)                              \
	VPSLLQ $1, Z13, Z13                    \
	VPSLLQ $2, Z14, Z14                    \
	VPADDQ Z13, Z12, Z12                   \
	VPADDQ Z14, Z12, Z12                   \
	LANESUM(Z12, Y12, X12, Y15, X15, R11)  \
	MOVQ   lev+104(FP), R12                \
	ADDQ   R11, (R12)(R14*8)
#define LIFT_NEXT ADDQ $512, lp-16(SP)

// coverSumsLift is coverSums with lift planes.
#undef COVERSUMS
#undef COUNT_S
#undef POPCNT_SETUP
#undef POPCNT
#undef COUNT
#undef FOLD
#define COVERSUMS ·coverSumsLift
#define POPCNT_SETUP
#define POPCNT(src, dst) VPOPCNTQ src, dst
#define COUNT(src, acc) \
	VPOPCNTQ src, src \
	VPADDQ   src, acc, acc
#define FOLD(acc)
#define COUNT_S(s) COUNT(s, Z11)
#include "coversums_amd64.h"
#undef COVERSUMS
#undef POPCNT_SETUP
#undef POPCNT
#undef COUNT
#undef FOLD

// coverSumsLiftBW is coverSumsBW with lift planes.
#define COVERSUMS ·coverSumsLiftBW
#define POPCNT_SETUP \
	MOVQ          $0x0302020102010100, AX \
	VPBROADCASTQ  AX, Z28                 \
	MOVQ          $0x0403030203020201, AX \
	VPBROADCASTQ  AX, Z27                 \
	VPUNPCKLQDQ   Z27, Z28, Z28           \
	MOVL          $0x0f0f0f0f, AX         \
	VPBROADCASTD  AX, Z29                 \
	VPXORQ        Z25, Z25, Z25
#define POPCNT(src, dst) \
	BYTEPC(src, Z26) \
	VPSADBW Z25, Z26, dst
#define COUNT(src, acc) \
	BYTEPC(src, src) \
	VPADDB src, acc, acc
#define FOLD(acc) VPSADBW Z25, acc, acc
#include "coversums_amd64.h"
