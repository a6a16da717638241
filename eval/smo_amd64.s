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

// func gradUpdate8(yG *float64, fl *uint8, ki, kj *float32, n int, dai, daj float64, out *[32]uint64)
//
// yG[k] = yG[k] + (float64(ki[k])*dai + float64(kj[k])*daj), then per lane:
// if fl[k]&1 != 0 && -yG[k] >= max { max, idx = -yG[k], k }. Two sets of 8
// lanes take alternate blocks of 8 positions (two independent chains);
// out[0:16] receive the lanes' max (float64 bits), out[16:32] their index
// (-1 if none).
#define GU_BLOCK(off, MAX, IDX, POS) \
	VCVTPS2PD off*4(R9), Z9 \
	VCVTPS2PD off*4(R10), Z10 \
	VMULPD Z0, Z9, Z9 \
	VMULPD Z1, Z10, Z10 \
	VADDPD Z10, Z9, Z9 \
	VADDPD off*8(DI), Z9, Z9 \
	VMOVUPD Z9, off*8(DI) \
	VPMOVZXBQ off(R8), Z11 \
	VPTESTMQ Z6, Z11, K3 \
	VXORPD Z7, Z9, Z12 \
	VCMPPD $0x1d, MAX, Z12, K3, K4 \
	VMOVAPD Z12, K4, MAX \
	VMOVDQA64 POS, K4, IDX

TEXT ·gradUpdate8(SB), NOSPLIT, $0-64
	MOVQ yG+0(FP), DI
	MOVQ fl+8(FP), R8
	MOVQ ki+16(FP), R9
	MOVQ kj+24(FP), R10
	MOVQ n+32(FP), CX
	MOVQ out+56(FP), R11
	VBROADCASTSD dai+40(FP), Z0
	VBROADCASTSD daj+48(FP), Z1
	MOVQ $0xFFF0000000000000, AX // -Inf
	VPBROADCASTQ AX, Z2          // lane max, even blocks
	VMOVAPD Z2, Z13              // lane max, odd blocks
	VPTERNLOGQ $0xff, Z3, Z3, Z3 // lane index: -1
	VMOVDQA64 Z3, Z14
	VMOVDQU64 lanes8<>(SB), Z4   // positions of the even block's lanes
	MOVQ $8, AX
	VPBROADCASTQ AX, Z5
	VPADDQ Z5, Z4, Z15           // positions of the odd block's lanes
	VPADDQ Z5, Z5, Z5            // 16
	MOVQ $1, AX                  // inUp
	VPBROADCASTQ AX, Z6
	MOVQ $0x8000000000000000, AX // sign bit
	VPBROADCASTQ AX, Z7

gu_loop2:
	CMPQ CX, $16
	JLT  gu_tail
	GU_BLOCK(0, Z2, Z3, Z4)
	GU_BLOCK(8, Z13, Z14, Z15)
	VPADDQ Z5, Z4, Z4
	VPADDQ Z5, Z15, Z15
	ADDQ $128, DI
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $16, R8
	SUBQ $16, CX
	JMP  gu_loop2

gu_tail:
	CMPQ CX, $8
	JLT  gu_done
	GU_BLOCK(0, Z2, Z3, Z4)

gu_done:
	VMOVDQU64 Z2, (R11)
	VMOVDQU64 Z13, 64(R11)
	VMOVDQU64 Z3, 128(R11)
	VMOVDQU64 Z14, 192(R11)
	VZEROUPPER
	RET

