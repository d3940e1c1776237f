//go:build amd64 && !purego

#include "textflag.h"

// weights holds 32 … 1, the weight of each byte of a 32-byte block in the
// block's contribution to s2.
DATA weights<>+0(SB)/8, $0x191a1b1c1d1e1f20
DATA weights<>+8(SB)/8, $0x1112131415161718
DATA weights<>+16(SB)/8, $0x090a0b0c0d0e0f10
DATA weights<>+24(SB)/8, $0x0102030405060708
GLOBL weights<>(SB), RODATA|NOPTR, $32

// ones16 holds sixteen 16-bit ones, for adding pairs of 16-bit lanes.
DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

// func adler32Blocks(p []byte) (sum, weighted, prefix uint64)
//
// For the blocks B_0 … B_{n−1} of 32 bytes of p (len(p) a positive multiple
// of 32, at most 5536): sum = Σ bytes, weighted = Σ_k Σ_i (32−i)·B_k[i],
// prefix = Σ_k (bytes of B_0 … B_{k−1}). Y1 holds the byte sums so far in
// four 64-bit lanes (VPSADBW), Y2 the prefix sums, Y3 the weighted sums in
// eight 32-bit lanes (VPMADDUBSW, then VPMADDWD pairs them): no lane can
// overflow within 5536 bytes.
TEXT ·adler32Blocks(SB), NOSPLIT, $0-48
	MOVQ    p_base+0(FP), SI
	MOVQ    p_len+8(FP), CX
	SHRQ    $5, CX
	VPXOR   Y0, Y0, Y0
	VPXOR   Y1, Y1, Y1
	VPXOR   Y2, Y2, Y2
	VPXOR   Y3, Y3, Y3
	VMOVDQU weights<>(SB), Y4
	VMOVDQU ones16<>(SB), Y5

loop:
	VMOVDQU    (SI), Y6
	VPADDQ     Y1, Y2, Y2
	VPSADBW    Y0, Y6, Y7
	VPADDQ     Y7, Y1, Y1
	VPMADDUBSW Y4, Y6, Y8
	VPMADDWD   Y5, Y8, Y8
	VPADDD     Y8, Y3, Y3
	ADDQ       $32, SI
	DECQ       CX
	JNZ        loop

	VEXTRACTI128 $1, Y1, X9
	VPADDQ       X9, X1, X1
	VPSHUFD      $0x4e, X1, X9
	VPADDQ       X9, X1, X1
	VMOVQ        X1, AX
	MOVQ         AX, sum+24(FP)

	VEXTRACTI128 $1, Y3, X9
	VPADDD       X9, X3, X3
	VPSHUFD      $0x4e, X3, X9
	VPADDD       X9, X3, X3
	VPSHUFD      $0xb1, X3, X9
	VPADDD       X9, X3, X3
	VMOVD        X3, AX
	MOVQ         AX, weighted+32(FP)

	VEXTRACTI128 $1, Y2, X9
	VPADDQ       X9, X2, X2
	VPSHUFD      $0x4e, X2, X9
	VPADDQ       X9, X2, X2
	VMOVQ        X2, AX
	MOVQ         AX, prefix+40(FP)
	VZEROUPPER
	RET
