//go:build amd64 && !purego

#include "textflag.h"

// func transpose64GFNI(a *[64]uint64)
//
// The 64×64 matrix is 8×8 blocks of 8×8 bits; block (R, C) is byte C of
// rows 8R … 8R+7. Its transpose is block (C, R), transposed:
//  1. VPERMB gathers each block of a group of 8 rows into one word (its
//     rows in reverse order, which step 3 wants);
//  2. 24 qword shuffles transpose the 8×8 words across the 8 registers,
//     so that register C holds blocks (0 … 7, C);
//  3. VGF2P8AFFINEQB with the identity's bytes as data and a block as the
//     matrix transposes the 8×8 bits of every block;
//  4. VPERMB spreads byte j of the 8 blocks of register C into word j:
//     output row 8C+j.
// See transpose64 for the reference.
TEXT ·transpose64GFNI(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), AX
	VMOVDQU64    blocksRev<>(SB), Z30
	VMOVDQU64    bytesT<>(SB), Z29
	VPBROADCASTQ bitIdentity<>(SB), Z28

	VPERMB 0(AX), Z30, Z0
	VPERMB 64(AX), Z30, Z1
	VPERMB 128(AX), Z30, Z2
	VPERMB 192(AX), Z30, Z3
	VPERMB 256(AX), Z30, Z4
	VPERMB 320(AX), Z30, Z5
	VPERMB 384(AX), Z30, Z6
	VPERMB 448(AX), Z30, Z7

	VPUNPCKLQDQ Z1, Z0, Z8
	VPUNPCKHQDQ Z1, Z0, Z9
	VPUNPCKLQDQ Z3, Z2, Z10
	VPUNPCKHQDQ Z3, Z2, Z11
	VPUNPCKLQDQ Z5, Z4, Z12
	VPUNPCKHQDQ Z5, Z4, Z13
	VPUNPCKLQDQ Z7, Z6, Z14
	VPUNPCKHQDQ Z7, Z6, Z15

	VSHUFI64X2 $0x88, Z10, Z8, Z0
	VSHUFI64X2 $0xdd, Z10, Z8, Z1
	VSHUFI64X2 $0x88, Z11, Z9, Z2
	VSHUFI64X2 $0xdd, Z11, Z9, Z3
	VSHUFI64X2 $0x88, Z14, Z12, Z4
	VSHUFI64X2 $0xdd, Z14, Z12, Z5
	VSHUFI64X2 $0x88, Z15, Z13, Z6
	VSHUFI64X2 $0xdd, Z15, Z13, Z7

	VSHUFI64X2 $0x88, Z4, Z0, Z8
	VSHUFI64X2 $0x88, Z6, Z2, Z9
	VSHUFI64X2 $0x88, Z5, Z1, Z10
	VSHUFI64X2 $0x88, Z7, Z3, Z11
	VSHUFI64X2 $0xdd, Z4, Z0, Z12
	VSHUFI64X2 $0xdd, Z6, Z2, Z13
	VSHUFI64X2 $0xdd, Z5, Z1, Z14
	VSHUFI64X2 $0xdd, Z7, Z3, Z15

	VGF2P8AFFINEQB $0, Z8, Z28, Z8
	VGF2P8AFFINEQB $0, Z9, Z28, Z9
	VGF2P8AFFINEQB $0, Z10, Z28, Z10
	VGF2P8AFFINEQB $0, Z11, Z28, Z11
	VGF2P8AFFINEQB $0, Z12, Z28, Z12
	VGF2P8AFFINEQB $0, Z13, Z28, Z13
	VGF2P8AFFINEQB $0, Z14, Z28, Z14
	VGF2P8AFFINEQB $0, Z15, Z28, Z15

	VPERMB Z8, Z29, Z8
	VPERMB Z9, Z29, Z9
	VPERMB Z10, Z29, Z10
	VPERMB Z11, Z29, Z11
	VPERMB Z12, Z29, Z12
	VPERMB Z13, Z29, Z13
	VPERMB Z14, Z29, Z14
	VPERMB Z15, Z29, Z15

	VMOVDQU64 Z8, 0(AX)
	VMOVDQU64 Z9, 64(AX)
	VMOVDQU64 Z10, 128(AX)
	VMOVDQU64 Z11, 192(AX)
	VMOVDQU64 Z12, 256(AX)
	VMOVDQU64 Z13, 320(AX)
	VMOVDQU64 Z14, 384(AX)
	VMOVDQU64 Z15, 448(AX)
	VZEROUPPER
	RET

// blocksRev: byte 8C+7−i of a group's register takes byte C of its row i.
DATA blocksRev<>+0(SB)/8, $0x0008101820283038
DATA blocksRev<>+8(SB)/8, $0x0109111921293139
DATA blocksRev<>+16(SB)/8, $0x020a121a222a323a
DATA blocksRev<>+24(SB)/8, $0x030b131b232b333b
DATA blocksRev<>+32(SB)/8, $0x040c141c242c343c
DATA blocksRev<>+40(SB)/8, $0x050d151d252d353d
DATA blocksRev<>+48(SB)/8, $0x060e161e262e363e
DATA blocksRev<>+56(SB)/8, $0x070f171f272f373f
GLOBL blocksRev<>(SB), RODATA|NOPTR, $64

// bytesT: the transpose of 8×8 bytes; byte 8j+R takes byte 8R+j.
DATA bytesT<>+0(SB)/8, $0x3830282018100800
DATA bytesT<>+8(SB)/8, $0x3931292119110901
DATA bytesT<>+16(SB)/8, $0x3a322a221a120a02
DATA bytesT<>+24(SB)/8, $0x3b332b231b130b03
DATA bytesT<>+32(SB)/8, $0x3c342c241c140c04
DATA bytesT<>+40(SB)/8, $0x3d352d251d150d05
DATA bytesT<>+48(SB)/8, $0x3e362e261e160e06
DATA bytesT<>+56(SB)/8, $0x3f372f271f170f07
GLOBL bytesT<>(SB), RODATA|NOPTR, $64

// bitIdentity: byte k is 1<<k.
DATA bitIdentity<>+0(SB)/8, $0x8040201008040201
GLOBL bitIdentity<>(SB), RODATA|NOPTR, $8
