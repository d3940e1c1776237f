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
// A group of eight one-byte gaps is decoded at once into R14, a gap a
// byte, and set with no check per gap, R12 counting them. Gaps around a
// bad one are set one by one, R14 then pointing past the bad byte, R11 at
// the gap being read and R12 holding its gene until it is known to rise.
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
	SUBQ $1016, R13 // eight gaps of at most 127 genes

group:
	MOVQ DI, R14 // what is left, gap by gap, unless a group fits
	LEAQ 8(SI), AX
	CMPQ AX, DI
	JHI  single
	CMPQ R8, R13
	JGE  single

	// A code is bad if it is 0x7f (a repeated gene) or above (longer
	// than a byte): (b & 0x7f) + 1 carries into bit 7 from 0x7f alone,
	// and never out of the byte.
	MOVQ (SI), R14
	MOVQ $0x7f7f7f7f7f7f7f7f, R11
	MOVQ R14, AX
	ANDQ R11, AX
	MOVQ $0x0101010101010101, R12
	ADDQ R12, AX
	ORQ  R14, AX
	MOVQ $0x8080808080808080, CX
	ANDQ CX, AX
	JNZ  bad

	// The gaps (gapOf), bytewise: with h = b >> 1 < 64, an even code b
	// is the gap 64 + h = h ^ 0x40 and an odd one 63 − h = h ^ 0x3f.
	ANDQ   R14, R12 // 1 in the bytes of odd codes
	IMUL3Q $0x7f, R12, R12
	SHRQ   $1, R14
	ANDQ   R11, R14
	XORQ   R12, R14
	MOVQ   $0x4040404040404040, R12
	XORQ   R12, R14
	ADDQ   $8, SI
	MOVL   $8, R12

fast:
	MOVBLZX R14B, AX
	SHRQ    $8, R14
	ADDL    AX, R8
	SETGENE(fastdrop)

fastnext:
	DECL R12
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
	JB   code
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

code:
	MOVL  AX, CX // gapOf
	SHRL  $1, AX
	ANDL  $1, CX
	NEGL  CX
	XORL  CX, AX
	ADDL  $64, AX
	TESTL AX, AX
	JLE   stoplong // a repeated or falling gene
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
