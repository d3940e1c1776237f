//go:build amd64 && !purego

#include "textflag.h"

DATA prevLanes<>+0(SB)/4, $7
DATA prevLanes<>+4(SB)/4, $0
DATA prevLanes<>+8(SB)/4, $1
DATA prevLanes<>+12(SB)/4, $2
DATA prevLanes<>+16(SB)/4, $3
DATA prevLanes<>+20(SB)/4, $4
DATA prevLanes<>+24(SB)/4, $5
DATA prevLanes<>+28(SB)/4, $6
GLOBL prevLanes<>(SB), RODATA|NOPTR, $32

// COUNT(off) counts the gene of the group's entry off.
#define COUNT(off) \
	MOVL off*4(DI)(R8*4), AX; \
	INCL (R10)(AX*4)

// func addCountedAVX2(val []float64, gene []int32, thr float64, cpg []int32, out []byte, r *gapRun) int
//
// SI, DI are val and gene, R8 the entry and R9 their number; R10, R11
// cpg and its length; R12, R14 out and its length, R13 the bytes
// written; BX the genes recorded and DX the last one. Y0 holds thr, Y7
// len(cpg)−1, Y6 zero and Y9 gapBias. A group of eight entries whose
// values are all above thr, genes in cpg and gaps of one byte is recorded
// at once: the gaps as bytes, the counts one by one. Otherwise R15
// entries, up to the first that is not, are recorded one at a time.
TEXT ·addCountedAVX2(SB), NOSPLIT, $0-120
	MOVQ         val_base+0(FP), SI
	MOVQ         val_len+8(FP), R9
	MOVQ         gene_base+24(FP), DI
	VBROADCASTSD thr+48(FP), Y0
	MOVQ         cpg_base+56(FP), R10
	MOVQ         cpg_len+64(FP), R11
	MOVQ         out_base+80(FP), R12
	MOVQ         out_len+88(FP), R14
	MOVQ         r+104(FP), AX
	MOVL         0(AX), DX
	MOVQ         8(AX), R13
	MOVQ         16(AX), BX
	XORQ         R8, R8
	TESTQ        R11, R11
	JZ           done // no gene to count
	LEAQ         -1(R11), AX
	VMOVQ        AX, X7
	VPBROADCASTD X7, Y7
	VPXOR        Y6, Y6, Y6
	VMOVDQU      prevLanes<>(SB), Y5
	MOVL         $64, AX // gapBias
	VMOVD        AX, X9
	VPBROADCASTD X9, Y9

group:
	LEAQ 8(R8), AX
	CMPQ AX, R9
	JHI  tail
	LEAQ 8(R13), AX
	CMPQ AX, R14
	JHI  done

	VMOVUPD   (SI)(R8*8), Y1
	VMOVUPD   32(SI)(R8*8), Y2
	VCMPPD    $0x1e, Y0, Y1, Y1 // val > thr
	VCMPPD    $0x1e, Y0, Y2, Y2
	VMOVMSKPD Y1, AX
	VMOVMSKPD Y2, CX
	SHLL      $4, CX
	ORL       CX, AX

	VMOVDQU   (DI)(R8*4), Y3
	VPMAXUD   Y3, Y7, Y4 // gene ≤ len(cpg)−1, unsigned
	VPCMPEQD  Y4, Y7, Y4
	VMOVMSKPS Y4, CX
	ANDL      CX, AX

	// Each gene less the one before: the group's first less DX.
	VPERMD    Y3, Y5, Y4
	VMOVQ     DX, X8
	VPBLENDD  $1, Y8, Y4, Y4
	VPSUBD    Y4, Y3, Y4
	VPSUBD    Y9, Y4, Y4 // gapCode: less gapBias, zigzag
	VPSLLD    $1, Y4, Y8
	VPSRAD    $31, Y4, Y4
	VPXOR     Y4, Y8, Y4
	VPSRLD    $7, Y4, Y8 // one byte
	VPCMPEQD  Y6, Y8, Y8
	VMOVMSKPS Y8, CX
	ANDL      CX, AX
	CMPL      AX, $0xff
	JNE       bad

	VPACKUSDW    Y4, Y4, Y4
	VPACKUSWB    Y4, Y4, Y4
	VEXTRACTI128 $1, Y4, X8
	VPUNPCKLDQ   X8, X4, X4
	VMOVQ        X4, (R12)(R13*1)
	ADDQ         $8, R13
	COUNT(0)
	COUNT(1)
	COUNT(2)
	COUNT(3)
	COUNT(4)
	COUNT(5)
	COUNT(6)
	COUNT(7)
	MOVL 28(DI)(R8*4), DX
	ADDQ $8, BX
	ADDQ $8, R8
	JMP  group

bad:
	NOTL AX
	BSFL AX, R15 // the first entry not to be recorded at once
	INCL R15
	JMP  one

tail:
	MOVQ $8, R15

one:
	CMPQ R8, R9
	JAE  done
	LEAQ 5(R13), AX // the longest gap
	CMPQ AX, R14
	JHI  done
	VMOVSD  (SI)(R8*8), X1
	VUCOMISD X0, X1
	JLS     next
	MOVL    (DI)(R8*4), AX
	CMPQ    AX, R11
	JAE     done // left to the caller, which fails on it
	INCL    (R10)(AX*4)
	MOVL    AX, CX
	SUBL    DX, CX
	SUBL    $64, CX // gapCode
	MOVL    AX, DX
	LEAL    (CX)(CX*1), AX
	SARL    $31, CX
	XORL    CX, AX
	INCQ    BX

varint:
	CMPL AX, $0x80
	JB   last
	MOVL AX, CX
	ORL  $0x80, CX
	MOVB CX, (R12)(R13*1)
	INCQ R13
	SHRL $7, AX
	JMP  varint

last:
	MOVB AX, (R12)(R13*1)
	INCQ R13

next:
	INCQ R8
	DECQ R15
	JNZ  one
	JMP  group

done:
	MOVQ r+104(FP), AX
	MOVL DX, 0(AX)
	MOVQ R13, 8(AX)
	MOVQ BX, 16(AX)
	MOVQ R8, ret+112(FP)
	VZEROUPPER
	RET
