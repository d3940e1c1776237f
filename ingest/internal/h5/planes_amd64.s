//go:build amd64 && !purego

#include "textflag.h"

// Each kernel takes eight elements a step: VPMOVZXBD widens eight bytes of
// a plane to eight 32-bit lanes in Y0; a second plane's are shifted up a
// byte and ORed in; VCVTDQ2PD converts four lanes at a time to float64.
// DI is dst, SI and DX the planes, CX the elements left in whole steps.
// The planes are at least as long as dst; only whole steps are done.

#define LOAD1 \
	VPMOVZXBD (SI), Y0; \
	ADDQ      $8, SI

#define LOAD2 \
	LOAD1; \
	VPMOVZXBD (DX), Y1; \
	VPSLLD    $8, Y1, Y1; \
	VPOR      Y1, Y0, Y0; \
	ADDQ      $8, DX

#define STOREF64 \
	VCVTDQ2PD    X0, Y1; \
	VEXTRACTI128 $1, Y0, X2; \
	VCVTDQ2PD    X2, Y3; \
	VMOVUPD      Y1, (DI); \
	VMOVUPD      Y3, 32(DI); \
	ADDQ         $64, DI

#define STOREI32 \
	VMOVDQU Y0, (DI); \
	ADDQ    $32, DI

// func widen1Float64(dst []float64, p0 []byte) int
TEXT ·widen1Float64(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ p0_base+24(FP), SI
	ANDQ $-8, CX
	MOVQ CX, ret+48(FP)
	JZ   done1f

loop1f:
	LOAD1
	STOREF64
	SUBQ $8, CX
	JNZ  loop1f
	VZEROUPPER

done1f:
	RET

// func widen2Float64(dst []float64, p0, p1 []byte) int
TEXT ·widen2Float64(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ p0_base+24(FP), SI
	MOVQ p1_base+48(FP), DX
	ANDQ $-8, CX
	MOVQ CX, ret+72(FP)
	JZ   done2f

loop2f:
	LOAD2
	STOREF64
	SUBQ $8, CX
	JNZ  loop2f
	VZEROUPPER

done2f:
	RET

// func widen1Int32(dst []int32, p0 []byte) int
TEXT ·widen1Int32(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ p0_base+24(FP), SI
	ANDQ $-8, CX
	MOVQ CX, ret+48(FP)
	JZ   done1i

loop1i:
	LOAD1
	STOREI32
	SUBQ $8, CX
	JNZ  loop1i
	VZEROUPPER

done1i:
	RET

// func widen2Int32(dst []int32, p0, p1 []byte) int
TEXT ·widen2Int32(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ p0_base+24(FP), SI
	MOVQ p1_base+48(FP), DX
	ANDQ $-8, CX
	MOVQ CX, ret+72(FP)
	JZ   done2i

loop2i:
	LOAD2
	STOREI32
	SUBQ $8, CX
	JNZ  loop2i
	VZEROUPPER

done2i:
	RET
