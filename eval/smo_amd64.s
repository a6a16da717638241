//go:build amd64 && !purego

#include "textflag.h"

DATA lanes8<>+0(SB)/8, $0
DATA lanes8<>+8(SB)/8, $1
DATA lanes8<>+16(SB)/8, $2
DATA lanes8<>+24(SB)/8, $3
DATA lanes8<>+32(SB)/8, $4
DATA lanes8<>+40(SB)/8, $5
DATA lanes8<>+48(SB)/8, $6
DATA lanes8<>+56(SB)/8, $7
GLOBL lanes8<>(SB), RODATA|NOPTR, $64

// LAST_ARG(CMP, VA, VB, IA, IB) reduces two sets of 8 lanes of (value,
// index) pairs, each the last index attaining its lane's extremum, to the
// largest index whose value equals the extremum over all lanes (-1 if no
// lane has one) in AX. CMP is VMAXPD or VMINPD; values are never NaN. Uses
// Z20-Z26 and K1-K2.
#define LAST_ARG(CMP, VA, VB, IA, IB) \
	CMP VB, VA, Z20 \
	VEXTRACTF64X4 $1, Z20, Y21 \
	CMP Y21, Y20, Y21 \
	VEXTRACTF32X4 $1, Y21, X22 \
	CMP X22, X21, X22 \
	VPERMILPD $1, X22, X21 \
	CMP X21, X22, X21 \
	VBROADCASTSD X21, Z21 \
	VCMPPD $0x00, Z21, VA, K1 \
	VCMPPD $0x00, Z21, VB, K2 \
	VPTERNLOGQ $0xff, Z22, Z22, Z22 \
	VMOVDQA64 Z22, Z23 \
	VMOVDQA64 IA, K1, Z22 \
	VMOVDQA64 IB, K2, Z23 \
	VPMAXSQ Z23, Z22, Z22 \
	VEXTRACTI64X4 $1, Z22, Y23 \
	VPMAXSQ Y23, Y22, Y23 \
	VEXTRACTI32X4 $1, Y23, X24 \
	VPMAXSQ X24, X23, X24 \
	VPSHUFD $0x4e, X24, X25 \
	VPMAXSQ X25, X24, X25 \
	VMOVQ X25, AX

// func gradUpdate8(yG *float64, fl *uint8, ki, kj *float32, n int, dai, daj float64) (idx int)
//
// yG[k] = yG[k] + (float64(ki[k])*dai + float64(kj[k])*daj), then per lane:
// if fl[k]&1 != 0 && yG[k] <= min { min, idx = yG[k], k } (the scalar
// loop's -yG[k] >= max with max = -min: the same comparisons, the sign
// flips exact). Two sets of 8 lanes take alternate blocks of 8 positions
// (two independent chains); idx is the last position attaining the min over
// all lanes (-1 if none).
#define GU_BLOCK(off, KM, MIN, IDX, POS) \
	VCVTPS2PD off*4(R9), Z9 \
	VCVTPS2PD off*4(R10), Z10 \
	VMULPD Z0, Z9, Z9 \
	VMULPD Z1, Z10, Z10 \
	VADDPD Z10, Z9, Z9 \
	VADDPD off*8(DI), Z9, Z9 \
	VMOVUPD Z9, off*8(DI) \
	VCMPPD $0x12, MIN, Z9, KM, K4 \
	VMOVAPD Z9, K4, MIN \
	VMOVDQA64 POS, K4, IDX

TEXT ·gradUpdate8(SB), NOSPLIT, $0-64
	MOVQ yG+0(FP), DI
	MOVQ fl+8(FP), R8
	MOVQ ki+16(FP), R9
	MOVQ kj+24(FP), R10
	MOVQ n+32(FP), CX
	VBROADCASTSD dai+40(FP), Z0
	VBROADCASTSD daj+48(FP), Z1
	MOVQ $0x7FF0000000000000, AX // +Inf
	VPBROADCASTQ AX, Z2          // lane min, even blocks
	VMOVAPD Z2, Z13              // lane min, odd blocks
	VPTERNLOGQ $0xff, Z3, Z3, Z3 // lane index: -1
	VMOVDQA64 Z3, Z14
	VMOVDQU64 lanes8<>(SB), Z4   // positions of the even block's lanes
	MOVQ $8, AX
	VPBROADCASTQ AX, Z8          // 8
	VPADDQ Z8, Z4, Z15           // positions of the odd block's lanes
	VPADDQ Z8, Z8, Z5            // 16
	MOVQ $0x0101010101010101, AX // inUp, in every byte
	VPBROADCASTQ AX, X6
	MOVQ $1, AX                  // inUp, in every quadword (tail)
	VPBROADCASTQ AX, Z7