// func wss2x8(yG *float64, fl *uint8, ki *float32, n int, gmax float64, out *[48]uint64)
//
// Per lane, over positions with fl&2 != 0 (inLow): max2 = max(yG) (>=); with
// d = gmax + yG > 0: q = 2 - 2*float64(ki[k]); obj = -(d*d)/(q > 0 ? q : 1e-12);
// if obj <= min { min, idx = obj, position }. Two sets of 8 lanes take
// alternate blocks; out[0:16] the lanes' max2, out[16:32] their min
// objective, out[32:48] its index (-1 if none).
#define WS_BLOCK(off, MAX2, MIN, IDX, POS, skip) \
	VPMOVZXBQ off(R8), Z11 \
	VPTESTMQ Z6, Z11, K3 \
	VMOVUPD off*8(DI), Z9 \
	VCMPPD $0x1d, MAX2, Z9, K3, K4 \
	VMOVAPD Z9, K4, MAX2 \
	VADDPD Z9, Z0, Z10 \
	VCMPPD $0x1e, Z15, Z10, K3, K5 \
	KORTESTW K5, K5 \
	JZ   skip \
	VCVTPS2PD off*4(R9), Z12 \
	VMULPD Z13, Z12, Z12 \
	VSUBPD Z12, Z13, Z12 \
	VCMPPD $0x1e, Z15, Z12, K6 \
	VMOVAPD Z14, Z11 \
	VMOVAPD Z12, K6, Z11 \
	VMULPD Z10, Z10, Z10 \
	VXORPD Z7, Z10, Z10 \
	VDIVPD Z11, Z10, Z10 \
	VCMPPD $0x12, MIN, Z10, K5, K7 \
	VMOVAPD Z10, K7, MIN \
	VMOVDQA64 POS, K7, IDX \
skip:

TEXT ·wss2x8(SB), NOSPLIT, $0-48
	MOVQ yG+0(FP), DI
	MOVQ fl+8(FP), R8
	MOVQ ki+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ out+40(FP), R11
	VBROADCASTSD gmax+32(FP), Z0
	MOVQ $0xFFF0000000000000, AX // -Inf
	VPBROADCASTQ AX, Z1          // lane max2, even blocks
	VMOVAPD Z1, Z16              // odd blocks
	MOVQ $0x7FF0000000000000, AX // +Inf
	VPBROADCASTQ AX, Z2          // lane min objective, even blocks
	VMOVAPD Z2, Z17              // odd blocks
	VPTERNLOGQ $0xff, Z3, Z3, Z3 // lane index: -1
	VMOVDQA64 Z3, Z18
	VMOVDQU64 lanes8<>(SB), Z4
	MOVQ $8, AX
	VPBROADCASTQ AX, Z5
	VPADDQ Z5, Z4, Z19
	VPADDQ Z5, Z5, Z5            // 16
	MOVQ $2, AX                  // inLow
	VPBROADCASTQ AX, Z6
	MOVQ $0x8000000000000000, AX
	VPBROADCASTQ AX, Z7
	MOVQ $0x4000000000000000, AX // 2.0
	VPBROADCASTQ AX, Z13
	MOVQ $0x3D719799812DEA11, AX // 1e-12 (smoTau)
	VPBROADCASTQ AX, Z14
	VXORPD Z15, Z15, Z15         // 0.0

ws_loop2:
	CMPQ CX, $16
	JLT  ws_tail
	WS_BLOCK(0, Z1, Z2, Z3, Z4, ws_skip0)
	WS_BLOCK(8, Z16, Z17, Z18, Z19, ws_skip1)
	VPADDQ Z5, Z4, Z4
	VPADDQ Z5, Z19, Z19
	ADDQ $128, DI
	ADDQ $64, R9
	ADDQ $16, R8
	SUBQ $16, CX
	JMP  ws_loop2

ws_tail:
	CMPQ CX, $8
	JLT  ws_done
	WS_BLOCK(0, Z1, Z2, Z3, Z4, ws_skip2)

ws_done:
	VMOVDQU64 Z1, (R11)
	VMOVDQU64 Z16, 64(R11)
	VMOVDQU64 Z2, 128(R11)
	VMOVDQU64 Z17, 192(R11)
	VMOVDQU64 Z3, 256(R11)
	VMOVDQU64 Z18, 320(R11)
	VZEROUPPER
	RET

