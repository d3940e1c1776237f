//go:build amd64 && !purego

#include "textflag.h"

DATA maxFloat64<>+0(SB)/8, $0x7fefffffffffffff
GLOBL maxFloat64<>(SB), RODATA|NOPTR, $8

// func checkEntriesAVX2(minor []int32, val []float64, lim uint32) bool
//
// Y0 gathers the largest minor index (VPMAXUD: unsigned, so a negative one
// is huge), Y5 the lanes of values found ≥ 0 and ≤ MaxFloat64 (ordered
// comparisons: NaN fails both). At the end, max(Y0, lim−1) = lim−1 holds
// lane by lane exactly when every index is below lim.
TEXT ·checkEntriesAVX2(SB), NOSPLIT, $0-57
	MOVQ         minor_base+0(FP), SI
	MOVQ         minor_len+8(FP), CX
	MOVQ         val_base+24(FP), DI
	ANDQ         $-8, CX
	VPXOR        Y0, Y0, Y0
	VPCMPEQD     Y5, Y5, Y5
	VXORPD       Y6, Y6, Y6
	VBROADCASTSD maxFloat64<>(SB), Y7
	TESTQ        CX, CX
	JZ           reduce

loop:
	VMOVDQU  (SI), Y1
	VPMAXUD  Y1, Y0, Y0
	VMOVUPD  (DI), Y2
	VMOVUPD  32(DI), Y3
	VCMPPD   $0x1d, Y6, Y2, Y8 // Y2 >= 0
	VCMPPD   $0x12, Y7, Y2, Y9 // Y2 <= MaxFloat64
	VANDPD   Y8, Y9, Y8
	VANDPD   Y8, Y5, Y5
	VCMPPD   $0x1d, Y6, Y3, Y8
	VCMPPD   $0x12, Y7, Y3, Y9
	VANDPD   Y8, Y9, Y8
	VANDPD   Y8, Y5, Y5
	ADDQ     $32, SI
	ADDQ     $64, DI
	SUBQ     $8, CX
	JNZ      loop

reduce:
	MOVL         lim+48(FP), AX
	DECL         AX
	MOVL         AX, X10
	VPBROADCASTD X10, Y10
	VPMAXUD      Y0, Y10, Y11
	VPCMPEQD     Y11, Y10, Y11
	VPAND        Y11, Y5, Y5
	VMOVMSKPS    Y5, AX
	VZEROUPPER
	CMPL         AX, $0xff
	SETEQ        ret+56(FP)
	RET