gu_loop4:
	CMPQ CX, $32
	JLT  gu_tail
	VMOVDQU (R8), X11
	VPTESTMB X6, X11, K1         // flags of positions 0..15
	KSHIFTRW $8, K1, K2
	VMOVDQU 16(R8), X11
	VPTESTMB X6, X11, K5         // 16..31
	KSHIFTRW $8, K5, K6
	GU_BLOCK(0, K1, Z2, Z3, Z4)
	GU_BLOCK(8, K2, Z13, Z14, Z15)
	VPADDQ Z5, Z4, Z4
	VPADDQ Z5, Z15, Z15
	GU_BLOCK(16, K5, Z2, Z3, Z4)
	GU_BLOCK(24, K6, Z13, Z14, Z15)
	VPADDQ Z5, Z4, Z4
	VPADDQ Z5, Z15, Z15
	ADDQ $256, DI
	ADDQ $128, R9
	ADDQ $128, R10
	ADDQ $32, R8
	SUBQ $32, CX
	JMP  gu_loop4

gu_tail:
	// One block at a time, on the even set: each lane still sees its
	// positions in increasing order.
	CMPQ CX, $8
	JLT  gu_done
	VPMOVZXBQ (R8), Z11
	VPTESTMQ Z7, Z11, K1
	GU_BLOCK(0, K1, Z2, Z3, Z4)
	VPADDQ Z8, Z4, Z4
	ADDQ $64, DI
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $8, R8
	SUBQ $8, CX
	JMP  gu_tail

gu_done:
	LAST_ARG(VMINPD, Z2, Z13, Z3, Z14)
	MOVQ AX, idx+56(FP)
	VZEROUPPER
	RET

// func wss2x8(yG *float64, fl *uint8, ki *float32, n int, gmax float64) (max2 float64, idx int)
//
// Per lane, over positions with fl&2 != 0 (inLow): max2 = max(yG) (VMAXPD,
// merge-masked: only the value is wanted, yG is never NaN, and which zero
// it keeps does not matter to the comparisons it feeds); with
// d = gmax + yG > 0: q = 2 - 2*float64(ki[k]) (one fused negated
// multiply-add: 2*ki[k] is exact, so it rounds once as the scalar
// subtraction does); r = (d*d)/(q > 0 ? q : 1e-12); if r >= p { p, idx = r,
// position } (the scalar loop's obj = -r <= min with min = -p). Two sets of
// 8 lanes take alternate blocks; max2 is the max over all lanes (-Inf if
// none), idx the last position attaining the max of r over all lanes (-1 if
// none).
//
// Every block with some d > 0 divides. Skipping the division where no lane
// can reach its p (an exact filter, RN(d*d) against RN(p(1 - 2^-40)*q);
// git log -S'division filter' -- eval/smo_amd64.s) was slower on real
// embeddings (NCI1 protocol: this kernel 6.9 s -> 12.7 s of CPU): the 16
// lanes' running maxima improve in about a quarter of the blocks, so the
// skip branch, resolved late, mispredicts.
#define WS_BLOCK(off, KM, MAX2, P, IDX, POS, skip) \
	VMOVUPD off*8(DI), Z9 \
	VMAXPD Z9, MAX2, KM, MAX2 \
	VADDPD Z9, Z0, Z10 \
	VCMPPD $0x1e, Z15, Z10, KM, K5 \
	KORTESTW K5, K5 \
	JZ   skip \
	VCVTPS2PD off*4(R9), Z12 \
	VFNMADD213PD Z13, Z13, Z12 \
	VCMPPD $0x1e, Z15, Z12, K6 \
	VBLENDMPD Z12, Z14, K6, Z11 \
	VMULPD Z10, Z10, Z10 \
	VDIVPD Z11, Z10, Z10 \
	VCMPPD $0x1d, P, Z10, K5, K7 \
	VMOVAPD Z10, K7, P \
	VMOVDQA64 POS, K7, IDX \
skip:

TEXT ·wss2x8(SB), NOSPLIT, $0-56
	MOVQ yG+0(FP), DI
	MOVQ fl+8(FP), R8
	MOVQ ki+16(FP), R9
	MOVQ n+24(FP), CX
	VBROADCASTSD gmax+32(FP), Z0
	MOVQ $0xFFF0000000000000, AX // -Inf
	VPBROADCASTQ AX, Z1          // lane max2, even blocks
	VMOVAPD Z1, Z16              // odd blocks
	VMOVAPD Z1, Z2               // lane p, even blocks
	VMOVAPD Z1, Z17              // odd blocks
	VPTERNLOGQ $0xff, Z3, Z3, Z3 // lane index: -1
	VMOVDQA64 Z3, Z18
	VMOVDQU64 lanes8<>(SB), Z4
	MOVQ $8, AX
	VPBROADCASTQ AX, Z8          // 8
	VPADDQ Z8, Z4, Z19
	VPADDQ Z8, Z8, Z5            // 16
	MOVQ $0x0202020202020202, AX // inLow, in every byte
	VPBROADCASTQ AX, X6
	MOVQ $2, AX                  // inLow, in every quadword (tail)
	VPBROADCASTQ AX, Z7
	MOVQ $0x4000000000000000, AX // 2.0
	VPBROADCASTQ AX, Z13
	MOVQ $0x3D719799812DEA11, AX // 1e-12 (smoTau)
	VPBROADCASTQ AX, Z14
	VXORPD Z15, Z15, Z15         // 0.0

ws_loop4:
	CMPQ CX, $32
	JLT  ws_tail
	VMOVDQU (R8), X11
	VPTESTMB X6, X11, K1
	KSHIFTRW $8, K1, K2
	VMOVDQU 16(R8), X11
	VPTESTMB X6, X11, K3
	WS_BLOCK(0, K1, Z1, Z2, Z3, Z4, ws_skip0)
	WS_BLOCK(8, K2, Z16, Z17, Z18, Z19, ws_skip1)
	VPADDQ Z5, Z4, Z4
	VPADDQ Z5, Z19, Z19
	KSHIFTRW $8, K3, K2          // K4..K7 are the blocks' scratch
	WS_BLOCK(16, K3, Z1, Z2, Z3, Z4, ws_skip2)
	WS_BLOCK(24, K2, Z16, Z17, Z18, Z19, ws_skip3)
	VPADDQ Z5, Z4, Z4
	VPADDQ Z5, Z19, Z19
	ADDQ $256, DI
	ADDQ $128, R9
	ADDQ $32, R8
	SUBQ $32, CX
	JMP  ws_loop4

ws_tail:
	CMPQ CX, $8
	JLT  ws_done
	VPMOVZXBQ (R8), Z11
	VPTESTMQ Z7, Z11, K1
	WS_BLOCK(0, K1, Z1, Z2, Z3, Z4, ws_skip4)
	VPADDQ Z8, Z4, Z4
	ADDQ $64, DI
	ADDQ $32, R9
	ADDQ $8, R8
	SUBQ $8, CX
	JMP  ws_tail

ws_done:
	VMAXPD Z16, Z1, Z1
	VEXTRACTF64X4 $1, Z1, Y16
	VMAXPD Y16, Y1, Y16
	VEXTRACTF32X4 $1, Y16, X1
	VMAXPD X1, X16, X1
	VPERMILPD $1, X1, X16
	VMAXPD X16, X1, X1
	VMOVSD X1, max2+40(FP)
	LAST_ARG(VMAXPD, Z2, Z17, Z3, Z18)
	MOVQ AX, idx+48(FP)
	VZEROUPPER
	RET