// func expScaled8(dst, src *float64, n int, scale float64) (special bool)
//
// dst[k] = exp(scale*src[k]) for k < n (n a multiple of 8), lane by lane
// with the instructions of math.Exp's amd64 FMA path (math/exp_amd64.s),
// so that every value has the bits math.Exp gives. special reports a value
// of scale*src[k] outside [-700, Overflow] or NaN: math.Exp takes other
// paths there (denormal results, overflow, non-finite input), and the
// caller recomputes those elements with math.Exp.
TEXT ·expScaled8(SB), NOSPLIT, $0-33
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD scale+24(FP), Z0
	MOVQ $0x3ff71547652b82fe, AX // LOG2E
	VPBROADCASTQ AX, Z16
	MOVQ $0x3fe62e42fefa3000, AX // LN2U
	VPBROADCASTQ AX, Z17
	MOVQ $0x3d53de6af278ece6, AX // LN2L
	VPBROADCASTQ AX, Z18
	MOVQ $0x3fb0000000000000, AX // 0.0625
	VPBROADCASTQ AX, Z19
	MOVQ $0x3efa01a01a01a01a, AX // 1/8!
	VPBROADCASTQ AX, Z20
	MOVQ $0x3f2a01a01a01a01a, AX // 1/7!
	VPBROADCASTQ AX, Z21
	MOVQ $0x3f56c16c16c16c17, AX // 1/6!
	VPBROADCASTQ AX, Z22
	MOVQ $0x3f81111111111111, AX // 1/5!
	VPBROADCASTQ AX, Z23
	MOVQ $0x3fa5555555555555, AX // 1/4!
	VPBROADCASTQ AX, Z24
	MOVQ $0x3fc5555555555555, AX // 1/3!
	VPBROADCASTQ AX, Z25
	MOVQ $0x3fe0000000000000, AX // 0.5
	VPBROADCASTQ AX, Z26
	MOVQ $0x3ff0000000000000, AX // 1.0
	VPBROADCASTQ AX, Z27
	MOVQ $0x4000000000000000, AX // 2.0
	VPBROADCASTQ AX, Z28
	MOVQ $0x40862e42fefa39ef, AX // Overflow
	VPBROADCASTQ AX, Z29
	MOVQ $0xc085e00000000000, AX // -700
	VPBROADCASTQ AX, Z30
	MOVQ $1023, AX
	VPBROADCASTQ AX, Z31
	XORQ R8, R8

ex_loop:
	CMPQ CX, $8
	JLT  ex_done
	VMULPD (SI), Z0, Z1            // x
	VCMPPD $0x06, Z29, Z1, K1      // !(x <= Overflow): NLE_US, NaN too
	VCMPPD $0x11, Z30, Z1, K2      // x < -700 (LT_OQ)
	KORW K1, K2, K1
	KMOVW K1, AX
	ORQ  AX, R8
	VMULPD Z16, Z1, Z2             // LOG2E*x
	VCVTPD2DQ Z2, Y3               // exponent, rounded to nearest
	VCVTDQ2PD Y3, Z2
	VFNMADD231PD Z17, Z2, Z1       // x -= e*LN2U (fused)
	VFNMADD231PD Z18, Z2, Z1       // x -= e*LN2L (fused)
	VMULPD Z19, Z1, Z1             // x *= 0.0625
	VMOVAPD Z20, Z4
	VFMADD213PD Z21, Z1, Z4        // Horner, fused as math's FMA path
	VFMADD213PD Z22, Z1, Z4
	VFMADD213PD Z23, Z1, Z4
	VFMADD213PD Z24, Z1, Z4
	VFMADD213PD Z25, Z1, Z4
	VFMADD213PD Z26, Z1, Z4
	VFMADD213PD Z27, Z1, Z4
	VMULPD Z4, Z1, Z1
	VADDPD Z28, Z1, Z4             // four squarings: x = x*(x+2)
	VMULPD Z4, Z1, Z1
	VADDPD Z28, Z1, Z4
	VMULPD Z4, Z1, Z1
	VADDPD Z28, Z1, Z4
	VMULPD Z4, Z1, Z1
	VADDPD Z28, Z1, Z4
	VFMADD213PD Z27, Z4, Z1        // x = x*(x+2) + 1
	VPMOVSXDQ Y3, Z5               // 2^e
	VPADDQ Z31, Z5, Z5
	VPSLLQ $52, Z5, Z5
	VMULPD Z5, Z1, Z1
	VMOVUPD Z1, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $8, CX
	JMP  ex_loop

ex_done:
	TESTQ R8, R8
	SETNE special+32(FP)
	VZEROUPPER
	RET
