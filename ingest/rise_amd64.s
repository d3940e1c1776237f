//go:build amd64 && !purego

#include "textflag.h"

DATA zero<>+0(SB)/8, $0
GLOBL zero<>(SB), RODATA|NOPTR, $8

// SETGENE sets gene R8 in the row (see riseBytes), or counts it dropped
// and goes to skip. It uses AX and CX.
#define SETGENE(skip) \
	MOVL    (DX)(R8*4), AX; \
	TESTL   AX, AX; \
	JS      skip; \
	MOVL    AX, CX; \
	SHRL    $6, CX; \
	CMPQ    CX, words_len+40(FP); \
	JAE     corrupt; \
	CMPL    CX, R9; \
	CMOVQNE zero<>(SB), R10; \
	BTSQ    AX, R10; \
	MOVQ    R10, (BX)(CX*8); \
	MOVL    CX, R9

// func riseBytes(gaps []byte, s *riseState, words []uint64, geneMap []int32) int
//
// SI walks gaps up to DI; R8 is s.last, R9 s.word, R10 s.acc; BX holds
// words, DX geneMap, and R13 the highest s.last a group may start from.
// A group of eight one-byte gaps is set with no check per gap, R14
// counting them. Gaps around a bad one are set one by one, R14 then
// pointing past the bad byte, R11 at the gap being read and R12 holding
// its gene until it is known to rise.
TEXT ·riseBytes(SB), NOSPLIT, $0-88
	MOVQ gaps_base+0(FP), SI
	MOVQ gaps_len+8(FP), DI
	ADDQ SI, DI
	MOVQ s+24(FP), AX
	MOVL 0(AX), R8
	MOVL 4(AX), R9
	MOVQ 8(AX), R10
	MOVQ words_base+32(FP), BX
	MOVQ geneMap_base+56(FP), DX
	MOVQ geneMap_len+64(FP), R13
	SUBQ $504, R13 // eight gaps of at most 63 genes

group:
	MOVQ DI, R14 // what is left, gap by gap, unless a group fits
	LEAQ 8(SI), AX
	CMPQ AX, DI
	JHI  single
	CMPQ R8, R13
	JGE  single

	// A gap is bad if its bit 0 or bit 7 is set, or it is zero: the
	// borrow of v − 0x01…01 marks the first zero byte exactly, and only
	// bytes above it wrongly.
	MOVQ (SI), R14
	MOVQ $0x8181818181818181, AX
	ANDQ R14, AX
	MOVQ $0xfefefefefefefeff, CX
	ADDQ R14, CX
	NOTQ R14
	ANDQ R14, CX
	MOVQ $0x8080808080808080, R14
	ANDQ R14, CX
	ORQ  CX, AX
	JNZ  bad
	MOVL $8, R14

fast:
	MOVBLZX (SI), AX
	SHRL    $1, AX
	ADDL    AX, R8
	SETGENE(fastdrop)

fastnext:
	INCQ SI
	DECL R14
	JNZ  fast
	JMP  group

fastdrop:
	MOVQ s+24(FP), AX
	INCQ 16(AX)
	JMP  fastnext

bad:
	BSFQ AX, R14 // the bad byte's bit
	SHRQ $3, R14
	LEAQ 1(SI)(R14*1), R14

single:
	CMPQ SI, DI
	JAE  done
	CMPQ SI, R14
	JAE  group
	MOVQ SI, R11
	MOVBLZX (SI), AX
	INCQ SI
	CMPL AX, $0x80
	JB   zigzag
	CMPQ SI, DI // a gap of two bytes
	JAE  stop
	MOVBLZX (SI), CX
	CMPL CX, $0x80
	JAE  stop // longer ones are left to the caller
	INCQ SI
	SHLL $7, CX
	ANDL $0x7f, AX
	ORL  CX, AX
	MOVQ s+24(FP), CX
	INCQ 24(CX)

zigzag:
	TESTL $1, AX
	JNZ   stoplong // a negative gap
	SHRL  $1, AX
	JZ    stoplong // a repeated gene
	LEAL  (R8)(AX*1), R12
	CMPQ  R12, geneMap_len+64(FP)
	JAE   stoplong
	MOVL  R12, R8
	SETGENE(singledrop)
	JMP   single

singledrop:
	MOVQ s+24(FP), AX
	INCQ 16(AX)
	JMP  single

stoplong:
	// Undo the count of a two-byte gap left unread.
	MOVQ SI, AX
	SUBQ R11, AX
	CMPQ AX, $2
	JNE  stop
	MOVQ s+24(FP), CX
	DECQ 24(CX)

stop:
	MOVQ R11, SI

done:
	MOVQ s+24(FP), AX
	MOVL R8, 0(AX)
	MOVL R9, 4(AX)
	MOVQ R10, 8(AX)
	SUBQ gaps_base+0(FP), SI
	MOVQ SI, ret+80(FP)
	RET

corrupt:
	MOVQ $-1, ret+80(FP)
	RET