// EXP_CONSTS loads math.Exp's constants (math/exp_amd64.s) into Z16-Z31:
// LOG2E, LN2U, LN2L, 0.0625, the Taylor coefficients 1/8! .. 1/3!, 0.5,
// 1.0, 2.0, Overflow, -700 and the exponent bias 1023.
#define EXP_CONSTS \
	MOVQ $0x3ff71547652b82fe, AX \
	VPBROADCASTQ AX, Z16 \
	MOVQ $0x3fe62e42fefa3000, AX \
	VPBROADCASTQ AX, Z17 \
	MOVQ $0x3d53de6af278ece6, AX \
	VPBROADCASTQ AX, Z18 \
	MOVQ $0x3fb0000000000000, AX \
	VPBROADCASTQ AX, Z19 \
	MOVQ $0x3efa01a01a01a01a, AX \
	VPBROADCASTQ AX, Z20 \
	MOVQ $0x3f2a01a01a01a01a, AX \
	VPBROADCASTQ AX, Z21 \
	MOVQ $0x3f56c16c16c16c17, AX \
	VPBROADCASTQ AX, Z22 \
	MOVQ $0x3f81111111111111, AX \
	VPBROADCASTQ AX, Z23 \
	MOVQ $0x3fa5555555555555, AX \
	VPBROADCASTQ AX, Z24 \
	MOVQ $0x3fc5555555555555, AX \
	VPBROADCASTQ AX, Z25 \
	MOVQ $0x3fe0000000000000, AX \
	VPBROADCASTQ AX, Z26 \
	MOVQ $0x3ff0000000000000, AX \
	VPBROADCASTQ AX, Z27 \
	MOVQ $0x4000000000000000, AX \
	VPBROADCASTQ AX, Z28 \
	MOVQ $0x40862e42fefa39ef, AX \
	VPBROADCASTQ AX, Z29 \
	MOVQ $0xc085e00000000000, AX \
	VPBROADCASTQ AX, Z30 \
	MOVQ $1023, AX \
	VPBROADCASTQ AX, Z31

// EXP_BODY sets Z1 = exp(Z1) lane by lane with the instructions of
// math.Exp's amd64 FMA path, and ORs into R8 the lanes whose argument is
// outside [-700, Overflow] or NaN (math.Exp takes other paths there), which
// it leaves in K1 and AX. Uses Z2-Z5, Y3, K2.
#define EXP_BODY \
	VCMPPD $0x06, Z29, Z1, K1 \
	VCMPPD $0x11, Z30, Z1, K2 \
	KORW K1, K2, K1 \
	KMOVW K1, AX \
	ORQ  AX, R8 \
	VMULPD Z16, Z1, Z2 \
	VCVTPD2DQ Z2, Y3 \
	VCVTDQ2PD Y3, Z2 \
	VFNMADD231PD Z17, Z2, Z1 \
	VFNMADD231PD Z18, Z2, Z1 \
	VMULPD Z19, Z1, Z1 \
	VMOVAPD Z20, Z4 \
	VFMADD213PD Z21, Z1, Z4 \
	VFMADD213PD Z22, Z1, Z4 \
	VFMADD213PD Z23, Z1, Z4 \
	VFMADD213PD Z24, Z1, Z4 \
	VFMADD213PD Z25, Z1, Z4 \
	VFMADD213PD Z26, Z1, Z4 \
	VFMADD213PD Z27, Z1, Z4 \
	VMULPD Z4, Z1, Z1 \
	VADDPD Z28, Z1, Z4 \
	VMULPD Z4, Z1, Z1 \
	VADDPD Z28, Z1, Z4 \
	VMULPD Z4, Z1, Z1 \
	VADDPD Z28, Z1, Z4 \
	VMULPD Z4, Z1, Z1 \
	VADDPD Z28, Z1, Z4 \
	VFMADD213PD Z27, Z4, Z1 \
	VPMOVSXDQ Y3, Z5 \
	VPADDQ Z31, Z5, Z5 \
	VPSLLQ $52, Z5, Z5 \
	VMULPD Z5, Z1, Z1

// func expScaled8(dst, src *float64, n int, scale float64, special *uint8) (any bool)
//
// dst[k] = exp(scale*src[k]) for k < n (n a multiple of 8), lane by lane
// with the instructions of math.Exp's amd64 FMA path (math/exp_amd64.s),
// so that every value has the bits math.Exp gives, except where
// scale*src[k] is outside [-700, Overflow] or NaN (math.Exp takes other
// paths there: denormal results, overflow, non-finite input): those lanes
// are not stored (so src[k] is still there when dst is src), their bits
// are set in special (one byte a block of 8, bit l for lane l), any
// reports one, and the caller computes them with math.Exp.
TEXT ·expScaled8(SB), NOSPLIT, $0-41
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD scale+24(FP), Z0
	MOVQ special+32(FP), R9
	EXP_CONSTS
	XORQ R8, R8

