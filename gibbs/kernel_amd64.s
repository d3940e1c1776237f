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