ex_loop:
	CMPQ CX, $8
	JLT  ex_done
	VMULPD (SI), Z0, Z1            // x
	EXP_BODY
	MOVB AX, (R9)                  // the block's special lanes (EXP_BODY)
	KNOTW K1, K3
	VMOVUPD Z1, K3, (DI)           // the others' results
	INCQ R9
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $8, CX
	JMP  ex_loop

ex_done:
	TESTQ R8, R8
	SETNE any+40(FP)
	VZEROUPPER
	RET

// GATHER16 loads Z2 with the 16 float32 values src[idx[k]] (SI = src, DX =
// idx); uses Z1 and K1.
#define GATHER16 \
	VMOVDQU32 (DX), Z1 \
	KXNORW K0, K0, K1 \
	VGATHERDPS (SI)(Z1*4), K1, Z2

// func gather16(dst, src *float32, idx *int32, n int)
//
// dst[k] = src[idx[k]] for k < n (n a multiple of 16).
TEXT ·gather16(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ idx+16(FP), DX
	MOVQ n+24(FP), CX

ga_loop:
	CMPQ CX, $16
	JLT  ga_done
	GATHER16
	VMOVUPS Z2, (DI)
	ADDQ $64, DI
	ADDQ $64, DX
	SUBQ $16, CX
	JMP  ga_loop

ga_done:
	VZEROUPPER
	RET

// func addScaledGather16(dst *float64, src *float32, idx *int32, n int, c float64)
//
// dst[k] = dst[k] + c*float64(src[idx[k]]) for k < n (n a multiple of 16):
// a multiply then an add, as the scalar loop.
TEXT ·addScaledGather16(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ idx+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSD c+32(FP), Z0

as_loop:
	CMPQ CX, $16
	JLT  as_done
	GATHER16
	VCVTPS2PD Y2, Z3
	VEXTRACTF64X4 $1, Z2, Y4
	VCVTPS2PD Y4, Z4
	VMULPD Z0, Z3, Z3
	VMULPD Z0, Z4, Z4
	VADDPD (DI), Z3, Z3
	VADDPD 64(DI), Z4, Z4
	VMOVUPD Z3, (DI)
	VMOVUPD Z4, 64(DI)
	ADDQ $128, DI
	ADDQ $64, DX
	SUBQ $16, CX
	JMP  as_loop

as_done:
	VZEROUPPER
	RET

// func addScaled16(dst *float64, src *float32, n int, c float64)
//
// dst[k] = dst[k] + c*float64(src[k]) for k < n (n a multiple of 16): a
// multiply then an add, as the scalar loop.
TEXT ·addScaled16(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD c+24(FP), Z0

ad_loop:
	CMPQ CX, $16
	JLT  ad_done
	VCVTPS2PD (SI), Z3
	VCVTPS2PD 32(SI), Z4
	VMULPD Z0, Z3, Z3
	VMULPD Z0, Z4, Z4
	VADDPD (DI), Z3, Z3
	VADDPD 64(DI), Z4, Z4
	VMOVUPD Z3, (DI)
	VMOVUPD Z4, 64(DI)
	ADDQ $128, DI
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  ad_loop

ad_done:
	VZEROUPPER
	RET

// func kernelRow8(dst *float32, drow *float64, idx *int, n int, scale float64) (special bool)
//
// dst[k] = float32(exp(scale*drow[idx[k]])) for k < n (n a multiple of 8),
// exp with math.Exp's bits as in expScaled8 and the conversion rounding to
// nearest as Go's; special reports an argument outside [-700, Overflow] or
// NaN (as expScaled8's special lanes), whose stored value the caller
// replaces, recomputing it from drow (dst never aliases drow).
TEXT ·kernelRow8(SB), NOSPLIT, $0-41
	MOVQ dst+0(FP), DI
	MOVQ drow+8(FP), SI
	MOVQ idx+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSD scale+32(FP), Z0
	EXP_CONSTS
	XORQ R8, R8

kr_loop:
	CMPQ CX, $8
	JLT  kr_done
	VMOVDQU64 (DX), Z6
	KXNORW K0, K0, K3
	VGATHERQPD (SI)(Z6*8), K3, Z7
	VMULPD Z7, Z0, Z1              // x = scale*d
	EXP_BODY
	VCVTPD2PS Z1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $64, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  kr_loop

kr_done:
	TESTQ R8, R8
	SETNE special+40(FP)
	VZEROUPPER
	RET
